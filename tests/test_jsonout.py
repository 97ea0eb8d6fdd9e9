"""The JSON a model CLI prints among its other output (``evolving_agent/jsonout.py``),
shared by the reflectors' answer readers."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.jsonout import json_lines, json_object


def test_a_whole_object_is_read_as_it_is() -> None:
    assert json_object('{"result": "hi"}') == {"result": "hi"}
    assert json_object('\n  {\n  "result": "multi-line"\n}\n') == {"result": "multi-line"}


def test_a_warning_line_before_a_pretty_printed_object_is_passed_over() -> None:
    text = 'Warning: 256-color support not detected\n{\n  "response": "ok"\n}\n'
    assert json_object(text) == {"response": "ok"}


def test_the_last_object_line_wins_when_other_lines_follow_or_precede() -> None:
    text = '{"type": "first"}\n{"type": "last"}\nbye\n'
    # Not one object as a whole, nor from its first brace: the last line that is one.
    assert json_object(text) == {"type": "last"}


def test_no_object_is_none_and_json_that_is_no_object_does_not_count() -> None:
    assert json_object("") is None
    assert json_object("Not logged in") is None
    assert json_object('["a", "list"]\n"a string"\n42') is None
    assert json_object("{broken") is None


def test_lines_are_the_object_lines_in_order() -> None:
    text = 'log: starting\n{"type": "a"}\n[1, 2]\n{"type": "b", "n": 1}\n{torn\n'
    assert json_lines(text) == [{"type": "a"}, {"type": "b", "n": 1}]
    assert json_lines("") == []


objects = st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3)
# Lines of noise: no brackets or quotes, and no character that splits a line.
_NOT_IN_NOISE = '{}[]"\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029'
noise = st.text(alphabet=st.characters(blacklist_characters=_NOT_IN_NOISE), max_size=20)


@settings(max_examples=50)
@given(events=st.lists(objects, max_size=4), junk=st.lists(noise, max_size=4))
def test_an_event_stream_gives_back_its_events_whatever_lines_lie_between(
    events: list[dict[str, object]], junk: list[str]
) -> None:
    lines = [json.dumps(e) for e in events]
    mixed = [x for pair in zip(lines, junk, strict=False) for x in pair] + lines[len(junk) :]
    assert json_lines("\n".join(mixed)) == events
    if events:
        assert json_object("\n".join([*junk, *lines])) == (
            events[0] if len(events) == 1 else events[-1]
        )
