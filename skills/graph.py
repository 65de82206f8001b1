"""The graph skills: thin terms over the entity graph store (`skills.store.graph`)."""
from __future__ import annotations

from typing import Any, Optional, TypedDict

from pydantic import Field

from lambdarag import Context, Lam, Reply, User, tool
from lambdarag.errors import InvalidOutput

from .registry import skill
from .prompts import ProfilePrompt
from .profile import profile_of
from .store.graph import EntityGraph
from .store.records import Relation, RetrievalPlan, Variant
from .store.tokenize import keyword_extractor


class EntityList(Reply):
    """The LLM's answer for entity_extract."""

    entities: list[str] = Field(default_factory=list, max_length=12)


NOUNS = ("n", "nz", "vn", "ns", "nt", "nr", "l", "j")
Relations = tuple[Relation, ...]


class EntitiesOut(TypedDict):
    """The write of `entity_extract`."""

    entities: tuple[str, ...]


class RelationsOut(TypedDict):
    """The write of the graph lookups."""

    relations: Relations


class VariantsOut(TypedDict):
    """The write of `graph_expand`."""

    variants: tuple[Variant, ...]


def noun_keywords(text: str, k: int) -> list[str]:
    """Returns up to `k` TF-IDF noun keywords of `text` (jieba)."""
    return [w for w in keyword_extractor().extract_tags(text, topK=k, allowPOS=NOUNS) if len(w) >= 2]


@tool(effect="io")
def entity_match(query: str, user: User, ctx: Context, *, keywords: int = 3) -> EntitiesOut:
    """Writes the entities the graph's dictionary finds in the query, then up to `keywords` jieba keywords of
    the text the names do not cover."""
    graph: Optional[EntityGraph] = ctx.resources.get("graph")
    spans = graph.spans(query, user=user) if graph is not None else []
    rest, found = query, list(dict.fromkeys(name for _, _, name in spans))
    for start, end, _ in reversed(spans):   # keywords come from the text the names do not cover
        rest = rest[:start] + "，" + rest[end:]
    found += [w for w in noun_keywords(rest, keywords) if w not in found]
    return {"entities": tuple(found)}




def name_rule(ctx: Optional[Context]) -> str:
    """Returns the entity prompt's line on how to write names: the corpus profile's."""
    return profile_of(ctx).wording.entity_name_rule


def short_entities(out: EntityList, state: Any, ctx: Context) -> EntitiesOut:
    """Returns the LLM's entities in the short form the corpus profile stores names by."""
    short = profile_of(ctx).names.short_name
    found = tuple(dict.fromkeys(short(e) for e in out.entities if e.strip()))
    if not found:   # blank names: the rules' entities stay
        raise InvalidOutput("LLM reply names only blank entities")
    return {"entities": found}


entity_extract = skill(Lam("entity_extract", ProfilePrompt("entity_extract"), output=EntityList,
                           reads=["query", "user"], writes=EntitiesOut, fallback=entity_match, parse=short_entities,
                           given={"name_rule": name_rule}, max_tokens=200, required=["entities"]))
"""Writes the entities a query names; offline `entity_match` (config ``keywords``)."""


@skill
@tool(effect="io")
def graph_walk(entities: tuple[str, ...], plan: RetrievalPlan, user: User, ctx: Context, *,
               max_hops: Optional[int] = None, max_nodes: Optional[int] = None) -> RelationsOut:
    """Writes the relations within ``plan.max_hops`` hops / ``plan.max_nodes`` nodes of the entities."""
    graph: EntityGraph = ctx.resource("graph")
    hops = int(plan.max_hops if max_hops is None else max_hops)
    nodes = int(plan.max_nodes if max_nodes is None else max_nodes)
    return {"relations": graph.walk(entities, max_hops=hops, max_nodes=nodes, user=user).relations}


@skill
@tool(effect="io")
def relation_lookup(entities: tuple[str, ...], user: User, ctx: Context, *, limit: int = 30) -> RelationsOut:
    """Writes the direct relations (both directions) and version chains of the entities."""
    graph: EntityGraph = ctx.resource("graph")
    out: dict[tuple[str, str, str], Relation] = {}
    for name in entities:
        for rel in graph.version_relations(name, user):
            out.setdefault((rel.head, rel.relation, rel.tail), rel)
        for rec in graph.neighbors(name, direction="both", user=user):
            out.setdefault((rec.head, rec.relation, rec.tail), rec.to_relation())
    return {"relations": tuple(out.values())[:limit]}


@skill
@tool
def graph_expand(query: str, entities: tuple[str, ...], relations: Relations, plan: RetrievalPlan, ctx: Context, *,
                 max_terms: Optional[int] = None) -> VariantsOut:
    """Appends one ``expansion`` variant: the query plus related graph terms.

    The terms are the ends of the state's relations not already in the query,
    in the corpus profile's order of relation types (`GraphRules.expand_order`;
    for statutes topics first), at most ``plan.expansion_count``. It writes
    ``(original, expansion)`` so that fusion search still runs the original
    query; it does not read earlier variants (that would make every pipeline
    write them first), so put it before `query_expand` if both are used.
    """
    terms: list[str] = []
    order = profile_of(ctx).graph.expand_order
    ranked = sorted(relations, key=lambda r: (order.get(r.relation, len(order)), -r.confidence))
    for rel in ranked:
        for end in (rel.tail, rel.head):
            if end not in query and end not in terms and end not in entities:
                terms.append(end)
    terms = terms[:int(plan.expansion_count if max_terms is None else max_terms)]
    variants: tuple[Variant, ...] = (Variant(text=query, kind="original"),)
    if terms:
        variants += (Variant(text=f"{query} {' '.join(terms)}", kind="expansion"),)
    return {"variants": variants}
