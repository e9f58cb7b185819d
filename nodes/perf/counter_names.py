"""Which strings read as counter names — and which are log lines that arrived as counters.

atrace's counter format is ``C|pid|name|value``: anything a process writes with that shape
becomes a counter, including HWUI's ``Davey! duration=597885ms; Flags=1, …`` jank log line
when a tracer forwards it. A counter name is short and one line; a line with ``key=value``
pairs, sentences (``!``, ``;``) or a list is a message, not a series a person would chart.
"""

from __future__ import annotations

import re

_KEY_VALUE = re.compile(r"\w=\S")


def is_counter_name(name: str) -> bool:
    """A plausible counter name (``Heap size (KB)``, ``mem.rss.anon``, ``hwui_Layer_count``)."""
    if not name or len(name) > 120 or "\n" in name:
        return False
    return not (_KEY_VALUE.search(name) or ";" in name or "!" in name)
