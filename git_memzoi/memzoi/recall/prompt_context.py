"""The context pack for one prompt the user typed (the opt-in UserPromptSubmit hook; issue 15; io).

A prompt is mostly words that match everything ("please", "the", "fix"), so the pack is built for its key words
only (words of three or more characters outside :data:`STOPWORDS`, lowercased, each once) and it is given to the
agent only when a packed memory is relevant: its title and body hold at least ``min_terms`` of those key words
(fewer when the prompt has fewer). Otherwise there is nothing to add and the hook prints nothing. The pack is
:func:`git_memzoi.memzoi.recall.pack.build` under a small budget, without its event (a prompt is no recall the
log should keep).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.workspace import Workspace

DEFAULT_BUDGET = 200  # approx_words: a prompt's context must not crowd the prompt
DEFAULT_MIN_TERMS = 2
MAX_TERMS = 24
_STOPWORD_TEXT = """about above after again all also and any are because been before being below between both but can could
    did does doing done down during each few for from further had has have having her here hers him his how into
    its just let like make more most much must need not now off once only other our out over own please same she
    should some such than that the their them then there these they this those through too under until use using
    very was way were what when where which while who whom why will with would you your yours yet get got want
    fix add change update check look see run try tell show give work make sure thanks thank hello okay"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@dataclass(frozen=True)
class PromptContext:
    """The pack's ``prompt`` text, the ids it shows and the key words that made a memory relevant."""

    text: str
    record_ids: tuple[str, ...]
    matched: tuple[str, ...]


def key_terms(prompt: str) -> list[str]:
    """The prompt's key words in order, lowercased, each once, at most :data:`MAX_TERMS`."""
    seen: dict[str, None] = {}
    for word in re.findall(r"\w+", prompt.lower()):
        if len(word) >= 3 and word not in STOPWORDS and not word.isdigit():
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def build(
    ws: Workspace, prompt: str, *, token_budget: int = DEFAULT_BUDGET, min_terms: int = DEFAULT_MIN_TERMS
) -> PromptContext | None:
    """The context for ``prompt``, or ``None`` when no packed memory holds enough of its key words.

    Raises:
        InputError: a negative budget or ``min_terms`` below 1 (``bad_budget``, ``bad_usage``).
    """
    from git_memzoi.memzoi.recall import pack

    if min_terms < 1:
        raise InputError("--min-terms must be 1 or more", "bad_usage")
    terms = key_terms(prompt)
    if not terms or token_budget == 0:
        return None
    built = pack.build(ws, " ".join(terms), token_budget=token_budget, log=False, mode="lexical")  # a hook: no model
    need = min(min_terms, len(terms))
    matched: set[str] = set()
    relevant = False
    for found in built.payload["records"]:
        record = found["record"]
        words = set(re.findall(r"\w+", f"{record['title']} {record['body']}".lower()))
        hits = words.intersection(terms)
        if len(hits) >= need:
            relevant = True
            matched |= hits
    if not relevant or not built.prompt:
        return None
    return PromptContext(built.prompt, tuple(built.record_ids), tuple(t for t in terms if t in matched))
