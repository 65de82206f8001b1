"""The domain records a retrieval pipeline's State holds: hits, ranked lists, variants, relations, citations, the plan.

They live on the skills' ground floor (the stores build them too); the
calculus only knows their fields by name, typed generically. Typed terms
declare these fields' types where they read and write them (``plan:
RetrievalPlan``, ``-> HitsOut``), and a run types a field a low-level `Tool`
writes by name, and the initial plan, from those declarations: importing this
module declares nothing.
"""
from __future__ import annotations

import datetime as dt
from typing import Literal, Optional, TypedDict

from pydantic import Field

from lambdarag.skills.store.limits import Limits
from lambdarag.state import Record


class Hit(Record):
    """One retrieved chunk with its score and per-retriever provenance."""

    chunk_id: str
    text: str
    score: float = 0.0
    source: str = ""
    title: str = ""
    section: str = ""
    date: Optional[str] = None
    family: str = ""
    kind: str = "text"
    department: Optional[str] = None
    security_level: int = 0
    instructions: tuple[str, ...] = ()
    """Instruction-like phrases of the chunk's text, found at index time (`store.instructions`)."""
    ranks: dict[str, int] = Field(default_factory=dict)
    scores: dict[str, float] = Field(default_factory=dict)


class RankedList(Record):
    """The ranked output of one retriever for one query string."""

    retriever: str
    query: str
    hits: tuple[Hit, ...] = ()


class Variant(Record):
    """A query variant produced by the planner; the original query is kind 'original'."""

    text: str
    kind: Literal["original", "rewrite", "multi_query", "hyde", "step_back", "expansion"] = "original"


class TimeRange(Record):
    """The time a question is about: newest version, a point in time, or a span."""

    latest: bool = False
    as_of: Optional[dt.date] = None
    start: Optional[dt.date] = None
    end: Optional[dt.date] = None


class Relation(Record):
    """A typed edge of the entity graph with where it came from."""

    head: str
    relation: str
    tail: str
    source: str = ""
    section: str = ""
    description: str = ""
    origin: str = "rule"
    confidence: float = 1.0


class WikiPage(Record):
    """A compiled wiki page read for a question."""

    entity: str
    path: str
    text: str
    score: float = 0.0


class Citation(Record):
    """A `[来源: source#section]` marker in the answer, resolved to a context chunk."""

    source: str
    section: str = ""
    chunk_id: str = ""
    quote: str = ""


class RetrievalPlan(Record, Limits):
    """Every per-query tunable the patterns read: the query type's `Limits`, recall depths and FAQ rules; built by
    the orchestrator, frozen.

    `reason` records each adjustment made while building the plan.
    """

    bm25_top_k: int = 20
    """Documents BM25 recalls (`types.<type>.docTopK`, widened or cut by the layers)."""
    dense_top_k: int = 20
    """Documents dense search recalls; the orchestrator sets it to `bm25_top_k`."""
    fused_top_k: int = 30
    """Length of the fused list (`fusedRatio` × document recall)."""
    prefer_tables: bool = False
    """A table question: table rows rank first."""
    faq_first: bool = False
    faq_direct_threshold: float = 0.92
    """Score a FAQ must reach to answer directly."""
    allow_similar_faq: bool = True
    retrieve: bool = True
    """False: the turn gets `direct_reply` and nothing is retrieved."""
    direct_reply: str = ""
    intent: str = "knowledge"
    risk: str = ""
    faq_top_k: int = 20
    query_type: Optional[str] = None
    short_query: bool = False
    time_range: Optional[TimeRange] = None
    reason: str = "default"


Hits = tuple[Hit, ...]
Candidates = tuple[RankedList, ...]


class HitsOut(TypedDict):
    """The write of a term that ranks, filters or reorders `hits`."""

    hits: Hits


class CandidatesOut(TypedDict):
    """The write of a retriever: `candidates` with its ranking appended."""

    candidates: Candidates
