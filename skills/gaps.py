"""Wiki gap detection: do the wiki pages read for a question cover it (`sufficient`), and if not, what is missing (`missing_topics`)?

`wiki_deep` branches on `sufficient` and sends `missing` to retrieval, so the
two skills write one field each. Offline, coverage means that every entity
the question names, and most of its keywords, occur in the page texts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from pydantic import Field

from lambdarag import Context, Lam, Reads, Reply, tool
from lambdarag.state import Record

from .profile import CorpusProfile, profile_of
from .registry import skill
from .prompts import ProfilePrompt
from .sentences import keywords
from .store.records import Variant, WikiPage

COVERAGE = 0.6
"""Share of the question's terms the pages must contain (named entities are always required); below 1
because pages phrase aspects differently (the question's 权力 is the statute's 有权)."""


class Coverage(Record):
    """Which of the question's entities and keywords the pages cover."""

    entities: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    share: float = 0.0


@dataclass(frozen=True)
class Covering(Reads):
    """What coverage is judged from: the question, the wiki pages read, and the entities when known."""

    original_query: str
    wiki_pages: tuple[WikiPage, ...]
    entities: tuple[str, ...] = ()


def coverage(state: Any, profile: CorpusProfile) -> Coverage:
    """Returns what of the question (entities from `entities` or the profile's named things, jieba keywords) the
    wiki pages contain."""
    query = state.original_query or state.query
    text = "\n".join(f"{p.entity}\n{p.text}" for p in state.wiki_pages)
    named = profile.names.query_entities(query)
    entities = tuple(dict.fromkeys([*(e for e in state.entities if e in query), *named]))
    words = tuple(w for w in keywords(query) if not any(w in e for e in entities))
    missing = [e for e in entities if e not in text] + [w for w in words if w not in text]
    wanted = len(entities) + len(words)
    share = 1.0 - len(missing) / wanted if wanted else 0.0
    return Coverage(entities=entities, keywords=words, missing=tuple(missing), share=share)


def is_sufficient(c: Coverage, threshold: float) -> bool:
    """Returns whether coverage suffices: every named entity found and `threshold` of all terms found."""
    return bool(c.entities or c.keywords) and not any(e in c.missing for e in c.entities) and c.share >= threshold


class SufficiencyOutput(Reply):
    """What the sufficiency prompt asks the model to return, and the write of `sufficient`."""

    sufficient: bool


class MissingOutput(Reply):
    missing: list[str] = Field(default_factory=list)


class Missing(TypedDict):
    """The write of `missing_topics`."""

    missing: tuple[str, ...]


@tool
def wiki_coverage(state: Covering, ctx: Context, *, threshold: float = COVERAGE) -> SufficiencyOutput:
    """Writes whether the wiki pages cover the question's entities and `threshold` of its terms."""
    return SufficiencyOutput(sufficient=is_sufficient(coverage(state, profile_of(ctx)), threshold))


sufficient = skill(Lam("sufficient", ProfilePrompt("sufficient"), output=SufficiencyOutput,
                       reads=["original_query", "wiki_pages"], optional=["entities"], writes=SufficiencyOutput,
                       fallback=wiki_coverage, max_tokens=50))
"""Writes `sufficient`: whether the wiki pages answer the question (offline: `wiki_coverage`; config ``threshold``)."""


def _missing_from_llm(out: MissingOutput, state: Any) -> Missing:
    return {"missing": tuple(dict.fromkeys(m.strip() for m in out.missing if m.strip()))}


@tool
def wiki_gaps(state: Covering, ctx: Context) -> Missing:
    """Writes the question's entities and keywords the wiki pages do not contain."""
    return {"missing": coverage(state, profile_of(ctx)).missing}


missing_topics = skill(Lam("missing_topics", ProfilePrompt("missing_topics"), output=MissingOutput,
                           reads=["original_query", "wiki_pages"], optional=["entities"], writes=Missing,
                           parse=_missing_from_llm, fallback=wiki_gaps, max_tokens=200))
"""Writes `missing`: the question's entities and aspects the wiki pages do not cover."""


class TopicsOut(TypedDict):
    """The write of `gap_topics`."""

    variants: tuple[Variant, ...]


@skill
@tool
def gap_topics(original_query: str, missing: tuple[str, ...] = ()) -> TopicsOut:
    """Writes the original question plus one query per `missing` topic to `variants`, for gap filling."""
    topics = tuple(Variant(text=f"{original_query} {t}", kind="multi_query") for t in missing)
    return {"variants": (Variant(text=original_query),) + topics}
