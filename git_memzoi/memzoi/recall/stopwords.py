"""English stop words, left out of a recall query so that none matches a record on its own (pure).

Issue 20: ``context --task "change the signer salt default"`` pulled in an unrelated record through "the" alone.
The list is Apache Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (the default of Lucene's English and
standard analyzers, also Elasticsearch's ``_english_`` stop filter), 33 words: small on purpose, so no word that
carries meaning in engineering notes ("default", "before", "all", "off") is dropped. A stop word is dropped only
as a whole term: inside a compound term (``don't``, ``is-a``) it stays part of the phrase.
"""

from __future__ import annotations

from collections.abc import Sequence

STOP_WORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
        "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
        "will", "with",
    )
)  # fmt: skip


def without_stop_words(phrases: Sequence[str]) -> list[str]:
    """``phrases`` (search terms, each one word or a compound's words joined by a space) without the one-word
    terms in :data:`STOP_WORDS` (compared case-insensitively), order kept; all of them when every term is one,
    so a query of stop words alone ("the", "to be or not to be") still searches for them."""
    kept = [p for p in phrases if p.casefold() not in STOP_WORDS]
    return kept or list(phrases)
