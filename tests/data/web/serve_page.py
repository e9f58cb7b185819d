"""Serve page.html on 127.0.0.1 for tests/data/web/record_trace.sh.

``/`` is the page; ``/hero.png`` is an 800×600 PNG made here (no image library) and sent after
HERO_DELAY_S seconds, so the largest contentful paint comes late. Stops after MAX_REQUESTS or
LIFETIME_S seconds, whichever first (a bounded local server)."""

from __future__ import annotations

import http.server
import struct
import sys
import threading
import time
import zlib
from pathlib import Path

HERO_DELAY_S = 1.2
MAX_REQUESTS = 50
LIFETIME_S = 120


def png(width: int, height: int) -> bytes:
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter type 0 for each scanline
        for x in range(width):
            rows += bytes((x * 255 // width, y * 255 // height, 160))
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b"")


PAGE = (Path(__file__).parent / "page.html").read_bytes()
HERO = png(800, 600)


class Handler(http.server.BaseHTTPRequestHandler):
    served = 0

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        Handler.served += 1
        if self.path.split("?")[0] in ("/", "/index.html"):
            body, kind = PAGE, "text/html; charset=utf-8"
        elif self.path.startswith("/hero.png"):
            time.sleep(HERO_DELAY_S)
            body, kind = HERO, "image/png"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Timer(LIFETIME_S, srv.shutdown).start()
    t0 = time.time()
    while time.time() - t0 < LIFETIME_S and Handler.served < MAX_REQUESTS:
        srv.handle_request()
    srv.server_close()


if __name__ == "__main__":
    main()
