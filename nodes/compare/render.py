"""A comparison as Markdown, a self-contained HTML page (the report's style and CSP) and JSON.

The HTML reuses the report's CSS and plain-SVG helpers (nodes/report/html.py, nodes/report/svg.py)
and draws one **delta chart**: a bar per metric for the change of its median in percent, green
when better, red when worse, grey inside the noise, with the bootstrap interval as a whisker
when there is one. Files are written like a report's: a fresh folder, each file atomic
(nodes/report/output.py), ``compare.md`` last.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import orjson

from nodes.compare.diff import Comparison, Row
from nodes.report import fmt
from nodes.report.html import CSP, CSS
from nodes.report.output import write_atomic
from nodes.report.svg import WIDTH, Scale, esc, line, open_svg, rect, text, x_axis

FILES = {"markdown": "compare.md", "html": "compare.html", "json": "compare.json"}
#: Most rows the delta chart draws (the table lists them all).
MAX_CHART_ROWS = 24


def value(v: float | None, unit: str) -> str:
    if v is None:
        return "–"
    if unit == "ms":
        return fmt.ms(v)
    if unit == "ratio":
        return fmt.ratio_pct(v)
    if unit == "%":
        return fmt.pct(v)
    if unit in ("fps",):
        return f"{v:.1f} fps"
    if unit in ("kB", "MB"):
        return f"{fmt.num(v)} {unit}"
    return fmt.metric(v)


def _side(vals: Sequence[float], unit: str) -> str:
    if not vals:
        return "–"
    import statistics

    med = value(statistics.median(vals), unit)
    return med if len(vals) == 1 else f"{med} (median of {len(vals)})"


def delta_text(r: Row) -> str:
    d = r.diff
    if not d or "delta" not in d:
        return "–"
    s = value(d["delta"], r.unit if r.unit not in ("ratio",) else "ratio")
    if r.unit == "ratio":
        s = f"{100 * d['delta']:+.1f} pp"
    elif not s.startswith("-") and not s.startswith("–"):
        s = "+" + s
    if d.get("delta_pct") is not None:
        s += f" ({d['delta_pct']:+.1f} %)"
    return s


def stats_text(r: Row) -> str:
    d = r.diff
    if not d or "delta" not in d:
        return ""
    if d.get("ci_low") is None:
        return d.get("note") or ""
    lo, hi = d["ci_low"], d["ci_high"]
    ci = (f"[{100 * lo:+.2f}, {100 * hi:+.2f}] pp" if r.unit == "ratio"
          else f"[{value(lo, r.unit)}, {value(hi, r.unit)}]")
    return f"95 % CI {ci}, p = {d['p_value']:.3g}" + (f" — {d['note']}" if d.get("note") else "")


def headline(c: Comparison) -> str:
    ch = c.changes
    rows = [r for r in c.rows if r.diff and "delta" in r.diff]
    if not rows and not c.hotspots:
        return f"{c.b_label} vs {c.a_label}: no metric in common."
    parts = []
    if ch["worse"]:
        parts.append(f"worse: {', '.join(ch['worse'][:4])}" + (" …" if len(ch["worse"]) > 4 else ""))
    if ch["better"]:
        parts.append(f"better: {', '.join(ch['better'][:4])}" + (" …" if len(ch["better"]) > 4 else ""))
    one = all(r.diff.get("ci_low") is None for r in rows) if rows else False
    if not parts:
        return f"{c.b_label} vs {c.a_label}: no significant change."
    tail = " (one run per side: deltas without an interval)" if one else ""
    return f"{c.b_label} vs {c.a_label}: " + "; ".join(parts) + "." + tail


# --- Markdown -----------------------------------------------------------------------------


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render_markdown(c: Comparison) -> str:
    out = [f"# PerfScout comparison — {c.b_label} vs {c.a_label}", "", headline(c), "",
           f"- A: `{c.a_label}` — {len(c.a_runs)} run(s): {', '.join(c.a_runs[:8])}{' …' if len(c.a_runs) > 8 else ''}",
           f"- B: `{c.b_label}` — {len(c.b_runs)} run(s): {', '.join(c.b_runs[:8])}{' …' if len(c.b_runs) > 8 else ''}", ""]
    for w in c.warnings:
        out.append(f"> warning: {w}")
    if c.warnings:
        out.append("")
    if c.rows:
        out += ["## Metrics", "", "| metric | A | B | Δ (B − A) | verdict | interval, test |", "|---|--:|--:|--:|---|---|"]
        for r in c.rows:
            out.append(f"| `{_md_cell(r.key)}` | {_side(r.a, r.unit)} | {_side(r.b, r.unit)} | {delta_text(r)} | "
                       f"{r.verdict} | {_md_cell(stats_text(r))} |")
        out.append("")
    if c.hotspots:
        out += ["## Hot spots (self time)", "", "| function | where | A | B | Δ | status | interval, test |",
                "|---|---|--:|--:|--:|---|---|"]
        for r in c.hotspots:
            out.append(f"| {_md_cell(r.label)} | {_md_cell(r.place or '')} | {_side(r.a, 'ms')} | {_side(r.b, 'ms')} | "
                       f"{delta_text(r)} | {r.status} | {_md_cell(stats_text(r))} |")
        out.append("")
    out += ["Medians per side; the interval is a seeded percentile bootstrap of the difference of medians, the "
            "test a two-sided Mann–Whitney U; a change counts only when p < 0.05 and the interval excludes zero "
            "(docs/compare.md).", ""]
    return "\n".join(out)


# --- HTML ---------------------------------------------------------------------------------


def delta_chart(rows: Sequence[Row]) -> str | None:
    """Horizontal bars: the change of each metric's median in percent, interval as a whisker."""
    drawn = [r for r in rows if r.diff and r.diff.get("delta_pct") is not None and r.verdict != "unchanged"][:MAX_CHART_ROWS]
    if not drawn:
        return None
    row_h, left, right, top = 22, 250, WIDTH - 20, 10
    h = top + row_h * len(drawn) + 40

    def pct(r: Row, v: float | None) -> float | None:
        base = r.diff["median_a"]
        return None if v is None or not base else v / abs(base) * 100.0

    vals = [0.0]
    for r in drawn:
        vals.append(r.diff["delta_pct"])
        for k in ("ci_low", "ci_high"):
            p = pct(r, r.diff.get(k))
            if p is not None:
                vals.append(p)
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.08 or 1.0
    lo, hi = lo - pad, hi + pad
    sx = Scale(lo, hi, left, right)
    parts = [open_svg(h, "Change of each metric's median, B against A, in percent", "delta")]
    for i, r in enumerate(drawn):
        y = top + i * row_h
        cls = {"worse": "bad", "better": "ok"}.get(r.verdict, "soft")
        d = r.diff["delta_pct"]
        x0, x1 = sorted((sx(0.0), sx(d)))
        label = r.label if r.family == "hotspots" else r.key
        parts.append(text(left - 8, y + 15, label if len(label) <= 38 else label[:37] + "…", "lbl", "end"))
        parts.append(rect(x0, y + 4, x1 - x0, row_h - 8, cls,
                          f"{r.key}: {delta_text(r)} — {r.verdict}. {stats_text(r)}", d))
        cl, ch = pct(r, r.diff.get("ci_low")), pct(r, r.diff.get("ci_high"))
        if cl is not None and ch is not None:
            parts.append(line(sx(cl), y + row_h / 2, sx(ch), y + row_h / 2, "median"))
    parts.append(line(sx(0.0), top, sx(0.0), top + row_h * len(drawn), "ax"))
    parts.append(x_axis(sx, top + row_h * len(drawn) + 4, lo, hi, "% change of the median (B − A) / A"))
    parts.append("</svg>")
    return "".join(parts)


def _table(head: list[tuple[str, bool]], rows: list[list[str]]) -> str:
    th = "".join(f'<th class="n">{esc(x)}</th>' if n else f"<th>{esc(x)}</th>" for x, n in head)
    body = "".join("<tr>" + "".join(f'<td class="n">{esc(c)}</td>' if head[i][1] else f"<td>{esc(c)}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f'<div class="tbl"><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>'


def render_html(c: Comparison) -> str:
    ch = c.changes
    sev = "high" if ch["worse"] else "low" if ch["better"] else "info"
    body = [f'<section id="summary"><div class="card verdict"><span class="badge sev-{sev}">'
            f'{len(ch["worse"])} worse · {len(ch["better"])} better</span><p>{esc(headline(c))}</p>'
            f'<div class="src">A: {esc(c.a_label)} ({len(c.a_runs)} run(s): {esc(", ".join(c.a_runs[:8]))}) · '
            f'B: {esc(c.b_label)} ({len(c.b_runs)} run(s): {esc(", ".join(c.b_runs[:8]))})</div></div>']
    body += [f'<p class="src">warning: {esc(w)}</p>' for w in c.warnings]
    body.append("</section>")
    chart = delta_chart(c.rows + c.hotspots)
    if chart:
        body.append('<section id="delta"><h2>What changed</h2><figure><div class="chartbox">' + chart
                    + "</div><figcaption>Bars: change of the median in percent (green better, red worse, light "
                    "inside the noise); line: the 95 % bootstrap interval where the sides have several runs."
                    "</figcaption></figure></section>")
    if c.rows:
        body.append('<section id="metrics"><h2>Metrics</h2>' + _table(
            [("metric", False), ("A", True), ("B", True), ("Δ (B − A)", True), ("verdict", False), ("interval, test", False)],
            [[r.key, _side(r.a, r.unit), _side(r.b, r.unit), delta_text(r), r.verdict, stats_text(r)] for r in c.rows])
            + "</section>")
    if c.hotspots:
        body.append('<section id="hotspots"><h2>Hot spots (self time)</h2>' + _table(
            [("function", False), ("where", False), ("A", True), ("B", True), ("Δ", True), ("status", False),
             ("interval, test", False)],
            [[r.label, r.place or "", _side(r.a, "ms"), _side(r.b, "ms"), delta_text(r), r.status or "", stats_text(r)]
             for r in c.hotspots]) + "</section>")
    body.append('<p class="src">Medians per side; the interval is a seeded percentile bootstrap of the difference '
                "of medians, the test a two-sided Mann–Whitney U; a change counts only when p &lt; 0.05 and the "
                "interval excludes zero.</p>")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="color-scheme" content="light dark">'
            f"<title>PerfScout comparison — {esc(c.b_label)} vs {esc(c.a_label)}</title><style>{CSS}</style></head>"
            f"<body><main><header><h1>PerfScout comparison — {esc(c.b_label)} vs {esc(c.a_label)}</h1></header>"
            + "".join(body) + "</main></body></html>\n")


def to_json_bytes(c: Comparison) -> bytes:
    d: dict[str, Any] = c.to_dict()
    d["headline"] = headline(c)
    return orjson.dumps(d, option=orjson.OPT_INDENT_2)


def write_comparison(c: Comparison, folder: Path) -> dict[str, str]:
    """compare.json, compare.html, then compare.md (the folder's "done" mark), each atomic."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {"dir": str(folder)}
    write_atomic(folder / FILES["json"], to_json_bytes(c))
    out["json"] = str(folder / FILES["json"])
    write_atomic(folder / FILES["html"], render_html(c).encode("utf-8"))
    out["html"] = str(folder / FILES["html"])
    write_atomic(folder / FILES["markdown"], render_markdown(c).encode("utf-8"))
    out["markdown"] = str(folder / FILES["markdown"])
    return out
