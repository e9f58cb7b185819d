"""The classifier's second opinion on a rule's answer (nodes/routing/cascade.py).

A rule that fired stands unless the classifier reads, at p >= SECOND_OPINION_P, a route whose
contract rule comes before the one that fired (docs/ROUTING.md: 1 code, 2 existing data, 3
launch). Then the model decides when one is configured, else the classifier. The classifier
here is a stub with a fixed answer, so each case tests the cascade's logic alone.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from graph.enums import ROUTE_LABELS, Route
from nodes.routing import route_message
from nodes.routing.cascade import SECOND_OPINION_P
from nodes.routing.normalize import strip_injections
from nodes.routing.rules import apply_rules, earlier_rule_route


@dataclass
class StubClassifier:
    """Answers ``label`` with probability ``p`` for every message."""

    label: str
    p: float
    t_llm: float = 0.75
    t_offline: float = 0.0

    def predict(self, text: str) -> tuple[str, float]:
        return self.label, self.p


def fake(reply: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=reply)]))


LAUNCH = "测一下 com.demo.shop 的冷启动耗时"  # rule 3 (launch) decides startup
DATA = "分析一下这份启动 trace"  # rule 2 (existing data) decides analyze, launch words and all
ADVICE = "怎么优化启动"  # rule 4 (advice) decides end
DEVICE = "dump meminfo of com.demo.shop"  # rule 5 (device) decides android


@pytest.mark.parametrize("text, route", [(LAUNCH, "startup"), (DATA, "analyze"), (ADVICE, "end"), (DEVICE, "android")])
def test_the_probes_are_rule_decisions(text, route):
    hit = apply_rules(strip_injections(text))
    assert hit is not None and hit.route.value == route


@pytest.mark.parametrize(
    "text, label, p",
    [
        (LAUNCH, "startup", 0.99),  # agreement
        (LAUNCH, "full_analysis", 0.99),  # a later rule's route: the launch rule overrules it
        (LAUNCH, "android", 0.99),
        (DATA, "startup", 0.99),  # "分析一下这份启动 trace": rule 2 beats the launch words
        (DATA, "analyze", 0.99),
        (LAUNCH, "analyze", SECOND_OPINION_P - 0.01),  # an earlier route, but not sure enough
        (DEVICE, "end", 0.99),  # end is no cue route
        (ADVICE, "full_analysis", 0.99),
    ],
)
def test_the_rule_stands(text, label, p):
    decided = apply_rules(strip_injections(text)).route.value
    info = route_message(text, llm=fake("explorer"), model=StubClassifier(label, p))
    assert info["tier"] == "rule" and info["route"] == decided


@pytest.mark.parametrize(
    "text, label",
    [(LAUNCH, "analyze"), (LAUNCH, "explorer"), (DATA, "explorer"), (ADVICE, "startup"), (DEVICE, "analyze"), (DEVICE, "startup")],
)
def test_an_earlier_rules_route_sends_the_message_to_the_model(text, label):
    decided = apply_rules(strip_injections(text)).route.value
    stub = StubClassifier(label, SECOND_OPINION_P)
    info = route_message(text, llm=fake("end"), model=stub)
    assert info["tier"] == "llm" and info["route"] == "end"  # the model's answer, whatever it is
    assert f"said {decided}" in info["reason"] and f"reads {label}" in info["reason"]

    offline = route_message(text, model=stub)  # no model: the classifier, which is sure enough
    assert offline["tier"] == "classifier"
    # the startup override still runs last (a device measurement of launch stays startup)
    assert offline["route"] == label or (offline["route"] == "startup" and offline["override"])


def test_a_doubted_rule_asks_the_model_even_above_the_llm_threshold():
    # The classifier's p clears t_llm, which for an open message would let it decide alone.
    info = route_message(LAUNCH, llm=fake("startup"), model=StubClassifier("analyze", 0.95, t_llm=0.5))
    assert info["tier"] == "llm" and info["route"] == "startup"


def test_earlier_rule_route_over_every_pair():
    # Independent statement of the contract's order: code (1), data (2), launch (3) are the cue
    # routes; end (4) and full_analysis / android (5) never doubt a rule.
    order = {"explorer": 1, "analyze": 2, "startup": 3}
    later = {"startup": 3, "end": 4, "full_analysis": 5, "android": 5, "analyze": 2, "explorer": 1}
    for label, decided in itertools.product(list(ROUTE_LABELS) + ["fail", "", "EXPLORER"], ROUTE_LABELS):
        want = label in order and order[label] < later[decided]
        assert earlier_rule_route(label, Route(decided)) is want, (label, decided)
