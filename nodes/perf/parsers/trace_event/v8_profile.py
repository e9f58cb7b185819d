"""V8 CPU profiles carried by ``P`` events (``Profile`` + ``ProfileChunk``) → sampled stacks."""

from __future__ import annotations

from nodes.perf.model import PerfData
from nodes.perf.parsers.trace_event.events import clean_str


class V8Profile:
    """V8 CPU profile samples carried by ``ProfileChunk`` events → sampled stacks."""

    SKIP = frozenset({"(root)", "(idle)"})

    def __init__(self, pid: int, tid: int):
        self.pid = pid
        self.tid = tid
        self.start: float | None = None
        self.parent: dict[int, int] = {}
        self.frame: dict[int, tuple[str, str | None, int | None]] = {}
        self.samples: list[int] = []
        self.deltas: list[float] = []

    def add_chunk(self, data: dict) -> None:
        cp = data.get("cpuProfile")
        if isinstance(cp, dict):
            for n in cp.get("nodes") or ():
                if not isinstance(n, dict) or not isinstance(n.get("id"), int):
                    continue
                cf = n.get("callFrame") if isinstance(n.get("callFrame"), dict) else {}
                fn = cf.get("functionName")
                fn = fn if isinstance(fn, str) and fn else "(anonymous)"
                url = cf.get("url") if isinstance(cf.get("url"), str) and cf.get("url") else None
                line = cf.get("lineNumber")
                line = line + 1 if isinstance(line, int) and line >= 0 and url else None
                self.frame[n["id"]] = (clean_str(fn), url, line)
                if isinstance(n.get("parent"), int):
                    self.parent[n["id"]] = n["parent"]
            samples = cp.get("samples")
            if isinstance(samples, list):
                self.samples.extend(s for s in samples if isinstance(s, int))
        deltas = data.get("timeDeltas")
        if isinstance(deltas, list):
            self.deltas.extend(float(d) if isinstance(d, (int, float)) else 0.0 for d in deltas)

    def emit(self, pd: PerfData) -> None:
        n = min(len(self.samples), len(self.deltas))
        if not n:
            return
        deltas = self.deltas[:n]
        positive = sorted(d for d in deltas if d > 0)
        typical = positive[len(positive) // 2] if positive else 0.0
        cache: dict[int, tuple[int, ...] | None] = {}
        for i in range(n):
            # a sample's weight: the time until the next sample (the last: a typical interval)
            w = deltas[i + 1] if i + 1 < n else typical
            if w <= 0:
                continue
            stack = cache.get(self.samples[i], ())
            if stack == ():
                stack = cache[self.samples[i]] = self._stack(pd, self.samples[i])
            if stack:
                pd.add_sample(stack, w, self.pid, self.tid)

    def _stack(self, pd: PerfData, node: int) -> tuple[int, ...] | None:
        chain: list[int] = []
        seen = set()
        while node in self.frame and node not in seen and len(chain) < 512:
            seen.add(node)
            name, url, line = self.frame[node]
            if name == "(idle)":
                return None
            if name not in self.SKIP:
                chain.append(pd.frame_id(name, url, line))
            node = self.parent.get(node, -1)
        return tuple(reversed(chain)) or None


# ======================================================================================

