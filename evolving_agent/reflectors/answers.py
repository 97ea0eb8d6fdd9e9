"""What reflectors answer: the nightly and weekly answer models.

A reflector returns one of these; the job checks it in context before anything is
written (:mod:`evolving_agent.reflectors.answer_check`).  The models say the shape of an
answer (fields, lengths, the 2-3 line bias); the line rules their validators apply
(no self-description, no quota, no score) are here beside them.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evolving_agent.memory.canon.canon_diff import Section
from evolving_agent.memory.ops.hypotheses import quote
from evolving_agent.memory.ops.today import CarryType

# A self-description in any person: "I am…", "You tend to…", "The assistant is…",
# "It is too…".  A bias is an instruction for the day, never a portrait.
_SELF_DESCRIPTION = re.compile(
    r"^\W*(?:"
    r"(?:i|we)\s+(?:am|are|was|were|feel|tend|have\s+become|always|never|usually|often|seem"
    r"|have\s+been|had\s+been|can\s+be|could\s+be)"
    r"|i['’](?:m|ve)|we['’](?:re|ve)|you['’](?:re|ve)"
    r"|you\s+(?:are|were|tend|have\s+become|have\s+been|had\s+been|always|never|usually"
    r"|often|seem)"
    r"|(?:(?:the|this|our|my)\s+)?(?:assistant|agent|model|ai|claude)\s+"
    r"(?:is|was|tends|has\s+become|has\s+been|always|never|usually|often|seems|feels|can\s+be)"
    r"|(?:it|he|she|they)\s+(?:is|are|tends|tend|seems|seem)\s+(?:a|an|too|someone|very|quite)"
    r")\b",
    re.I,
)
# A portrait of a named third person: "Kai tends to be cautious", "Mira is too verbose".
_NAMED_PORTRAIT = re.compile(
    r"^\W*[A-Z][\w'’-]{1,30}\s+(?:tends|seems|feels|always|never|usually|often|has\s+become"
    r"|has\s+been|can\s+be|is\s+(?:too|very|quite|rather|always|often|usually|never|a|an"
    r"|someone|cautious|careful|verbose|slow|hasty|prone))\b"
)
# Japanese: "私は…傾向がある", "あなたは…だ", "アシスタントは…" — a sentence about who
# someone is, not what to do.
_JA_PORTRAIT = re.compile(
    r"^\W*(?:私|わたし|僕|ぼく|俺|自分|我々|私たち|あなた|君|アシスタント|エージェント|モデル|AI)"
    r"(?:は|が|って)"
    r"|(?:傾向が(?:ある|あります)|しがち|がちだ|がちです|な性格|なタイプ|という性質)"
)
# Japanese quotas and counts: "最低3つ", "少なくとも", "3つ記録", "毎回…記録".
_JA_QUOTA = re.compile(
    r"(?:最低|少なくとも|最少|ノルマ|以上の(?:反省|自己批判|失敗|ミス))"
    r"|[0-9０-９一二三四五六七八九十]+\s*(?:つ|個|件|回|点)(?:以上)?(?:の)?"
    r"(?:反省|自己批判|失敗|ミス|摩擦|批判|振り返り|記録|書|挙げ|メモ)"
    r"|(?:すべて|全て|毎回|毎日|逐一|一つ残らず)の?(?:失敗|ミス|反省|摩擦)(?:を|も)?"
    r"(?:記録|書|メモ|挙げ)"
)
# A quota or a count of self-criticism: the killed design (docs/left-out.md), also as
# "3 or more", "3+", "five new slips", or friction logged twice / after every answer.
_COUNT = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|several|multiple)"
_FAULTS = r"(?:friction|self[- ]critic\w*|criticisms?|mistakes|negations|complaints|failures|slips)"
_QUOTA = re.compile(
    r"\b(?:at\s+least|no\s+fewer\s+than|no\s+less\s+than|a\s+minimum\s+of|quota|target\s+of)\b"
    r"|\b(?:count|number\s+of|tally)\b[^.]{0,40}?"
    r"\b(?:friction|self[- ]critic\w*|criticism\w*|mistakes?|negations?|failures?|slips?)"
    r"|\b" + _COUNT + r"\s*(?:\+|or\s+more|and\s+up|plus)?\s+"
    r"(?:(?:more|new|honest|fresh|separate|distinct|of\s+(?:your|my|the|our))\s+)?"
    + _FAULTS
    + r"|\b(?:log|record|note|write\s+down|report|list)\b[^.]{0,30}?\b"
    r"(?:friction|self[- ]critic\w*|mistakes?|slips?)\b[^.]{0,40}?"
    r"\b(?:twice|thrice|\d+\s+times|after\s+every|after\s+each|every\s+(?:answer|reply|hour|turn)"
    r"|per\s+(?:answer|reply|hour|turn|session|day))\b"
    # "Write five reflections tonight", "Note down every slip, however small".
    r"|\b(?:write|log|record|note|jot|list|collect|produce|give)\b(?:\s+down)?[^.]{0,20}?\b"
    r"(?:" + _COUNT + r"|every|each|all)\b[^.]{0,20}?\b"
    r"(?:reflections?|self[- ]critic\w*|criticisms?|mistakes?|slips?|failures?|frictions?"
    r"|errors?|faults?|lessons?)\b",
    re.I,
)
_QUOTED = re.compile(r"“[^”]*”")
_JA_QUOTED = re.compile(r"「[^」]*」")
# A number used as a grade: "confidence: 0.8", "score 4", "4/5", "7 out of 10".
_SCORE = re.compile(
    r"\b(score|confidence|certainty|rating)\s*(of|:|=|is)?\s*\d"
    r"|\b\d+(\.\d+)?\s*(/|out\s+of)\s*(5|10|100)\b",
    re.I,
)


def check_no_score(text: str) -> str:
    if _SCORE.search(text):
        raise ValueError("no numeric scores or confidence figures, by design")
    return text


def check_meaning(line: str) -> str:
    """Refuse a self-description (any person), a quota / count of self-criticism, a score.

    A quotation in curly quotes (“…”, how grounding quotes the day's friction) is the
    user's or the session's words, not the instruction, and is not judged.
    """
    bare = _QUOTED.sub("“…”", line)
    bare = _JA_QUOTED.sub("「…」", bare)
    if _SELF_DESCRIPTION.match(bare) or _NAMED_PORTRAIT.match(bare) or _JA_PORTRAIT.search(bare):
        raise ValueError(
            "the bias is an executable instruction for the day, not a self-description"
        )
    if _QUOTA.search(bare) or _JA_QUOTA.search(bare):
        raise ValueError("no quota and no count of friction or self-criticism, by design")
    check_no_score(bare)
    return line


class Reading(BaseModel):
    """A model's reading of one untagged friction event as evidence about a hypothesis."""

    model_config = ConfigDict(extra="forbid")

    event: str
    hypothesis: str
    relation: str = Field(pattern="^(supports|contradicts)$")


class NewHypothesis(BaseModel):
    """A hypothesis a reflector raises from recurring untagged friction (origin nightly)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=300)
    when: str | None = Field(None, max_length=120)
    do: str | None = Field(None, max_length=120)
    cites: list[str] = Field(min_length=2)  # untagged friction ids from ≥ 2 distinct days

    @field_validator("text", "when", "do")
    @classmethod
    def _plain(cls, v: str | None) -> str | None:
        return None if v is None else check_meaning(quote(v, 300))


class NightlyReflection(BaseModel):
    """The nightly answer.  All of bias / carry empty means: a quiet day, invent nothing."""

    model_config = ConfigDict(extra="forbid")

    readings: list[Reading] = Field(default_factory=list)
    raise_hypothesis: NewHypothesis | None = None
    hypothesis: str | None = None
    carry_type: CarryType | None = None
    carry_text: str | None = Field(None, min_length=1, max_length=400)
    bias: str | None = None

    @field_validator("bias")
    @classmethod
    def _bias(cls, v: str | None) -> str | None:
        if v is None:
            return v
        lines = [ln.strip() for ln in v.strip().splitlines() if ln.strip()]
        if not 2 <= len(lines) <= 3:
            raise ValueError(
                "the bias is 2-3 lines: the instruction, its grounding, and (high stakes) "
                "what is at stake"
            )
        for ln in lines:
            if len(ln) > 300:
                raise ValueError("a bias line is at most 300 characters")
            check_meaning(ln)
        return "\n".join(lines)

    @field_validator("carry_text")
    @classmethod
    def _carry_text(cls, v: str | None) -> str | None:
        return None if v is None else check_meaning(" ".join(v.split()))

    def complete(self) -> bool:
        return self.bias is not None and self.carry_type is not None and bool(self.carry_text)

    def empty(self) -> bool:
        return not (self.complete() or self.readings or self.raise_hypothesis)


class ProposalDraft(BaseModel):
    """A weekly proposal's wording for one candidate hypothesis (the job adds the rest)."""

    model_config = ConfigDict(extra="forbid")

    hypothesis: str
    section: Section = "habits"
    text: str = Field(min_length=1, max_length=300)
    rationale: str = Field("", max_length=600)

    @field_validator("text", "rationale")
    @classmethod
    def _no_score(cls, v: str) -> str:
        return check_no_score(" ".join(v.split()))


class WeeklyReflection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    proposals: list[ProposalDraft] = Field(default_factory=list)
