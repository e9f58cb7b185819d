"""The collector node. Its capability is built by a later issue; until then it skips, saying why."""

from __future__ import annotations

from typing import Callable

from graph.enums import Node
from nodes.common import skip, stamp
from nodes.context import NodeContext


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def collector(state: dict) -> dict:
        update = stamp(state, Node.COLLECTOR.value)
        update.update(skip(Node.COLLECTOR.value, "this capability is not built yet"))
        return update

    return collector
