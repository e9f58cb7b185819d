"""The ``end`` route: general questions, advice, and vague requests."""

from __future__ import annotations

import re
from typing import Callable

from graph.enums import Node
from nodes.common import last_user_text, say, stamp
from nodes.context import NodeContext

_CJK = re.compile(r"[\u4e00-\u9fff]")


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def fallback(state: dict) -> dict:
        text = last_user_text(state)
        update = stamp(state, Node.FALLBACK.value)
        if _CJK.search(text):
            answer = (
                "我可以帮你：全面分析一个程序（例如「帮我全面分析一下 examples/slow_app.py」）、"
                "解读已有的性能数据（例如「解读一下 traces/launch.json」）、"
                "或者搜索代码（例如「搜一下 parse_frames 的实现」）。"
                "如需回答开放性问题，请配置模型（OPENAI_API_KEY / OPENAI_BASE_URL）。"
            )
        else:
            answer = (
                "I can profile a program end to end (\"profile examples/slow_app.py end to end\"), "
                "read existing performance data (\"what does traces/launch.json say?\"), or "
                "search code (\"where is parse_frames defined?\"). For open questions, configure a "
                "model (OPENAI_API_KEY / OPENAI_BASE_URL)."
            )
        update.update(say(Node.FALLBACK.value, answer))
        return update

    return fallback
