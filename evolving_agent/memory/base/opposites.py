"""Opposite complaints, in any of the languages friction is written in.

Two beliefs swing against each other only when something relates them; taking turns
day to day is not enough (two unrelated beliefs touched on alternating days are a
coincidence, not a pendulum).  One relation is *meaning*: the friction behind one
complains the opposite way from the friction behind the other — "too long" against
"not enough detail", "just do it, don't ask" against "changed it without asking".

:func:`pole` says which side of which axis a text complains about, from a small phrase
list per axis and language, on purpose: a deterministic list can be read, tested and
extended; a guess cannot.  Phrases are matched on the normalised text
(:func:`memory.similarity.normalise`: case, width, look-alike letters, invisible
characters folded); the second side is matched first and cut out, so "too short"
never also counts as "short".  Standard library and :mod:`similarity` only.
"""

from __future__ import annotations

from functools import cache, lru_cache

from evolving_agent.memory.base.similarity import normalise

# (axis, side 0 phrases, side 1 phrases)
AXES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "length",
        (  # it was too much: shorter
            "too long", "shorter", "too verbose", "wordy", "too much detail", "one-line version",
            "tl;dr", "more concise", "be concise",
            "demasiado larg", "más corto", "más corta", "más breve",
            "trop long", "plus court", "plus concis",
            "zu lang", "kürzer", "zu ausführlich",
            "слишком длин", "короче", "слишком подробн",
            "طويلة جدًا", "طويلة جدا", "طويل جدًا", "طويل جدا", "أقصر",
            "ארוכה מדי", "ארוך מדי", "קצר יותר", "יותר קצר",
            "太长", "太長", "短一点", "简短一点",
            "長すぎ", "短くして", "もっと短く",
            "너무 길", "짧게",
            "बहुत लंबा", "बहुत लंबी", "छोटा करो", "संक्षेप में",
            "ยาวเกินไป", "สั้นกว่านี้", "สั้นลง",
        ),
        (  # it was too little: more
            "too short", "not enough information", "not enough detail", "more detail",
            "too terse", "too brief", "more context", "left out the details", "more thorough",
            "más detalle", "demasiado cort", "falta información", "más información",
            "plus de détails", "trop court", "pas assez d'information", "plus d'informations",
            "mehr einzelheiten", "mehr details", "zu kurz", "nicht genug information",
            "больше подробностей", "слишком коротк", "не хватает информации", "подробнее",
            "مزيدًا من التفاصيل", "مزيدا من التفاصيل", "مزيد من التفاصيل", "المزيد من التفاصيل",
            "قصيرة جدًا", "قصيرة جدا", "معلومات غير كافية",
            "יותר פרטים", "קצרה מדי", "קצר מדי", "חסר מידע",
            "更多细节", "更多細節", "太短", "信息不够", "详细一点",
            "もっと詳しく", "短すぎ", "情報が足りない", "詳しく",
            "더 자세", "너무 짧", "정보가 부족",
            "और विवरण", "बहुत छोटा", "जानकारी कम", "अधिक जानकारी",
            "รายละเอียดเพิ่ม", "สั้นเกินไป", "ข้อมูลไม่พอ", "ละเอียดกว่านี้",
        ),
    ),
    (
        "asking",
        (  # it asked too much: just act
            "don't ask", "dont ask", "stop asking", "too many questions", "just do it",
            "no preguntes", "hazlo y ya", "deja de preguntar",
            "ne demande pas", "arrête de demander",
            "frag nicht", "mach einfach", "hör auf zu fragen",
            "не спрашивай", "просто сделай",
            "لا تسأل", "نفّذ فقط", "نفذ فقط",
            "אל תשאל", "פשוט תעשה",
            "别每次都问", "别问", "直接做",
            "聞かずに", "いちいち聞",
            "묻지 말고", "그냥 해",
            "मत पूछो", "बस कर दो",
            "ไม่ต้องถาม", "ทำไปเลย",
        ),
        (  # it acted without asking: ask first
            "should have asked", "without asking", "didn't ask", "ask first", "unasked",
            "sin preguntar", "sans demander", "ungefragt", "ohne zu fragen",
            "без спроса", "без вопроса", "دون سؤال", "بدون سؤال", "בלי לשאול",
            "没问就", "沒問就", "頼まれていない", "確認せず", "묻지 않고", "बिना पूछे", "โดยไม่ถาม",
        ),
    ),
    (
        "tone",
        ("too formal", "too stiff", "demasiado formal", "trop formel", "zu förmlich",
         "слишком формальн", "太正式", "堅すぎ", "너무 딱딱"),
        ("too casual", "too chatty", "demasiado informal", "trop familier", "zu locker",
         "слишком фамильярн", "太随便", "くだけすぎ", "너무 가벼"),
    ),
)  # fmt: skip


@cache
def _axes() -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    return tuple(
        (name, tuple(normalise(p) for p in one), tuple(normalise(p) for p in other))
        for name, one, other in AXES
    )


@lru_cache(maxsize=4096)  # a nightly asks it of the same few complaints, pair by pair
def pole(text: str) -> tuple[str, int] | None:
    """Which side of which axis ``text`` complains about: (axis, 0 | 1), or None when it
    names neither side or both."""
    low = " ".join(normalise(text).replace("’", "'").split())
    for name, one, other in _axes():
        hits_other = any(p in low for p in other)
        for p in other:
            low = low.replace(p, " ")
        hits_one = any(p in low for p in one)
        if hits_one != hits_other:
            return name, 0 if hits_one else 1
    return None


def opposite_complaints(a: str, b: str) -> bool:
    """``a`` and ``b`` complain about the same axis from opposite sides."""
    pa, pb = pole(a), pole(b)
    return pa is not None and pb is not None and pa[0] == pb[0] and pa[1] != pb[1]
