"""Wiki gap detection: do the wiki pages read for a question cover it (`sufficient`), and if not, what is missing (`missing_topics`)?

`wiki_deep` branches on `sufficient` and sends `missing` to retrieval, so the
two skills write one field each. Offline, coverage means that every entity
the question names, and most of its keywords, occur in the page texts.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, TypedDict

from pydantic import Field

from lambdarag import Lam, Reply, State, Term, Tool, tool
from lambdarag.state import Record

from .profile import CorpusProfile, profile_named, profile_of
from .registry import skill
from .prompts import ProfilePrompt
from .sentences import keywords
from .store.records import Variant

COVERAGE = 0.6
"""Share of the question's terms the pages must contain (named entities are always required); below 1
because pages phrase aspects differently (the question's 权力 is the statute's 有权)."""


class Coverage(Record):
    """Which of the question's entities and keywords the pages cover."""

    entities: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    share: float = 0.0


def coverage(state: State, profile: Optional[CorpusProfile] = None) -> Coverage:
    """Returns what of the question (entities from `entities` or the profile's named things, jieba keywords) the
    wiki pages contain."""
    query = state.original_query or state.query
    text = "\n".join(f"{p.entity}\n{p.text}" for p in state.wiki_pages)
    named = (profile or profile_named("generic")).names.query_entities(query)
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
    sufficient: bool


class MissingOutput(Reply):
    missing: list[str] = Field(default_factory=list)


@skill
def sufficient(config: Mapping[str, Any]) -> Term:
    """Returns the term writing `sufficient`: whether the wiki pages answer the question (config ``threshold``)."""
    threshold = float(config.get("threshold", COVERAGE))
    offline = Tool("wiki_coverage", lambda s, ctx: {"sufficient": is_sufficient(coverage(s, profile_of(ctx)), threshold)},
                   reads=["original_query", "wiki_pages"], optional=["entities"], writes=["sufficient"])
    return Lam("sufficient", ProfilePrompt("sufficient"),
               output=SufficiencyOutput, reads=["original_query", "wiki_pages"],
               optional=["entities"], writes=["sufficient"], fallback=offline, max_tokens=50)


def _missing_from_llm(out: MissingOutput, state: State) -> dict[str, Any]:
    return {"missing": tuple(dict.fromkeys(m.strip() for m in out.missing if m.strip()))}


@skill
def missing_topics(config: Mapping[str, Any]) -> Term:
    """Returns the term writing `missing`: the question's entities and aspects the wiki pages do not cover."""
    offline = Tool("wiki_gaps", lambda s, ctx: {"missing": coverage(s, profile_of(ctx)).missing},
                   reads=["original_query", "wiki_pages"], optional=["entities"], writes=["missing"])
    return Lam("missing_topics", ProfilePrompt("missing_topics"),
               output=MissingOutput, reads=["original_query", "wiki_pages"],
               optional=["entities"], writes=["missing"], parse=_missing_from_llm, fallback=offline, max_tokens=200)


class TopicsOut(TypedDict):
    """The write of `gap_topics`."""

    variants: tuple[Variant, ...]


@skill
@tool
def gap_topics(original_query: str, missing: tuple[str, ...] = ()) -> TopicsOut:
    """Writes the original question plus one query per `missing` topic to `variants`, for gap filling."""
    topics = tuple(Variant(text=f"{original_query} {t}", kind="multi_query") for t in missing)
    return {"variants": (Variant(text=original_query),) + topics}
