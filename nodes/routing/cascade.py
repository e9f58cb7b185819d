"""The routing cascade: rules, the local classifier, the 5-token model call, the default.

Cheapest and surest first. Each tier answers only when it is confident by its own measure
(a rule's precision, the classifier's calibrated threshold, the model's reply being a label);
otherwise the next tier gets the message. A rule's answer also gets a second opinion
(:data:`SECOND_OPINION_P`): when the classifier reads into the message a route whose contract
rule comes *before* the one that fired (code, existing data, launch:
``rules.earlier_rule_route``), the rule may have missed a cue phrased in a way it does not know,
so it does not decide — the model does when one is configured, else the classifier. The
startup override (docs/ROUTING.md rule 3) runs last on whatever was decided. Every decision
carries its tier, confidence, reason and latency so the decision log and ``perfscout route``
can show why.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from graph.enums import Lens, Route, Tier
from nodes.routing import classifier as clf
from nodes.routing.lens import lens_of
from nodes.routing.llm_tier import DEFAULT_TIMEOUT_S, ask
from nodes.routing.normalize import ROUTING_VIEW_CHARS, strip_injections
from nodes.routing.override import startup_override
from nodes.routing.rules import apply_rules, can_be_doubted, earlier_rule_route, evaluate

#: The classifier's probability for an earlier rule's route at which a rule's answer is doubted.
#: Chosen on rule errors the rules had not been written for: the four of unseen_v2's first
#: measurement had the classifier at p=0.49–0.70 for the right label, three of them an earlier
#: rule's route (docs/router.md, "Second opinion"); on the dev set's held-out folds 6 of 655
#: right rule answers are doubted at this level, and with a model configured those cost a call.
SECOND_OPINION_P = 0.5

_MODEL: clf.NgramModel | None = None
_MODEL_ERROR: str | None = None
_LOCK = threading.Lock()


def rules_leave_open(text: str) -> bool:
    """Whether no rule decides ``text`` (the messages the classifier is calibrated on)."""
    return apply_rules(strip_injections(text)) is None


def get_model() -> clf.NgramModel | None:
    """The classifier, loaded from cache or trained once per process (None if that failed)."""
    global _MODEL, _MODEL_ERROR
    if _MODEL is None and _MODEL_ERROR is None:
        with _LOCK:
            if _MODEL is None and _MODEL_ERROR is None:
                try:
                    _MODEL = clf.load_or_train(reaches_fn=rules_leave_open)
                except Exception as exc:  # the cascade still routes (rules, model, default)
                    _MODEL_ERROR = f"{type(exc).__name__}: {exc}"
    return _MODEL


def set_model(model: clf.NgramModel | None) -> None:
    """Use this classifier from now on (benchmarks and tests pass a per-fold model)."""
    global _MODEL, _MODEL_ERROR
    with _LOCK:
        _MODEL, _MODEL_ERROR = model, None


def _decision(route: str, tier: Tier, confidence: float, reason: str) -> dict[str, Any]:
    return {"route": route, "tier": tier.value, "confidence": round(float(confidence), 4), "reason": reason}


def decide(text: str, llm: Any = None, model: clf.NgramModel | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Tiers 1–4 without the override and timing (see ``route_message``)."""
    if not isinstance(text, str) or not text.strip():
        return _decision(Route.END.value, Tier.DEFAULT, 0.0, "empty message")
    clean = strip_injections(text)
    if not clean:
        return _decision(Route.END.value, Tier.DEFAULT, 0.0, "the message only gave routing instructions")
    outcome = evaluate(clean)
    hit = outcome.hit
    if hit is not None and not can_be_doubted(hit.route):  # rule 1 (code) comes first of all
        return _decision(hit.route.value, Tier.RULE, 1.0, f"rule {hit.rule}: {hit.evidence[:60]!r}")
    model = model or get_model()
    label, p = (model.predict(clean) if model is not None else (Route.END.value, 0.0))
    if hit is not None and (p < SECOND_OPINION_P or not earlier_rule_route(label, hit.route)):
        return _decision(hit.route.value, Tier.RULE, 1.0, f"rule {hit.rule}: {hit.evidence[:60]!r}")
    if hit is not None:  # the classifier reads an earlier rule's route: the model decides if it can
        why_open = (f"rule {hit.rule} said {hit.route.value}, but the classifier reads {label} "
                    f"(an earlier rule's route) at p={p:.2f} >= {SECOND_OPINION_P}")
    else:
        left_open = f"rule {outcome.open.rule} left it open ({outcome.open.why[:80]}); " if outcome.open else ""
        if model is not None and p >= model.t_llm:
            return _decision(label, Tier.CLASSIFIER, p, f"{left_open}classifier p={p:.2f} >= calibrated {model.t_llm:.2f}")
        why_open = left_open + (f"classifier p={p:.2f} below {model.t_llm:.2f}" if model else f"classifier unavailable ({_MODEL_ERROR})")

    if llm is not None:
        answer = ask(llm, clean, timeout_s)
        if answer.label is not None:
            d = _decision(answer.label, Tier.LLM, clf.ASSUMED_LLM_ACCURACY, f"{why_open}; {answer.reason}")
        else:
            d = _decision(Route.END.value, Tier.DEFAULT, 0.0, f"{why_open}; {answer.reason}")
        d["model_s"] = round(answer.elapsed_s, 3)  # charged to the turn's model budget
        return d

    if model is not None and p >= model.t_offline:
        return _decision(label, Tier.CLASSIFIER, p, f"{why_open}, no model configured; offline threshold {model.t_offline:.2f} met")
    return _decision(Route.END.value, Tier.DEFAULT, p, f"{why_open}; no model configured")


def route_message(text: str, llm: Any = None, *, model: clf.NgramModel | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """One of the six labels for ``text`` with tier, confidence, reason, latency_ms, override.

    ``llm`` is a LangChain chat model or None (offline: the model tier is skipped). Never
    raises for any text; a model failure or timeout routes to ``end`` with the reason.
    """
    t0 = time.perf_counter()
    info = decide(text, llm=llm, model=model, timeout_s=timeout_s)
    route, override = startup_override(info["route"], strip_injections(text) if isinstance(text, str) else "")
    info["route"] = route
    info["override"] = override
    info["lens"] = lens_of(text).value if isinstance(text, str) else Lens.OVERVIEW.value
    if isinstance(text, str) and len(text) > ROUTING_VIEW_CHARS:
        info["reason"] += f" (routed on the first {ROUTING_VIEW_CHARS} characters)"
    info["latency_ms"] = round((time.perf_counter() - t0) * 1000, 4)
    return info


__all__ = ["route_message", "decide", "get_model", "set_model", "rules_leave_open", "SECOND_OPINION_P"]
