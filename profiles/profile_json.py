"""A job profile's JSON form: its frozen records to plain values and back, each field checked
against its declared type (:meth:`profiles.profile.JobProfile.to_dict` and ``from_dict`` use it)."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from phaseline.errors import ProfileError
from phaseline.jsonnum import MAX_JSON_INT, json_int
from profiles.profile_stats import fail

__all__ = ["from_plain", "to_plain"]

def to_plain(value: object) -> object:
    """Records as objects, mappings as objects, tuples and lists as lists; JSON-ready."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    return value


T = TypeVar("T")


def from_plain(cls: type[T], data: object, where: str) -> T:
    """The record ``cls`` from parsed JSON, each field converted to its declared type; a
    :class:`~phaseline.errors.ProfileError` names the first bad field (``where.field``)."""
    if not isinstance(data, dict):
        fail(where, f"expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        fail(f"{where}.{unknown[0]}", "unknown field (typo, or a profile from a newer phaseline?)")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                fail(f"{where}.{f.name}", "required field is missing")
            continue
        kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{where}.{f.name}")
    try:
        return cls(**kwargs)
    except ProfileError as exc:
        raise ProfileError(f"{where}.{exc}") from exc


def _convert(hint: Any, value: object, where: str) -> object:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = (a for a in args if a is not type(None))
        return _convert(inner, value, where)
    if value is None:
        fail(where, "must not be null")
    if hint is bool:
        if not isinstance(value, bool):
            fail(where, f"expected true or false, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            fail(where, f"expected a number, got {value!r}")
        return float(value)
    if hint is int:
        if (n := json_int(value)) is None:
            fail(where, f"expected an integer of at most {MAX_JSON_INT:.0e} in size, got {value!r}")
        return n
    if hint is str:
        if not isinstance(value, str):
            fail(where, f"expected a string, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            fail(where, f"expected a list, got {type(value).__name__}")
        return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (Mapping, dict) or hint is Mapping:
        if not isinstance(value, dict):
            fail(where, f"expected an object, got {type(value).__name__}")
        return {str(k): _convert(args[1], v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_plain(hint, value, where)
    raise TypeError(f"profile field type {hint!r} has no JSON conversion")  # a bug: a record's new field type
