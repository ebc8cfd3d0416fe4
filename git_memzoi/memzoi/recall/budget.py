"""The context-pack size estimator: upstream's ``approx_words``, safe for unspaced scripts (pure).

memzoi-spec.md §5 measures a pack in whitespace-separated words, and the recall-v2 baseline depends on it (the
"onyx memory plane sentinel" pack is exactly 329 words). A whitespace count scores an unsegmented Japanese or
Chinese paragraph as one word (field report BR-24), so here every character of a script written without spaces
between words (Han, kana, Hangul, Thai, Lao, Khmer, Myanmar, Tibetan, fullwidth forms) is one unit, and every
maximal run of other non-space characters is one unit. For text with no such characters the count equals the
whitespace word count, so upstream's numbers are reproduced exactly.

The count is additive over prefixes: cutting text after its ``n``-th unit (:func:`cut`) and measuring the
result again gives ``n``. That is what lets a pack be truncated so that it can never overrun its budget.
"""

from __future__ import annotations

from git_memzoi.core.patterns import lazy

UNIT = "approx_words"
ESTIMATOR = "context_pack/approx_words-v1"
UNSPACED = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u0f00-\u0fff"  # Tibetan
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # Hangul jamo and syllables
    "\u2e80-\u2fdf\u3001-\u303f\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff"  # CJK radicals, punctuation, kana, bopomofo
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"  # Han, compatibility, fullwidth forms
    "\U00020000-\U0003134f"  # Han extensions B-G
)
_UNIT_RE = lazy(f"[{UNSPACED}]|[^\\s{UNSPACED}]+")
_HAS_UNSPACED = lazy(f"[{UNSPACED}]")
_WORD_RE = lazy(r"\S+")  # the same units for text without unspaced characters, without building the big class


def estimate(text: str) -> int:
    """The size of ``text`` in units (``approx_words``): whitespace words, each unspaced-script character apart.

    ``"a b c"`` → 3, ``"記憶管理"`` → 4, ``"API記憶"`` → 3, ``""`` → 0.
    """
    if text.isascii() or not _HAS_UNSPACED.search(text):
        return len(text.split())
    return sum(1 for _ in _UNIT_RE.finditer(text))


def record_estimate(title: str, body: str) -> int:
    """The per-record estimate of the budget walk (memzoi-spec.md §5 step 7): title + body + 6 units."""
    return estimate(title) + estimate(body) + 6


def unit_ends(text: str) -> list[int]:
    """The end offset in ``text`` of each unit, in order (``len(result) == estimate(text)``)."""
    units = _WORD_RE if text.isascii() else _UNIT_RE
    return [m.end() for m in units.finditer(text)]


def cut(text: str, units: int) -> str:
    """``text`` up to the end of its ``units``-th unit (all of it when it is shorter); ``estimate`` of the
    result is ``min(units, estimate(text))``. Whitespace inside the kept part is preserved."""
    if units <= 0:
        return ""
    ends = unit_ends(text)
    if units >= len(ends):
        return text
    return text[: ends[units - 1]]
