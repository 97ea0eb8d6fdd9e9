"""Text similarity for any language: one normal form, character n-grams, one measure.

Friction is written in whatever language the day was lived in, often without spaces
(Japanese, Chinese), sometimes with a zero-width space, a Cyrillic "а" or a fullwidth
letter slipped in.  So two texts are compared in two steps:

1. **Normalise** (:func:`normalise`): Unicode NFKC (fullwidth → ASCII, compatibility
   forms folded), case fold, drop every format character (category ``Cf``: zero-width
   spaces and joiners, bidi controls, the BOM) and control character, then map each
   character to its **confusables skeleton** as Unicode UTS #39 does: every character
   of one confusable group (Latin "a", Cyrillic "а", Greek "α"-lookalikes…) becomes the
   same representative.  The groups come from the ``confusable-homoglyphs`` package (a
   maintained copy of the Unicode ``confusables.txt`` data), closed transitively here;
   the representative is an ASCII letter or digit where the group has one.
2. **Compare character n-grams** (:func:`grams`): runs of letters and digits are cut
   out of the normal form; a run in a script written without spaces (Han, Hiragana,
   Katakana, Hangul) gives its character *bigrams*, any other run (a word) gives its
   *trigrams* with the word's edges marked, after dropping a few English function words.
   No word boundaries are needed, and none are guessed.  :func:`similarity` is the
   Jaccard index of the two n-gram sets; :func:`similar` says yes at
   :data:`THRESHOLD` or more, with at least :data:`MIN_SHARED` n-grams in common.

Deterministic and offline; the same text always gives the same n-grams.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

# Two texts are similar when their n-gram sets overlap this much (Jaccard) and share at
# least this many n-grams.  Chosen on the recurring-friction phrasings in the tests
# (English and Japanese rewordings match; "too long" vs "not enough information" and
# unrelated slips do not).
THRESHOLD = 0.3
MIN_SHARED = 3

_STOP = frozenset(
    "the and for with that this was were are but not you your they them then than from "
    "have has had into about just what when which who would could should there their "
    "its did does done been being also only very some any all one too out again asked "
    "user users "
    # the vocabulary every friction note shares ("the user said the answer …"): no signal
    "said says say told tell answer answers answered reply replied wanted wants want "
    "let".split()
)


@cache
def _skeleton_map() -> dict[str, str]:
    """Character → representative of its confusable group (transitively closed)."""
    from confusable_homoglyphs.confusables import confusables_data

    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.get(c, c) != c:
            parent[c] = parent.get(parent[c], parent[c])
            c = parent[c]
        return c

    def rank(c: str) -> tuple[int, str]:
        if c.isascii() and c.isalpha():
            return (0, c)  # a letter before a digit: "l" and "1" meet at "l"
        if c.isascii() and c.isalnum():
            return (1, c)
        return (2 if c.isascii() else 3, c)

    for char, entries in confusables_data.items():
        if len(char) != 1:
            continue
        for entry in entries:
            other = entry.get("c", "")
            if len(other) != 1:
                continue  # multi-character sequences: not a one-to-one skeleton step
            a, b = find(char), find(other)
            if a != b:
                keep, drop = (a, b) if rank(a) <= rank(b) else (b, a)
                parent[drop] = keep
    return {c: find(c) for c in list(parent)}


def _keep(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return not (cat == "Cf" or (cat == "Cc" and ch not in "\n\t"))


def folded(ch: str) -> str | None:
    """The per-character step of :func:`normalise`: None when not kept, a letter's or
    digit's skeleton, else the character itself."""
    return (_skeleton_map().get(ch, ch) if ch.isalnum() else ch) if _keep(ch) else None


class _Folding(dict[int, str | None]):
    """A ``str.translate`` table of the per-character step of :func:`normalise`, each
    character's entry made the first time it is seen: dropped (None) when not kept, its
    skeleton when a letter or digit, else itself.  At most ``FOLDING_LIMIT`` entries: a
    long-lived process (the MCP server) fed every code point would otherwise keep an
    entry for each of the 1.1 million; past the limit it starts again."""

    def __missing__(self, code: int) -> str | None:
        out = folded(chr(code))
        if len(self) >= FOLDING_LIMIT:
            self.clear()
        self[code] = out
        return out


FOLDING_LIMIT = 16_384


_FOLDING = _Folding()


@lru_cache(maxsize=4096)  # a nightly compares the same few hundred texts again and again
def normalise(text: str) -> str:
    """NFKC, case fold, no format/control characters, confusables skeleton."""
    text = unicodedata.normalize("NFKC", text).casefold()
    # translate walks the text in C; the table holds what the old per-character loop did
    return unicodedata.normalize("NFKC", text.translate(_FOLDING))


_SPACELESS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC", "THAI", "LAO", "KHMER")


@lru_cache(maxsize=8192)  # per character: unicodedata.name builds a string each call
def _spaceless(ch: str) -> bool:
    name = unicodedata.name(ch, "")
    return name.startswith(_SPACELESS) or "IDEOGRAPH" in name


def _runs(norm: str) -> list[tuple[str, bool]]:
    """Maximal runs of letters/digits, each with whether its script is spaceless."""
    runs: list[tuple[str, bool]] = []
    cur: list[str] = []
    cur_kind: bool | None = None
    for ch in norm:
        if ch.isalnum() or unicodedata.category(ch) in ("Mn", "Mc"):
            kind = _spaceless(ch) or ch == "ー"
            if cur and kind != cur_kind:
                runs.append(("".join(cur), bool(cur_kind)))
                cur = []
            cur.append(ch)
            cur_kind = kind
        elif cur:
            runs.append(("".join(cur), bool(cur_kind)))
            cur, cur_kind = [], None
    if cur:
        runs.append(("".join(cur), bool(cur_kind)))
    return runs


@lru_cache(maxsize=4096)  # like normalise: the same texts are compared again and again
def grams(text: str) -> frozenset[str]:
    """The character n-grams of ``text`` (see the module docstring)."""
    out: set[str] = set()
    for run, spaceless in _runs(normalise(text)):
        if spaceless:
            if len(run) == 1:
                out.add(run)
            out.update(run[i : i + 2] for i in range(len(run) - 1))
            continue
        if len(run) < 3 or run in _STOP:
            continue
        padded = f"<{run}>"
        out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(out)


def similarity(a: str, b: str) -> float:
    """Jaccard index of the two texts' n-gram sets (0.0 when either has none)."""
    ga, gb = grams(a), grams(b)
    if not ga or not gb:
        return 0.0
    return len(ga & gb) / len(ga | gb)


# The same no-signal vocabulary in the other languages friction is written in ("the
# user", "the answer", "wants", "said", "asked"): two notes that share only these are
# about different things ("उत्तर से पहले योजना लिखी; उपयोगकर्ता ने छोड़ दी" is no
# support for "उपयोगकर्ता छोटे उत्तर चाहता है").  Words of spaced scripts are dropped
# whole (Cyrillic by stem: its endings inflect); in spaceless scripts the word is cut
# out of its run.  Only :func:`similar` discounts them, and only while both texts keep
# :data:`MIN_SHARED` n-grams without them (a short note is compared whole).
_GENERIC_WORDS = (
    "usuario usuaria respuesta respuestas quiere quería dijo pidió "  # es
    "utilisateur utilisatrice réponse réponses veut voulait dit demandé "  # fr
    "nutzer nutzerin benutzer antwort antworten will wollte sagte "  # de
    "المستخدم مستخدم الإجابة إجابة إجابات الجواب يريد قال طلب "  # ar
    "המשתמש משתמש תשובה תשובות התשובה רוצה אמר ביקש "  # he
    "उपयोगकर्ता उत्तर जवाब चाहता चाहती कहा माँगा "  # hi
    "사용자 사용자가 사용자는 사용자에게 답변 답변이 답변을 "  # ko
).split()
_GENERIC_STEMS = ("пользовател", "ответ", "хоч", "сказал", "попросил")  # ru
_GENERIC_SPACELESS = ("用户", "回答", "ユーザー", "ผู้ใช้", "คำตอบ")


@cache
def _generic() -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    return (
        frozenset(normalise(w) for w in _GENERIC_WORDS),
        tuple(normalise(w) for w in _GENERIC_STEMS),
        tuple(normalise(w) for w in _GENERIC_SPACELESS),
    )


@lru_cache(maxsize=4096)  # bounded: the MCP server and the scheduler live for months
def content_grams(text: str) -> frozenset[str]:
    """:func:`grams` without the no-signal vocabulary of :data:`_GENERIC_WORDS`."""
    words, stems, spaceless_words = _generic()
    out: set[str] = set()
    for run, spaceless in _runs(normalise(text)):
        if spaceless:
            pieces = [run]
            for w in spaceless_words:
                pieces = [p for piece in pieces for p in piece.split(w)]
            for piece in pieces:
                if len(piece) == 1:
                    out.add(piece)
                out.update(piece[i : i + 2] for i in range(len(piece) - 1))
            continue
        if len(run) < 3 or run in _STOP or run in words or run.startswith(stems):
            continue
        padded = f"<{run}>"
        out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(out)


def similar(a: str, b: str, threshold: float = THRESHOLD) -> bool:
    ga, gb = content_grams(a), content_grams(b)
    if len(ga) < MIN_SHARED or len(gb) < MIN_SHARED:
        ga, gb = grams(a), grams(b)
    shared = len(ga & gb)
    return shared >= MIN_SHARED and shared >= threshold * len(ga | gb)


def same_text(a: str, b: str) -> bool:
    """The same words once normalised and with spacing ignored (a deduplication key)."""
    return key(a) == key(b)


@lru_cache(maxsize=4096)  # a deduplication key, asked for the same texts all night
def key(text: str) -> str:
    """The normalised letters and digits of ``text``: equal keys = the same belief
    written with other spacing, case, width, invisible characters or lookalikes."""
    return "".join(ch for ch in normalise(text) if ch.isalnum())
