"""The fixed words of a morning — the framing around the owner's quotes — in the owner's
language.

The rules reflector writes each morning from a hypothesis's own words (trigger,
counter-move, claim) and quoted friction; the words around them ("Try it once today
and notice what happens", "Grounding, …", "the other way", "(12 days ago)", what is at
stake) come from one phrase table, ``evolving_agent/data/words/framing.yaml``, in the
language of the hypothesis those words belong to
(:func:`evolving_agent.memory.base.language.language_of`: its claim, trigger and
counter-move; for a raised pattern the friction it names; for a moment no hypothesis
covers, that friction).  A language the table lacks, or a key it lacks, is English.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from evolving_agent.memory.base.language import language_of
from evolving_agent.records import record

FRAMING_FILE = "words/framing.yaml"  # under evolving_agent/data/
FALLBACK = "en"


@functools.cache
def _table() -> dict[str, dict[str, Any]]:
    from importlib.resources import files

    from ruamel.yaml import YAML

    text = files("evolving_agent").joinpath("data", FRAMING_FILE).read_text(encoding="utf-8")
    data = YAML(typ="safe").load(text)
    return {str(lang): dict(v) for lang, v in data.items()}


def languages() -> list[str]:
    """The languages the phrase table words a morning in."""
    return list(_table())


@record(frozen=True)
class Words:
    """The phrase table's entries for one language (English where it has none)."""

    lang: str

    def _entry(self, key: str) -> Any:
        table = _table()
        own = table.get(self.lang, {})
        return own[key] if key in own else table[FALLBACK][key]

    def __getitem__(self, key: str) -> str:
        return str(self._entry(key))

    def _typed(self, group: str, ctype: str) -> str:
        own = _table().get(self.lang, {}).get(group) or {}
        return str(own.get(ctype) or _table()[FALLBACK][group][ctype])

    def frame(self, ctype: str) -> str:
        return self._typed("frames", ctype)

    def firm(self, ctype: str) -> str | None:
        if ctype not in _table()[FALLBACK]["firm"]:
            return None
        return self._typed("firm", ctype)

    def label(self, ctype: str) -> str:
        return self._typed("labels", ctype)

    def fmt(self, key: str, **values: object) -> str:
        return self[key].format(**values)

    def sentence(self, text: str, *, capital: bool = True) -> str:
        """``text`` as one sentence: its own period, and its first letter up (cased
        scripts) unless ``capital`` is false — a sentence that opens with the owner's
        own words ("rm -rf … を実行しようとしたとき") keeps them as written."""
        text = text.strip().rstrip(".。।")
        return (text[:1].upper() if capital else text[:1]) + text[1:] + self["period"]

    def leads(self, key: str) -> bool:
        """The template ``key`` opens with its own words, not a placeholder."""
        return not self[key].startswith("{")

    def then(self, first: str, second: str) -> str:
        """Two sentences in a row (``first`` gets its period)."""
        period = self["period"]
        return f"{first}{period}{'' if period == '。' else ' '}{second}"


def words(lang: str | None) -> Words:
    return Words(lang if lang in _table() else FALLBACK)


def words_for(*texts: str | None) -> Words:
    """The framing for writing whose own words are ``texts``."""
    return words(language_of(*texts))


def trigger_forms(when: str) -> list[str]:
    """``when`` as a morning may say it: the raised-pattern trigger (English in the
    register) in every language of the table; any other trigger as written."""
    english = _table()[FALLBACK]["raised_trigger"]
    if when != english:
        return [when]
    return [str(v["raised_trigger"]) for v in _table().values() if "raised_trigger" in v]


def when_words() -> set[str]:
    """The words that tie a line to its trigger, in every language of the table."""
    return {str(w) for v in _table().values() for w in v.get("when_words") or []}


def _template_pattern(template: str) -> str:
    parts = re.split(r"(\{\w+\})", template)
    out = []
    for part in parts:
        if part == "{date}":
            out.append(r"(?P<date>\d{4}-\d{2}-\d{2})")
        elif part == "{days}":
            out.append(r"(?P<days>\d+)")
        elif part.startswith("{"):
            out.append(r".*?")
        else:
            out.append(re.escape(part))
    return "".join(out)


def age_labels() -> list[re.Pattern[str]]:
    """For readers of a morning (the tests' grader): each language's dated label."""
    return [re.compile(_template_pattern(str(v["ago"]))) for v in _table().values() if "ago" in v]
