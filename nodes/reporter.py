"""The reporter node. Its capability is built by a later issue; until then it skips, saying why."""

from __future__ import annotations

from typing import Callable

from graph.enums import Node
from nodes.common import skip, stamp
from nodes.context import NodeContext


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def reporter(state: dict) -> dict:
        update = stamp(state, Node.REPORTER.value)
        update.update(skip(Node.REPORTER.value, "this capability is not built yet"))
        return update

    return reporter
