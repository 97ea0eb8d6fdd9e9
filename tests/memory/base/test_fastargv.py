"""The fast paths' argv reader: a plain call is read exactly, anything else is click's."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.memory.base.fastargv import option_value, plain_call, utf8

OPTIONS = ("--format", "--session")
# A plain value: not empty, not option-like, encodable as UTF-8.
plain = st.text(min_size=1, max_size=12).filter(lambda v: not v.startswith("-") and utf8(v))


def test_a_lone_surrogate_is_not_utf8() -> None:
    assert utf8("ok: ü, 日本")
    assert not utf8("bad \udcff byte")


def test_option_value_takes_the_next_argument_or_the_equals_part() -> None:
    rest = ["json", "more"]
    assert option_value("--format", rest) == ("--format", "json")
    assert rest == ["more"]  # the value was taken from rest
    assert option_value("--format=json", ["x"]) == ("--format", "json")
    assert option_value("--format", []) == ("--format", None)
    assert option_value("--format=", []) == ("--format", None)
    assert option_value("--format", ["--session"]) == ("--format", None)


@given(
    root=st.none() | plain,
    values=st.dictionaries(st.sampled_from(OPTIONS), plain, max_size=2),
    argument=st.none() | plain.filter(lambda v: v != "boot"),
    equals=st.booleans(),
)
def test_a_plain_call_is_read_back_exactly(
    root: str | None, values: dict[str, str], argument: str | None, equals: bool
) -> None:
    argv = [] if root is None else ["--root", root]
    argv.append("boot")
    if argument is not None:
        argv.append(argument)
    for name, value in values.items():
        argv += [f"{name}={value}"] if equals else [name, value]
    want = dict(values) if root is None else {"--root": root, **values}
    assert plain_call(argv, "boot", OPTIONS, arguments=1) == (
        want,
        [] if argument is None else [argument],
    )


def test_what_is_not_plain_is_left_to_click() -> None:
    call = lambda argv: plain_call(argv, "boot", OPTIONS, arguments=1)  # noqa: E731
    assert call(["friction", "x"]) is None  # another command
    assert call(["boot", "a", "b"]) is None  # an argument too many
    assert call(["--format", "json", "boot"]) is None  # only --root before the command
    assert call(["boot", "--format", "json", "--format", "md"]) is None  # twice
    assert call(["boot", "--verbose"]) is None  # an option it does not serve
    assert call(["boot", "--format", "-x"]) is None  # an option-like value
    assert call(["boot", "caf\udce9"]) is None  # not UTF-8
    assert call(["--root", "r"]) is None  # no command at all
