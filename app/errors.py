"""The typed errors of the API, in a module of their own so that every layer (app/api.py,
app/threads/, the CLI, the MCP server) can import them without importing each other."""

from __future__ import annotations


class RequestError(ValueError):
    """A request the API cannot run as given (empty text, no pending question to answer, an
    unknown thread, a thread id that is not text). The CLI prints it in one line, exit 2."""


class ThreadBusy(RuntimeError):
    """Another turn holds the thread and did not let go within the wait (``PERFSCOUT_THREAD_WAIT``).

    Nothing of this turn ran or was written: the caller may simply try again later. The CLI
    prints ``thread T is busy …`` and exits 1.
    """

    def __init__(self, thread_id: str, waited_s: float):
        self.thread_id = thread_id
        self.waited_s = waited_s
        super().__init__(
            f"thread {thread_id} is busy: another turn is running on it "
            f"(waited {waited_s:.1f} s, PERFSCOUT_THREAD_WAIT); try again when it has finished"
        )


class RunNotAllowed(RuntimeError):
    """Continuing a stopped turn would start a program and this call gave no permission for it.

    Refused before anything runs: the turn stays incomplete, and the same call with
    ``--allow-run`` / ``allow_run=True`` continues it. The CLI prints it in one line, exit 1.
    """


class TurnInterrupted(KeyboardInterrupt):
    """Ctrl-C during a turn. A ``KeyboardInterrupt`` (so it stops everything as one does) that
    also names the thread, so the CLI can say how to continue it (``perfscout resume T``)."""

    def __init__(self, thread_id: str):
        self.thread_id = thread_id
        super().__init__(thread_id)
