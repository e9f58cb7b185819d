"""The base of every analysis result type: a ``msgspec.Struct`` with the few pydantic-style
methods its callers use.

Why not pydantic: the result types are on the path of ``perfscout analyze``, a quick command
(issue 15: ≤ 0.5 s wall on a 100 KB trace), and importing pydantic and building ~25 models
cost ~200 ms of it (``python -X importtime``); msgspec is already loaded there by the trace
readers and defines these types in well under a millisecond. The API and MCP schemas
(app/api.py, app/mcp/) stay pydantic: they are not on that path.

Semantics kept from pydantic (checked by tests/test_result_structs.py):

* a Struct does not validate on construction, so the *dump* does: :meth:`Result.model_dump`
  converts the fields through their declared types (``msgspec.convert``, lax like pydantic),
  so an ``int`` in a ``float`` field comes out as a float, and a numpy scalar (a metric's
  ``numpy.float64``) as the Python number — never a numpy object in the JSON;
* :meth:`Result.model_validate` validates a mapping (a stored analysis, a checkpoint) and
  raises :class:`msgspec.ValidationError`; :func:`error_location` turns one into pydantic's
  ``loc`` and message, which the one-line errors print.
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Any, Iterable, Literal, TypeVar

import msgspec

R = TypeVar("R", bound="Result")


def _numpy_to_python(obj: Any) -> Any:
    """``enc_hook``: a numpy scalar becomes its Python number, an array a list (numpy itself is
    not imported here: anything with ``item``/``tolist`` from the numpy module qualifies)."""
    module = type(obj).__module__
    if module == "numpy" or module.startswith("numpy."):
        if hasattr(obj, "ndim") and getattr(obj, "ndim", 0):
            return obj.tolist()
        return obj.item()
    # msgspec's documented enc_hook protocol ("Extending" in its docs): NotImplementedError says
    # "this type is not supported" and msgspec reports it as such; nothing is left unwritten.
    raise NotImplementedError(f"cannot dump a {type(obj).__name__}")


def _json_lists(value: Any) -> Any:
    """JSON mode has lists where Python mode keeps tuples (``CounterSummary.points``)."""
    if isinstance(value, dict):
        return {k: _json_lists(v) for k, v in value.items()}
    if isinstance(value, tuple) or (isinstance(value, list) and value and isinstance(value[0], (list, tuple, dict))):
        return [_json_lists(v) for v in value]
    return value  # a scalar, or a list of scalars (every list here holds one kind)


def _may_hold_tuple(tp: Any) -> bool:
    if tp is tuple or typing.get_origin(tp) is tuple:
        return True
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return bool(_tuple_fields(tp))
    return any(_may_hold_tuple(a) for a in typing.get_args(tp))


@functools.cache
def _tuple_fields(cls: type) -> frozenset[str]:
    """The fields of ``cls`` whose declared type can hold a tuple: the only ones JSON mode
    walks (a walk over the whole dump would cost more than the dump itself)."""
    return frozenset(f.name for f in msgspec.structs.fields(cls) if _may_hold_tuple(f.type))


class Result(msgspec.Struct, kw_only=True):
    """Keyword-only fields, mutable, compared by value (as the pydantic models were). msgspec
    options are per class: each subclass says ``kw_only=True`` again (a required field may
    then follow a defaulted one, as in pydantic)."""

    def model_dump(
        self,
        *,
        mode: Literal["python", "json"] = "python",
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
    ) -> dict[str, Any]:
        """The fields as plain data, normalised through their types; ``include``/``exclude``
        name top-level fields. ``mode="json"`` gives lists for tuples (enums are their values
        in both modes: every enum here is a ``str`` enum, equal to its value)."""
        raw = msgspec.to_builtins(self, enc_hook=_numpy_to_python)
        typed = msgspec.convert(raw, type(self), strict=False)
        data: dict[str, Any] = msgspec.to_builtins(typed)
        if include is not None:
            keep = set(include)
            data = {k: v for k, v in data.items() if k in keep}
        if exclude:
            drop = set(exclude)
            data = {k: v for k, v in data.items() if k not in drop}
        if mode == "json":
            for name in _tuple_fields(type(self)) & data.keys():
                data[name] = _json_lists(data[name])
        return data

    @classmethod
    def model_validate(cls: type[R], obj: Any) -> R:
        """``obj`` (an instance, or a mapping of the fields) as this type; unknown keys are
        ignored, a missing or mistyped field raises ``msgspec.ValidationError``."""
        if isinstance(obj, cls):
            return obj
        return msgspec.convert(obj, cls, strict=False)

    def model_copy(self: R, *, update: dict[str, Any] | None = None) -> R:
        """A shallow copy, with ``update``'s fields replaced (not validated, as pydantic's)."""
        return msgspec.structs.replace(self, **(update or {}))


_AT = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")


def error_location(error: msgspec.ValidationError) -> tuple[str, str]:
    """``("frames.count", "Expected `int`, got `str`")`` from msgspec's
    "Expected `int`, got `str` - at `$.frames.count`": pydantic's dotted ``loc`` (list indexes
    as numbers, a missing field named at its own place), and the message without the path."""
    m = _AT.match(str(error))
    msg, path = (m.group("msg"), m.group("path") or "") if m else (str(error), "")
    parts = [p for p in re.split(r"[.\[\]]+", path) if p]
    missing = _MISSING.match(msg)
    if missing:
        parts.append(missing.group("field"))
        msg = "Field required"
    return ".".join(parts), msg
