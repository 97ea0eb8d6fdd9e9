"""probe suggest: drafts for every Canon entry, in the entry's language, that validate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evolving_agent.memory.base.language import language_of as language
from evolving_agent.memory.base.yamlio import parse_yaml
from evolving_agent.memory.canon.probe_file import check_probes_text, resolve_entry
from evolving_agent.memory.ops.canon_edit import save_canon
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes.suggest import draft_for_root, suggest
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root

# Twenty entries in six languages (and scripts).
CANON = {
    "values": [
        "Say what I know and what I don't",
        "Ask before anything that cannot be undone",
        "Nunca borrar datos de producción sin una copia de seguridad",
        "Никогда не запускать миграции в пятницу вечером",
        "先回答问题，再解释原因",
        "本番環境では必ず確認してから実行する",
        "사용자의 코드 스타일을 그대로 따른다",
    ],
    "self_understanding": [
        "I drift toward long answers when unsure",
        "Je propose trop d'options quand la demande est claire",
        "I trust the tests more than my memory of the code",
        "Ich erkläre zu viel, bevor ich antworte",
        "我容易在不确定时给出太多选项",
        "إذا لم أكن متأكدا أقول ذلك بوضوح",
    ],
    "habits": [
        "Lead with the answer, then the reasoning",
        "Quote the error message exactly",
        "Run the tests before saying it works",
        "Responder en el idioma en que me escriben",
        "उत्तर छोटा रखो जब तक ज़्यादा न माँगा जाए",
        "변경 전에 diff를 보여 준다",
        "Keep commit messages to one line of why",
    ],
}
SCRIPTS = {
    "zh": r"[\u4e00-\u9fff]",
    "ja": r"[\u3040-\u30ff]",
    "ko": r"[\uac00-\ud7af]",
    "ru": r"[\u0400-\u04ff]",
    "ar": r"[\u0600-\u06ff]",
    "hi": r"[\u0900-\u097f]",
}


def _identity_yaml() -> str:
    lines = ["schema_version: 1", "name: Assistant", ""]
    for section, entries in CANON.items():
        lines.append(f"{section}:")
        lines += [f'  - "{e}"' for e in entries]
    return "\n".join(lines) + "\n"


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    root = fresh_root(tmp_path / "memory")
    save_canon(root, "identity.yaml", _identity_yaml())
    return root


def test_twenty_entries_yield_at_least_fifty_probes_that_validate() -> None:
    drafts = suggest(CANON)
    assert sum(len(v) for v in CANON.values()) == 20
    assert len(drafts) >= 50
    assert len({d["key"] for d in drafts}) == len(drafts)
    parsed = check_probes_text({"schema_version": 1, "probes": drafts}, CANON, file="drafts")
    # Every entry has its probes, and each reference names exactly that entry.
    covered = {resolve_entry(CANON, p.entry) for p in parsed.probes}
    assert covered == {e for entries in CANON.values() for e in entries}


@pytest.mark.parametrize(
    ("entry", "lang"),
    [(e, lang) for entries in CANON.values() for e in entries if (lang := language(e)) != "en"],
)
def test_a_draft_is_written_in_the_language_of_its_entry(entry: str, lang: str) -> None:
    [section] = [s for s, entries in CANON.items() if entry in entries]
    drafts = [d for d in suggest({section: [entry]})]
    assert len(drafts) == 3
    for d in drafts:
        if lang in SCRIPTS:
            # The prompt around the quoted entry is in the entry's script too.
            outside = d["prompt"].replace(entry.rstrip("."), "")
            assert re.search(SCRIPTS[lang], outside), d["prompt"]
        assert entry.rstrip(".。") in d["prompt"]


def test_language_is_told_by_script_and_function_words() -> None:
    assert [language(e) for e in CANON["values"]] == ["en", "en", "es", "ru", "zh", "ja", "ko"]
    assert language("Ich erkläre zu viel, bevor ich antworte, und nicht immer gut") == "de"
    assert language("Je propose trop d'options quand la demande est claire") == "fr"


def test_an_entry_in_a_language_without_situations_gets_the_english_ones() -> None:
    # language_of knows Hebrew and Thai; situations.yaml does not: English, not a KeyError.
    english = suggest({"values": ["Ask before deleting files"]})
    for entry in ("שאל לפני שאתה מוחק קבצים", "ถามก่อนลบไฟล์"):
        assert language(entry) in ("he", "th")
        drafts = suggest({"values": [entry]})
        assert [d["implies"] for d in drafts] == [d["implies"] for d in english]
        assert all(entry in d["prompt"] for d in drafts)


def test_suggest_prints_drafts_that_canon_edit_accepts_and_then_skips_them(
    root: MemoryRoot,
) -> None:
    out = run_cli("probe", "suggest")
    assert out.exit_code == 0, out.output
    assert out.output.startswith("# Drafts from 'evolving-agent probe suggest'")
    data = parse_yaml(out.output, file="drafts.yaml")
    # The template's probe already covers "Lead with the answer": 19 entries, 57 drafts.
    assert len(data["probes"]) == 57
    assert not [p for p in data["probes"] if p["entry"].startswith("habits: Lead with")]
    # The human keeps them as they are (replacing the template's two): the writer
    # validates and commits them, and the next suggestion is only the entry left bare.
    assert save_canon(root, "probes.yaml", out.output)
    again = draft_for_root(root)
    assert [d["entry"] for d in again] == ["habits: Lead with the answer"] * 3
