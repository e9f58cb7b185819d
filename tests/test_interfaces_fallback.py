"""The `end` route's answers: with a (fake) model, without one, and when the model fails."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import build_graph
from nodes import fallback
from nodes.framework.context import NodeContext
from nodes.report.language import _HANS_ONLY, _HANT_ONLY, detect_language
from nodes.routing import route_message

from interfaces_util import sample_analysis

_CJK = re.compile(r"[\u4e00-\u9fff]")


class Recording(BaseCallbackHandler):
    """Records what each chat-model call was asked with (params and messages)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def on_chat_model_start(self, serialized, messages, **kwargs):  # noqa: ANN001
        self.calls.append({"params": kwargs.get("invocation_params") or {}, "messages": messages[0]})


class Broken(BaseChatModel):
    """A model whose provider is down."""

    @property
    def _llm_type(self) -> str:
        return "broken"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001
        raise ConnectionError("connection refused")


def fake_model(reply: str, rec: Recording) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=reply)]), callbacks=[rec])


def run_node(ctx: NodeContext, text: str, **state: Any) -> dict:
    return fallback.make(ctx)({"messages": [HumanMessage(content=text)], **state})


def test_model_answer_uses_a_real_token_budget_and_the_users_language():
    rec = Recording()
    out = run_node(NodeContext(llm=fake_model("掉幀是指一幀超過了顯示預算。", rec)), "什麼是掉幀？要怎麼看？")
    assert out["answer"] == "掉幀是指一幀超過了顯示預算。"
    assert out["messages"][-1].content == out["answer"]
    (call,) = rec.calls
    assert call["params"].get("max_tokens") == fallback.FALLBACK_MAX_TOKENS
    assert fallback.FALLBACK_MAX_TOKENS >= 200  # a paragraph, not the router's 5 tokens
    system = call["messages"][0].content
    assert "Traditional Chinese" in system and "performance" in system
    assert call["messages"][-1].content == "什麼是掉幀？要怎麼看？"


def test_model_sees_the_threads_last_analysis_and_a_bounded_history():
    rec = Recording()
    history = []
    for i in range(20):
        history += [HumanMessage(content=f"q{i} " + "x" * 5000), AIMessage(content=f"a{i}")]
    state = {"messages": history + [HumanMessage(content="how can I make it faster?")], "analysis": sample_analysis()}
    fallback.make(NodeContext(llm=fake_model("Cut parse_rows.", rec)))(state)
    msgs = rec.calls[0]["messages"]
    assert "parse_rows" in msgs[0].content  # the numbers it may use
    assert len(msgs) <= fallback.HISTORY_MESSAGES + 2
    assert all(len(m.content) <= max(fallback.HISTORY_CHARS, len(msgs[0].content)) for m in msgs)


def test_model_error_falls_back_to_the_offline_answer_with_a_note():
    out = run_node(NodeContext(llm=Broken()), "how do I reduce jank when scrolling?")
    assert "capture a trace on the device" in out["answer"]  # the frames topic's examples
    assert "ConnectionError" in out["answer"]
    assert not _CJK.search(out["answer"])


def test_empty_model_reply_is_not_an_answer():
    rec = Recording()
    out = run_node(NodeContext(llm=fake_model("   ", rec)), "分析一下性能")
    assert "帮我全面分析一下 examples/slow_app.py" in out["answer"]


@pytest.mark.parametrize(
    "text, topic",
    [
        ("分析一下性能", "general"),
        ("你好", "general"),
        ("hello there", "general"),
        ("怎么优化启动", "startup"),
        ("為什麼冷啟動這麼慢", "startup"),
        ("怎么优化列表滑动", "frames"),
        ("what is jank?", "frames"),
        ("内存一直涨怎么办", "memory"),
        ("how do I find a memory leak", "memory"),
        ("CPU 占用太高", "cpu"),
        ("how do I read a perfetto trace", "traces"),
    ],
)
def test_offline_answer_recognises_the_topic(text: str, topic: str):
    assert fallback.topic_of(text).name == topic
    answer = run_node(NodeContext(), text)["answer"]
    lang = detect_language(text)
    _, examples = fallback.topic_of(text).text[lang]
    assert 2 <= len(examples) <= 3
    for e in examples:
        assert e in answer
    assert "OPENAI_API_KEY" in answer and "OPENAI_BASE_URL" in answer


@pytest.mark.parametrize(
    "text, lang",
    [("怎么优化启动", "zh-Hans"), ("怎麼優化啟動", "zh-Hant"), ("how do I optimise start-up?", "en")],
)
def test_offline_answer_is_in_the_users_script(text: str, lang: str):
    answer = run_node(NodeContext(), text)["answer"]
    assert detect_language(text) == lang
    if lang == "en":
        assert not _CJK.search(answer)
    elif lang == "zh-Hant":
        assert any(c in _HANT_ONLY for c in answer) and not any(c in _HANS_ONLY for c in answer)
    else:
        assert any(c in _HANS_ONLY for c in answer) and not any(c in _HANT_ONLY for c in answer)


def test_every_offline_example_is_ready_to_type():
    """An example the router sends back to `end` would only produce this answer again."""
    sent_back = []
    for topic in (*fallback.TOPICS, fallback.GENERAL):
        for lang, (_, examples) in topic.text.items():
            for e in examples:
                if route_message(e)["route"] == "end":
                    sent_back.append((topic.name, lang, e))
    assert not sent_back


def test_offline_answer_points_at_the_threads_last_analysis():
    answer = run_node(NodeContext(), "怎么优化", analysis=sample_analysis("runs/x/profile.json"))["answer"]
    assert "runs/x/profile.json" in answer and "最慢的一帧" in answer


def test_graph_end_route_with_a_model_answers_once():
    rec = Recording()
    # The same reply to every call: the router may consult the model too (and reads no label here).
    model = FakeListChatModel(responses=["Jank is a missed frame deadline."], callbacks=[rec])
    g = build_graph(checkpointer=InMemorySaver(), llm=model)
    out = g.invoke({"messages": [HumanMessage(content="what is jank?")]}, {"configurable": {"thread_id": "f1"}})
    assert out["_route"] == "end"
    assert out["answer"] == "Jank is a missed frame deadline."
    budgets = [c["params"].get("max_tokens") for c in rec.calls]
    assert fallback.FALLBACK_MAX_TOKENS in budgets
