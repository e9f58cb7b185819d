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


class Lens(str, Enum):
    """What aspect of the data a question asks about (nodes/perf/lenses.py: one row each).

    Closed: the answer leads with the lens's numbers, or says what the data lacks for it.
    """

    OVERVIEW = "overview"
    STARTUP = "startup"
    #: Jank: frames over their deadline (Android FrameTimeline, Chrome frames).
    FRAMES = "frames"
    #: Scrolling and input latency.
    SCROLL = "scroll"
    CPU = "cpu"
    MEMORY = "memory"
    POWER = "power"
    #: Binder, locks, IO: what a thread waited on.
    BLOCKING = "blocking"
    #: Page load (web vitals).
    PAGE = "page"


#: Names the MCP analyze tool's ``focus`` had before lenses (docs/mcp.md), still accepted.
LENS_ALIASES: dict[str, Lens] = {"web": Lens.PAGE, "all": Lens.OVERVIEW, "hotspots": Lens.CPU}


def lens_named(name: str | None) -> Lens:
    """The lens a user or caller named (a lens value or an old ``focus`` alias); ValueError if none."""
    key = (name or "").strip().lower()
    if key in LENS_ALIASES:
        return LENS_ALIASES[key]
    return Lens(key)


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


class Permission(str, Enum):
    """What a run stage may do with the program it would start (graph/permission.py ``decide``)."""

    #: Run it: this turn's ``allow_run`` for the user's own program, or the user's confirmation
    #: of that exact proposed argv.
    RUN = "run"
    #: Run it: running is off this turn, but the settings' allowlist names exactly this program.
    ALLOWLISTED = "allowlisted"
    #: Ask the user to confirm the exact argv the message proposed.
    CONFIRM = "confirm"
    #: The user's own program, and running is off: refused, saying how to allow it.
    REFUSED = "refused"
    #: A proposal of a shape never run from a message, confirmed or not.
    REFUSED_SHAPE = "refused_shape"
    #: A proposal the user declined.
    DECLINED = "declined"


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
    """The status of a thread's last turn: the one vocabulary of ``AskResult.status``
    (app/api.py), ``ThreadSummary.status`` (app/threads/listing.py), the CLI and the MCP server.
    app/threads/status.py ``turn_state`` reads it from a checkpoint; the fail node and the stage
    runner's skip write ``failed`` / ``skipped`` into the state's ``outcome``."""

    DONE = "done"
    NEEDS_INPUT = "needs_input"
    FAILED = "failed"
    SKIPPED = "skipped"
    #: Stopped between nodes (a crash, a kill) with work left: ``perfscout resume`` continues it.
    INCOMPLETE = "incomplete"
    #: Another turn holds the thread's lock right now (its checkpoint is a step of that turn):
    #: only a listing says this (``threads list`` / ``threads show``), never a turn's own result.
    RUNNING = "running"


#: Node names earlier versions wrote into checkpoints (route history, a pending question's
#: ``for_node``, attempts) and decision logs, and the node each is now. ``Node(old)`` is the
#: new member, so an old thread resumes and an old log replays (tests/test_migration.py).
RENAMED_NODES: dict[str, str] = {
    #: It finds the data an ``analyze`` request means; it analyses nothing (issue 26, item 13).
    "perf_analyzer": "data_locator",
}


class Node(str, Enum):
    """The graph's nodes. Their values are the node names in the compiled graph; a name of an
    earlier version (``RENAMED_NODES``) is read as the node it became."""

    ORCHESTRATOR = "orchestrator"
    COLLECTOR = "collector"
    STARTUP = "startup"
    EXPLORER = "explorer"
    ANDROID_EXPERT = "android_expert"
    DATA_LOCATOR = "data_locator"
    ANALYZER = "analyzer"
    ATTRIBUTOR = "attributor"
    REPORTER = "reporter"
    FALLBACK = "fallback"
    ASK_USER = "ask_user"
    FAIL = "fail"

    @classmethod
    def _missing_(cls, value: object) -> "Node | None":
        new = RENAMED_NODES.get(value) if isinstance(value, str) else None
        return cls(new) if new is not None else None


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
