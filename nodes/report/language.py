"""Which language to answer in: Simplified Chinese, Traditional Chinese, or English.

A reply in the script the user typed matters to people who read only one of them. Telling the
two scripts apart needs no dictionary: a message in Traditional script almost always contains
one of its common characters that Simplified script writes differently, and vice versa.
"""

from __future__ import annotations

import re
from typing import Literal

Lang = Literal["zh-Hans", "zh-Hant", "en"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")

# Frequent characters whose Traditional and Simplified forms differ (pairs, same order).
_HANT = "這個們來說對時會裡為麼開啟動記憶體數據採集幀畫點頁顯頓應優處況問題請幫測試樣還沒實際線程載檔案發現響慢長經過學與從"
_HANS = "这个们来说对时会里为么开启动记忆体数据采集帧画点页显顿应优处况问题请帮测试样还没实际线程载档案发现响慢长经过学与从"
_HANT_ONLY = frozenset(t for t, s in zip(_HANT, _HANS) if t != s)
_HANS_ONLY = frozenset(s for t, s in zip(_HANT, _HANS) if t != s)


def detect_language(text: str) -> Lang:
    """The language of ``text``: any CJK character makes it Chinese; the script decides which."""
    text = text or ""
    if not _CJK.search(text):
        return "en"
    hant = sum(1 for ch in text if ch in _HANT_ONLY)
    hans = sum(1 for ch in text if ch in _HANS_ONLY)
    return "zh-Hant" if hant > hans else "zh-Hans"
