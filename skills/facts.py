"""`fact_extract`: entities and typed relations an answer states, each tied to the citation it came from.

This feeds the learning loop (wiki and graph updates), so every fact must be
traceable: a relation without a source the answer actually cites is dropped.
Offline it runs the wiki compiler's rule extractors on each cited claim and
on the cited chunks; with a graph resource, facts the graph already holds are
left out, so what remains is new.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, TypedDict

from pydantic import Field

from lambdarag import Context, Lam, Reply, State, tool
from .store.records import Citation, Relation
from lambdarag.state import ALL_ACCESS, Record

from .context import Citable, Cited, citable, claims, resolve
from .support import attesting, unsupported
from .profile import CorpusProfile, profile_of
from .registry import skill
from .prompts import ProfilePrompt


class Facts(Record):
    """New knowledge found in one answer: entity names, relations (with source and section), cited chunk ids."""

    entities: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    sources: tuple[str, ...] = ()
    origin: str = "rule"
    attested: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Entity → the cited sources that name it (set by `fact_support`; an entity derives from these alone)."""
    rejected: tuple[str, ...] = ()
    """One line per fact `fact_support` refused, with the reason."""


class FactsOut(TypedDict):
    """What the fact steps write: the field's one declaration."""

    facts: Optional[Facts]


def _known(graph: Any, relation: Relation) -> bool:
    """Returns whether the graph holds the fact already, from any source (an answer to `rule_facts`, not shown)."""
    if graph is None:
        return False
    return any(getattr(r, "tail", None) == relation.tail and getattr(r, "relation", None) == relation.relation
               for r in graph.neighbors(relation.head, user=ALL_ACCESS))


def rule_facts(state: State, graph: Optional[Any], profile: CorpusProfile) -> Facts:
    """Returns the facts the corpus profile's rules read in the answer's cited claims and cited chunks, minus what
    `graph` knows."""
    hits = citable(state)
    by_id = {h.chunk_id: h for h in hits}
    cited_ids = [c.chunk_id for c in state.citations if c.chunk_id in by_id]
    texts: list[tuple[Hit, str]] = []
    for claim, markers in claims(state.answer):
        for m in markers:
            hit = resolve(m.group(1), m.group(2) or "", hits)
            if hit is not None and claim:
                label = f"{hit.section} " if hit.section else ""
                texts.append((hit, label + claim))
    texts += [(by_id[i], by_id[i].text) for i in cited_ids]
    relations: dict[tuple[str, str, str], Relation] = {}
    entities: dict[str, None] = {}
    for hit, text in texts:
        found, named = profile.graph.answer_facts(hit, text)
        for r in found:
            r = r.model_copy(update={"source": hit.source, "section": r.section or hit.section})
            if (r.head, r.relation, r.tail) not in relations and not _known(graph, r):
                relations[(r.head, r.relation, r.tail)] = r
        for name, _ in named:
            entities[name] = None
    for r in relations.values():
        entities.update({r.head: None, r.tail: None})
    if graph is not None:
        entities = {e: None for e in entities if e not in graph}
    return Facts(entities=tuple(entities), relations=tuple(relations.values()), sources=tuple(cited_ids))


class FactRelation(Reply):
    """One relation as the prompt asks for it, with the citation it rests on."""

    head: str
    relation: str
    tail: str
    citation: str = Field(description="回答中支持该关系的 [来源: …] 标注，原样照抄")


class FactOutput(Reply):
    """What the fact prompt asks the model to return."""

    entities: list[str] = Field(default_factory=list)
    relations: list[FactRelation] = Field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Supporting(Citable):
    """What the write-back gate checks: the facts against what the answer cites."""

    facts: Optional[Facts]
    citations: tuple[Citation, ...]


def _from_llm(out: FactOutput, state: State) -> FactsOut:
    """Returns the model's facts, keeping only relations whose citation is one the answer makes."""
    allowed = {c.chunk_id for c in state.citations}
    hits = [h for h in citable(state) if h.chunk_id in allowed]
    kept = []
    for r in out.relations:
        hit = next((resolve(m.group(1), m.group(2) or "", hits) for _, ms in claims(r.citation) for m in ms), None)
        if hit is not None:
            kept.append(Relation(head=r.head, relation=r.relation, tail=r.tail, source=hit.source,
                                 section=hit.section, origin="llm", description=r.citation))
    names = dict.fromkeys([*(e.strip() for e in out.entities if e.strip()), *(x for r in kept for x in (r.head, r.tail))])
    return {"facts": Facts(entities=tuple(names), relations=tuple(kept), sources=tuple(sorted(allowed)), origin="llm")}


@tool
def fact_rules(state: Cited, ctx: Context) -> FactsOut:
    """Writes the facts the wiki compile rules read in the answer's cited claims and chunks (`rule_facts`)."""
    return {"facts": rule_facts(state, ctx.resources.get("graph"), profile_of(ctx))}


fact_extract = skill(Lam("fact_extract", ProfilePrompt("fact_extract"), output=FactOutput,
                         reads=["answer", "citations", "hits", "plan"], optional=["wiki_pages", "neighbours"], writes=FactsOut,
                         parse=_from_llm, fallback=fact_rules, max_tokens=800))
"""Writes `facts` (a `Facts` record) the answer states; offline it uses the wiki compile rules (`fact_rules`)."""


def cited_hits(state: State) -> tuple[Hit, ...]:
    """Returns the context chunks the answer cites."""
    ids = {c.chunk_id for c in state.citations}
    return tuple(h for h in citable(state) if h.chunk_id in ids)


def supported_facts(state: State, profile: CorpusProfile) -> Facts:
    """Returns `state.facts` keeping only what the cited text states: relations `unsupported` clears, entities
    some cited chunk names in one of the profile's name forms (each tied to the sources that name it); every refusal
    is listed with its reason."""
    facts, hits = state.facts, cited_hits(state)
    relations, rejected = [], list(facts.rejected)
    for r in facts.relations:
        why = unsupported(r, hits, profile)
        if why is None:
            relations.append(r)
        else:
            rejected.append(f"relation {r.head} --{r.relation}--> {r.tail} [{r.source}#{r.section}]: {why}")
    attested = {}
    for name in dict.fromkeys([*facts.entities, *(x for r in relations for x in (r.head, r.tail))]):
        sources = attesting(name, hits, profile.names)
        if sources:
            attested[name] = sources
        else:
            rejected.append(f"entity {name}: no cited sentence names it")
    return facts.model_copy(update={"relations": tuple(relations), "entities": tuple(attested),
                                    "attested": attested, "rejected": tuple(rejected)})


class Entailed(Reply):
    """What the entailment prompt asks the model to return: the numbers of the relations the text states."""

    supported: list[int] = Field(default_factory=list)


def _entailed(out: Entailed, state: State, ctx: Any) -> FactsOut:
    """Returns the offline-supported facts minus the relations the model did not confirm."""
    offline = supported_facts(state, profile_of(ctx))
    numbered = {i: r for i, r in enumerate(state.facts.relations, 1)}
    confirmed = {numbered[i] for i in out.supported if i in numbered}
    kept = tuple(r for r in offline.relations if r in confirmed)
    refused = [f"relation {r.head} --{r.relation}--> {r.tail} [{r.source}#{r.section}]: "
               f"the entailment check did not confirm it" for r in offline.relations if r not in confirmed]
    return {"facts": offline.model_copy(update={"relations": kept, "rejected": offline.rejected + tuple(refused)})}


@tool
def fact_support_rules(state: Supporting, ctx: Context) -> FactsOut:
    """Writes `facts` keeping only what the cited text states (`supported_facts`)."""
    return {"facts": supported_facts(state, profile_of(ctx))}


fact_support = skill(Lam("fact_support", ProfilePrompt("fact_support"), output=Entailed,
                         reads=["facts", "citations", "hits", "plan"], optional=["context", "wiki_pages", "neighbours"],
                         writes=FactsOut, parse=_entailed, fallback=fact_support_rules, max_tokens=200))
"""The write-back gate: rewrites `facts` to what the cited text states; with an LLM, also entailed."""
