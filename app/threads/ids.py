"""Thread ids: what the checkpoint stores can keep as a ``thread_id``, and the digest the locks
are keyed by (app/threads/locks.py)."""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

from app.errors import RequestError

#: Longest thread id accepted (it is stored in every checkpoint row).
MAX_THREAD_ID = 256


def check_thread_id(thread_id: Any) -> str:
    """The thread id, or RequestError in one line. An id is text the stores can keep: valid
    Unicode (a shell can pass bytes that are not UTF-8; Python turns them into lone surrogates
    that SQLite and PostgreSQL refuse), no control characters (they would reach terminals
    through ``threads list``), at most MAX_THREAD_ID characters."""
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise RequestError("the thread id is empty: give a name such as --thread demo")
    shown = ascii(thread_id)[:80]
    try:
        thread_id.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestError(f"thread id {shown} is not valid UTF-8 text: use letters, digits, '-' or '_'") from None
    if any(unicodedata.category(c) == "Cc" for c in thread_id):
        raise RequestError(f"thread id {shown} contains control characters: use letters, digits, '-' or '_'")
    if len(thread_id) > MAX_THREAD_ID:
        raise RequestError(f"thread id {shown} is longer than {MAX_THREAD_ID} characters")
    return thread_id


def digest(thread_id: str) -> bytes:
    return hashlib.sha256(b"perfscout-thread\0" + thread_id.encode("utf-8")).digest()
