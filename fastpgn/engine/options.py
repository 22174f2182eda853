"""Engine options: what an engine declares after ``uci``, and the values it may be given.

``_parse_option`` reads an ``option name ... type ...`` line (None where it
cannot); ``_option_value`` checks a caller's value against the declaration
(a spin's range, a combo's choices, a check's true/false, a button's no
value) and writes it as ``setoption`` sends it. ``fastpgn.engine``
re-exports ``Option``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastpgn.engine.info import _int
from fastpgn.errors import EngineError

__all__ = ["Option"]


@dataclass(frozen=True)
class Option:
    """One option as the engine declared it after ``uci``.

    ``default``, ``min`` and ``max`` are ints for a ``spin``, ``default`` a bool
    for a ``check``, text otherwise (None where the engine gave none);
    ``vars`` are a ``combo``'s choices.
    """

    name: str
    type: str
    default: object = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()


def _parse_option(rest: str) -> Option | None:
    """``name Hash type spin default 16 min 1 max 33554432`` -> Option; None if unreadable."""
    tokens = rest.split()
    keys = ("name", "type", "default", "min", "max", "var")
    fields: dict[str, list[str]] = {}
    vars_: list[str] = []
    current = None
    for token in tokens:
        if token in keys and not (current == "name" and token != "type"):
            if current == "var":
                vars_.append(" ".join(fields.pop("var", [])))
            current = token
            fields.setdefault(token, [])
            if token == "var":
                fields["var"] = []
        elif current is not None:
            fields[current].append(token)
    if current == "var":
        vars_.append(" ".join(fields.pop("var", [])))
    name = " ".join(fields.get("name", []))
    kind = " ".join(fields.get("type", [])).lower()
    if not name or not kind:
        return None
    written = " ".join(fields["default"]) if "default" in fields else None
    low = _int(" ".join(fields.get("min", []))) if "min" in fields else None
    high = _int(" ".join(fields.get("max", []))) if "max" in fields else None
    default: object = written
    if kind == "spin" and written is not None:
        default = _int(written)
    elif kind == "check" and written is not None:
        default = written.lower() == "true"
    return Option(name, kind, default, low, high, tuple(vars_))


def _option_value(option: Option, value: object, engine: str) -> str | None:
    where = f"option {option.name} of engine {engine}"
    if option.type == "button":
        if value not in (None, True):
            raise EngineError(f"{where} is a button: it takes no value")
        return None
    if option.type == "check":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower()
        raise EngineError(f"{where} takes true or false, not {value!r}")
    if option.type == "spin":
        try:
            # Whatever the caller gave: int() takes it or raises TypeError, caught here (int's stub
            # lists only the types it takes, so mypy would refuse ``object``).
            number = int(value)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise EngineError(f"{where} takes a whole number, not {value!r}") from None
        if (option.min is not None and number < option.min) or (option.max is not None and number > option.max):
            raise EngineError(f"{where} takes {option.min}..{option.max}, not {number}")
        return str(number)
    text = "" if value is None else str(value)
    if "\n" in text or "\r" in text:
        raise EngineError(f"{where}: a value cannot hold a line break")
    if option.type == "combo" and option.vars:
        for choice in option.vars:
            if choice.lower() == text.lower():
                return choice
        raise EngineError(f"{where} takes one of {', '.join(option.vars)}, not {text!r}")
    return text
