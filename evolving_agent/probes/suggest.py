"""``probe suggest``: draft probes for every Canon entry, for the human to edit.

No model is needed: each value, habit and self-understanding entry gets three situations
that would tempt a model to break it — the user asks for the opposite outright, insists
after a refusal, and offers a reason that sounds good — written in the language the
entry is written in, told as the rest of the product tells it
(:func:`evolving_agent.memory.base.language.language_of`), in English for a language
the situations do not have (Hebrew, Thai).
The situations live in ``evolving_agent/data/probes/situations.yaml``.  Each draft's
check is one the rule reader handles in every language: an answer that
honours the entry under pressure *asks or pushes back* (a question, in any language)
rather than reporting the opposite done (``asks_before_acting``).  Where a rule cannot
decide, ``probe diff --judge-cmd`` adds a second model's judgement.

The drafts are printed as ``probes.yaml`` text; nothing is written.  The human edits
them and commits with ``evolving-agent canon edit probes.yaml``.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from ruamel.yaml import YAML

from evolving_agent.memory.base.language import language_of
from evolving_agent.memory.canon.probe_file import SECTIONS
from evolving_agent.paths import MemoryRoot

SITUATIONS_FILE = "probes/situations.yaml"  # under evolving_agent/data/


@functools.cache
def _situations() -> dict[str, tuple[tuple[str, ...], str]]:
    """language -> (three situations with an ``{entry}`` slot, what honouring implies)."""
    from importlib.resources import files

    text = files("evolving_agent").joinpath("data", SITUATIONS_FILE).read_text(encoding="utf-8")
    data = YAML(typ="safe").load(text)
    return {lang: (tuple(v["situations"]), str(v["implies"])) for lang, v in data.items()}


def _reference(section: str, entry: str, entries: list[str]) -> str:
    """``SECTION: the shortest start of the entry no other entry of it shares``."""
    words = entry.split()
    for n in range(min(4, len(words)), len(words) + 1):
        start = " ".join(words[:n]).rstrip(",;:.、，。")
        if sum(" ".join(e.split()).casefold().startswith(start.casefold()) for e in entries) == 1:
            return f"{section}: {start}"
    return f"{section}: {entry}"


def suggest(identity: dict[str, Any], existing: set[str] | None = None) -> list[dict[str, Any]]:
    """Three draft probes for every entry of every section (keys unique, stable)."""
    taken = set(existing or ())
    out: list[dict[str, Any]] = []
    for section in SECTIONS:
        entries = [str(e) for e in identity.get(section) or []]
        for entry in entries:
            lang = language_of(entry)
            quoted = f"“{entry.strip().rstrip('.。')}”"
            stem = hashlib.sha256(f"{section}:{entry}".encode()).hexdigest()[:6]
            situations, implies = _situations().get(lang) or _situations()["en"]
            for n, situation in enumerate(situations, 1):
                key = f"{section.replace('_', '-')[:12]}-{stem}-{n}"
                if key in taken:
                    continue
                taken.add(key)
                out.append(
                    {
                        "key": key,
                        "entry": _reference(section, entry, entries),
                        "prompt": situation.format(entry=quoted),
                        "implies": implies,
                        "checks": {"asks_before_acting": True},
                    }
                )
    return out


def draft_for_root(root: MemoryRoot, *, every: bool = False) -> list[dict[str, Any]]:
    """Drafts for the Canon boot serves; entries with a probe already are left out unless
    ``every``."""
    from evolving_agent.memory.base.yamlio import parse_yaml, validate
    from evolving_agent.memory.canon.canon import IDENTITY_FILE, Identity
    from evolving_agent.memory.canon.canon_snapshot import load_canon
    from evolving_agent.memory.canon.probe_file import PROBES_FILE, check_probes_text, resolve_entry

    canon = load_canon(root)
    ident_path = root.canon / IDENTITY_FILE
    raw = canon.files.get(IDENTITY_FILE, b"").decode("utf-8")
    identity = validate(Identity, parse_yaml(raw, file=ident_path), file=ident_path).model_dump()
    have: set[str] = set()
    keys: set[str] = set()
    if (data := canon.files.get(PROBES_FILE)) is not None:
        path = root.canon / PROBES_FILE
        probes = check_probes_text(parse_yaml(data.decode("utf-8"), file=path), None, file=path)
        keys = {p.key for p in probes.probes}
        for p in probes.active():
            try:
                have.add(resolve_entry(identity, p.entry))
            except ValueError:
                continue
    drafts = suggest(identity, keys)
    if every:
        return drafts
    return [d for d in drafts if resolve_entry(identity, d["entry"]) not in have]


def render(drafts: list[dict[str, Any]]) -> str:
    """The drafts as ``probes.yaml`` text with a header saying what to do with them."""
    import io

    yaml = YAML()
    yaml.width = 4096
    yaml.allow_unicode = True
    buf = io.StringIO()
    yaml.dump({"schema_version": 1, "probes": drafts}, buf)
    return (
        "# Drafts from 'evolving-agent probe suggest': three situations per Canon entry that\n"
        "# would tempt a model to break it, in the entry's language.  Edit them (the prompts,\n"
        "# what each implies, the checks), then commit with:\n"
        "#   evolving-agent canon edit probes.yaml\n" + buf.getvalue()
    )
