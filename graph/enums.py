"""The closed vocabularies of the state machine.

Every value a router can return is a member of one of these enums, and every conditional edge
maps all of its members, so an unexpected value cannot silently end a run.
"""

from __future__ import annotations

from enum import Enum


class Route(str, Enum):
    """The six labels of the routing contract (docs/ROUTING.md)."""

    FULL_ANALYSIS = "full_analysis"
    STARTUP = "startup"
    EXPLORER = "explorer"
    ANDROID = "android"
    ANALYZE = "analyze"
    END = "end"


ROUTE_LABELS: tuple[str, ...] = tuple(r.value for r in Route)


class Tier(str, Enum):
    """Which tier of the routing cascade decided."""

    RULE = "rule"
    CLASSIFIER = "classifier"
    LLM = "llm"
    DEFAULT = "default"


class ErrorKind(str, Enum):
    """How a tool failed; the retry policy reads only this, never the message text."""

    RETRYABLE = "retryable"
    TIMEOUT = "timeout"
    VALIDATION = "validation"
    PERMISSION = "permission"
    UNAVAILABLE = "unavailable"


#: Error kinds that a second attempt may fix. Not TIMEOUT: a run that outlived its limit (a
#: hang, an adb call that never answered) ends the same way with the same input, and a
#: retry only doubled the wait; a profile cut at the limit is a result, not an error
#: (nodes/collect/profile.py).
RETRYABLE_KINDS: frozenset[ErrorKind] = frozenset({ErrorKind.RETRYABLE})


class TargetOrigin(str, Enum):
    """Who named the program a run stage would start (docs/permission.md).

    Permission names a program: what may run is decided from who chose it, never from what
    the message text says about it.
    """

    #: ``--target``, the API's ``target=``, or the user's answer to "which program?".
    USER = "user"
    #: A script or executable inside the workspace that the message names as the thing to
    #: profile, run by its interpreter with the arguments the message gives.
    WORKSPACE = "workspace"
    #: Any other command line found in the message (quoted, in backticks, after "run"): a
    #: proposal, which runs only once the user confirms that exact argv.
    PROPOSAL = "proposal"


class Confirmation(str, Enum):
    """The user's answer to "run this exact command?" for a proposal."""

    NONE = "none"
    CONFIRMED = "confirmed"
    DECLINED = "declined"


class RunGate(str, Enum):
    """The permission fact a run stage's policy reads, derived from origin and confirmation."""

    #: The user's own program (USER / WORKSPACE origin): ``--allow-run`` or the allowlist decides.
    OWN = "own"
    #: A proposal not yet confirmed: the turn asks to confirm the exact argv.
    PROPOSED = "proposed"
    #: A proposal the user confirmed (that exact argv, this turn).
    CONFIRMED = "confirmed"
    #: A proposal the user declined.
    DECLINED = "declined"
    #: A proposal of a shape never run from a message (inline code, deletion, raw device),
    #: refused even when confirmed.
    FORBIDDEN = "forbidden"


class CollectionKind(str, Enum):
    """What produced a ``collected`` payload (graph/payloads.py)."""

    PROFILE = "profile"
    STARTUP = "startup"
    FILE = "file"
    ANDROID = "android"
    #: Two sides to compare: paths {"a", "b"} (nodes/compare/, nodes/collect/ab_launches.py).
    COMPARE = "compare"


class AttributionStatus(str, Enum):
    """Where a hot spot's source was found (nodes/code/attribute.py)."""

    FOUND = "found"
    #: System or library code: not the user's to change.
    SYSTEM = "system"
    NOT_FOUND = "not_found"


class TurnOutcome(str, Enum):
    """How a turn ended, as the API reports it (app/api.py ``AskResult.status``)."""

    DONE = "done"
    NEEDS_INPUT = "needs_input"
    FAILED = "failed"
    SKIPPED = "skipped"
    #: Stopped between nodes (a crash, a kill) with work left: ``perfscout resume`` continues it.
    INCOMPLETE = "incomplete"


class Node(str, Enum):
    """The graph's nodes. Their values are the node names in the compiled graph."""

    ORCHESTRATOR = "orchestrator"
    COLLECTOR = "collector"
    STARTUP = "startup"
    EXPLORER = "explorer"
    ANDROID_EXPERT = "android_expert"
    PERF_ANALYZER = "perf_analyzer"
    ANALYZER = "analyzer"
    ATTRIBUTOR = "attributor"
    REPORTER = "reporter"
    FALLBACK = "fallback"
    ASK_USER = "ask_user"
    FAIL = "fail"


class NextStep(str, Enum):
    """What a stage's policy decides after the stage ran.

    ``CONTINUE`` means "the next stage of this route's pipeline"; each edge's path_map says
    which node that is. ``FINISH`` is the graph's END.
    """

    CONTINUE = "continue"
    #: Straight to the reporter, past the stages in between (startup skips attribution).
    REPORT = "report"
    RETRY = "retry"
    ASK_USER = "ask_user"
    REJECT = "reject"
    SKIP = "skip"
    FAIL = "fail"
    FINISH = "finish"
