#!/bin/sh
# Records tests/data/web/webvitals.trace.json.gz and webvitals.devtoolslog.json.gz: Lighthouse's
# own gatherer (Tracing.start with Lighthouse's trace categories, over the DevTools protocol)
# loads page.html from a server on 127.0.0.1 in Debian's headless Chromium, unthrottled
# (--throttling-method=provided, so the observed values are the reported ones). Screenshot
# events are dropped afterwards to keep the file small (no metric here reads them).
# Needs: node + npm, /usr/bin/chromium (tests/setup_chromium.sh), lighthouse installed by
# `npm ci --prefix tests/web`. Run from the repository root: sh tests/data/web/record_trace.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
lh="$root/tests/web/node_modules/.bin/lighthouse"
port=${PORT:-8765}
out=$(mktemp -d)
profile=$(mktemp -d)
python3 "$here/serve_page.py" "$port" &
srv=$!
trap 'kill $srv 2>/dev/null || true; rm -rf "$out" "$profile"' EXIT
sleep 1
CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium} "$lh" "http://127.0.0.1:$port/" \
  -G="$out" --throttling-method=provided --only-categories=performance --quiet \
  --chrome-flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$profile"
python3 - "$out" "$here" <<'PY'
import gzip, json, sys
src, dst = sys.argv[1], sys.argv[2]
trace = json.load(open(f"{src}/defaultPass.trace.json"))
events = [e for e in trace["traceEvents"] if e.get("name") != "Screenshot"]
trace["traceEvents"] = events
with gzip.open(f"{dst}/webvitals.trace.json.gz", "wt", compresslevel=9) as f:
    json.dump(trace, f, separators=(",", ":"))
with gzip.open(f"{dst}/webvitals.devtoolslog.json.gz", "wt", compresslevel=9) as f:
    json.dump(json.load(open(f"{src}/defaultPass.devtoolslog.json")), f, separators=(",", ":"))
print(f"record_trace: {len(events)} events kept")
PY
