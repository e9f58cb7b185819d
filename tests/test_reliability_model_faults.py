"""Model-endpoint faults over real HTTP, through the real ChatOpenAI client.

A local OpenAI-compatible server (tests/fault_server.py) answers slowly, hangs, fails with
500/429, invents a label, writes an essay, sends broken JSON, drops the connection or sends no
choice. The router must still return one of the six labels within its timeout plus a margin and
say in its reason what went wrong; a whole turn through ``PerfScout`` must still finish.

The messages are ones the offline tiers leave open: each is checked to reach the model tier
(``route_info["tier"] == "llm"``) against a well-behaved endpoint first, so a fault test can
never pass merely because the rules or the classifier decided without asking the model.
"""

from __future__ import annotations

import time

import pytest

from app.api import PerfScout
from app.models import make_chat_model
from app.settings import Settings
from fault_server import FaultServer
from graph.enums import ROUTE_LABELS, Tier
from nodes.routing import route_message

TIMEOUT_S = 1.0
#: Client timeout plus this is the bound for one routing decision: connection set-up, a
#: loaded machine, the offline tiers. A hang without a timeout would take forever, not 4 s.
MARGIN_S = 3.0

#: Ambiguous requests: no rule fires and the classifier should be unsure. Only the ones that
#: really reach the model tier (checked per run) are used.
CANDIDATES = [
    "嗯，那个再看看吧",
    "could you take a look at it for me",
    "麻烦处理一下上次那个",
    "hmm, the thing from yesterday again",
    "帮我弄一下",
    "do the usual",
    "看一下它",
    "what about the other one",
    "就按之前说的办",
    "please handle this",
]

#: Per fault: words one of which the router's reason must contain (any case).
FAULTS: dict[str, tuple[str, ...]] = {
    "hang": ("timeout", "timed out"),
    "slow-30-android": ("timeout", "timed out"),
    "status-500": ("500", "internalservererror", "apierror", "server error"),
    "status-429": ("429", "ratelimit", "rate limit"),
    "status-401": ("401", "authentication", "unauthorized"),
    "badjson": ("json", "decode", "parse", "invalid"),
    "close": ("connection", "disconnect", "closed"),
    "empty": ("empty", "no choice", "indexerror", "index", "nothing"),
    "label-deploy_to_prod": ("deploy_to_prod", "not a label", "unknown label", "invalid label"),
    "label-ask_user": ("ask_user", "not a label", "unknown label", "invalid label"),
    "label-rm -rf /": ("rm -rf", "not a label", "unknown label", "invalid label"),
    "essay": ("not a label", "unknown label", "invalid label", "too long", "performance work"),
}


@pytest.fixture(scope="module")
def server():
    with FaultServer() as s:
        yield s


def _llm(server: FaultServer, mode: str, timeout: float = TIMEOUT_S):
    return make_chat_model(Settings(base_url=server.url(mode), api_key="test", llm_timeout_s=timeout))


@pytest.fixture(scope="module")
def open_messages(server):
    """The candidates that reach the model tier when the model behaves."""
    good = _llm(server, "label-startup")
    reached = [t for t in CANDIDATES if route_message(t, llm=good).get("tier") == Tier.LLM.value]
    assert reached, (
        "the router never consulted the model tier for any of "
        f"{len(CANDIDATES)} ambiguous messages: the fault tests would test nothing"
    )
    return reached


def test_a_well_behaved_model_decides_the_open_messages(server, open_messages):
    llm = _llm(server, "label-android")
    before = len(server.requests("label-android"))
    for text in open_messages:
        info = route_message(text, llm=llm)
        assert info["tier"] == Tier.LLM.value and info["route"] == "android", info
    sent = server.requests("label-android")[before:]
    # One call per message (max_retries=0), asking for a few tokens at temperature 0.
    assert len(sent) == len(open_messages)
    body = sent[-1].body
    assert (body.get("max_completion_tokens") or body.get("max_tokens") or 10**9) <= 16
    assert body.get("temperature") in (0, 0.0)


def test_a_slow_model_within_the_timeout_still_decides(server, open_messages):
    llm = _llm(server, "slow-0.3-explorer", timeout=5.0)
    info = route_message(open_messages[0], llm=llm)
    assert info["route"] == "explorer" and info["tier"] == Tier.LLM.value


@pytest.mark.parametrize("mode", list(FAULTS))
def test_each_fault_still_yields_a_label_in_time_with_the_fault_in_the_reason(server, open_messages, mode):
    llm = _llm(server, mode)
    text = open_messages[0]
    before = len(server.requests(mode))
    t0 = time.monotonic()
    info = route_message(text, llm=llm)
    elapsed = time.monotonic() - t0
    assert info["route"] in ROUTE_LABELS, info
    assert elapsed < TIMEOUT_S + MARGIN_S, f"{mode}: routing took {elapsed:.2f}s"
    reason = str(info.get("reason", "")).lower()
    assert any(h in reason for h in FAULTS[mode]), f"{mode}: the reason does not say what failed: {info}"
    # The model was really asked, exactly once: no silent retry storm against a failing endpoint.
    assert len(server.requests(mode)) - before == 1
    if mode.startswith("label-") or mode == "essay":
        # Whatever a model says that is not a label is not a label: never a node name or a command.
        assert info["route"] not in {"ask_user", "deploy_to_prod"}


def test_a_refused_connection_is_a_fault_too():
    """A port nobody listens on: the client fails at once; the router still answers."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = make_chat_model(Settings(base_url=f"http://127.0.0.1:{port}/v1", api_key="test", llm_timeout_s=TIMEOUT_S))
    t0 = time.monotonic()
    info = route_message(CANDIDATES[0], llm=llm)
    assert info["route"] in ROUTE_LABELS
    assert time.monotonic() - t0 < TIMEOUT_S + MARGIN_S


@pytest.mark.parametrize("mode", ["hang", "status-500", "badjson", "close", "essay", "label-ask_user"])
def test_a_whole_turn_finishes_against_a_faulty_model(server, open_messages, tmp_path, mode):
    """The router and the fallback (which also calls the model) both meet the fault."""
    settings = Settings(base_url=server.url(mode), api_key="test", llm_timeout_s=TIMEOUT_S,
                        state_dir=tmp_path / "home")
    with PerfScout(settings, workspace=tmp_path) as ps:
        t0 = time.monotonic()
        r = ps.ask(open_messages[0])
        elapsed = time.monotonic() - t0
    assert r.status in ("done", "failed", "skipped", "needs_input")
    assert r.route in ROUTE_LABELS
    # A final message was produced (or a question asked back), never silence.
    assert (r.answer and r.answer.strip()) or r.question
    # Two model calls at most (router, fallback), each bounded by the client timeout.
    assert elapsed < 2 * TIMEOUT_S + 2 * MARGIN_S + 5
    assert len(server.requests(mode)) >= 1
