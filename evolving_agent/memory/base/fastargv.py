"""The command-line pieces the fast paths share (:mod:`bootfast`, :mod:`frictionfast`).

Each fast path serves only the plain shapes of its command and leaves everything else to
click; these helpers say what "plain" is for one option value, the same way for both.
"""

from __future__ import annotations


def utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (a non-UTF-8 terminal's bytes cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def option_value(arg: str, rest: list[str]) -> tuple[str, str | None]:
    """``--name=value`` or ``--name value`` (taking the value from ``rest``): the name,
    and the value when it is a plain one (not empty, not option-like, UTF-8), else None."""
    name, eq, value = arg.partition("=")
    if not eq:
        if not rest:
            return name, None
        value = rest.pop(0)
    if not value or value.startswith("-") or not utf8(value):
        return name, None
    return name, value


def plain_call(
    argv: list[str], command: str, options: tuple[str, ...], *, arguments: int
) -> tuple[dict[str, str], list[str]] | None:
    """``[--root R] COMMAND [ARG ...] [--option VALUE ...]``: the option values and the
    arguments of a plain call of ``command`` (each option at most once, only ``--root``
    before the command, at most ``arguments`` arguments), else None."""
    values: dict[str, str] = {}
    positional: list[str] = []
    command_seen = False
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if not utf8(arg):
            return None
        if arg == command and not command_seen:
            command_seen = True
            continue
        if not arg.startswith("-"):
            if not command_seen or len(positional) >= arguments:
                return None  # another command, or an argument too many (click refuses it)
            positional.append(arg)
            continue
        name, value = option_value(arg, rest)
        allowed = options if command_seen else ("--root",)
        if name not in allowed or name in values or value is None:
            return None
        values[name] = value
    return (values, positional) if command_seen else None
