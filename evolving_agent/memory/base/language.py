"""Which language a piece of the owner's writing is in, so the words around it follow.

By script first: a text with letters of a script other than Latin is in that script's
language (Hangul → ko; kana → ja; Han without kana → zh; Cyrillic → ru; Arabic → ar;
Hebrew → he; Devanagari → hi; Thai → th), whatever commands or identifiers it holds in
ASCII ("rm -rf、git reset --hard を実行しようとしたとき" is Japanese).  A Latin text
is Spanish, French or German when its function words and accents say so more than
English's do, else English.  Deterministic, offline, standard library only.
"""

from __future__ import annotations

import re

# (language, a letter of its script); the first script with a letter in the text wins.
_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ko", re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")),
    ("ja", re.compile(r"[\u3040-\u30ff]")),
    ("zh", re.compile(r"[\u4e00-\u9fff]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")),
    ("th", re.compile(r"[\u0e00-\u0e7f]")),
)
_LATIN = {
    "en": r"\b(?:the|a|an|and|of|to|before|when|about|with|is|was|for|not|it|asked|wants?)\b",
    "es": r"\b(?:el|la|los|las|del|de|una?|con|por|para|antes|que|y|es|fue|cuando|sin|quiere"
    r"|usuario|pidió)\b|[ñ¿¡]",
    "fr": r"\b(?:le|la|les|des|une?|du|avec|pour|avant|est|était|quand|pas|dans|trop|et|veut"
    r"|utilisateur)\b|\b[dlj]'|[çèêàù]",
    "de": r"\b(?:der|die|das|und|nicht|vor|mit|ein|eine|zu|bevor|ist|war|will|nutzer|den"
    r"|dem)\b|[äöüß]",
}


def language_of(*texts: str | None) -> str:
    """The language the texts (one owner's writing, together) are written in."""
    text = " ".join(t for t in texts if t)
    for lang, letter in _SCRIPTS:
        if letter.search(text):
            return lang
    lowered = text.lower()
    scores = {lang: len(re.findall(p, lowered)) for lang, p in _LATIN.items()}
    best = max(scores, key=lambda k: (scores[k], k == "en"))
    return best if scores[best] > scores["en"] else "en"
