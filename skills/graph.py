"""The graph skills: thin terms over the entity graph store (`skills.store.graph`)."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from pydantic import Field

from lambdarag import Lam, Reply, Term, Tool
from lambdarag.errors import InvalidOutput

from .registry import skill
from .store.graph import EntityGraph, short_name
from .store.records import Relation, Variant
from .store.tokenize import base_dictionary


class EntityList(Reply):
    """The LLM's answer for entity_extract."""

    entities: list[str] = Field(default_factory=list, max_length=12)


ENTITY_PROMPT = """找出下面问题中提到的文件或文档名称、机构名称和关键主题词（如“软件包管理”）。
法律名称去掉“中华人民共和国”和书名号，只列问题里出现或明确指代的，不要补充。
问题：{query}"""


NOUNS = ("n", "nz", "vn", "ns", "nt", "nr", "l", "j")


def keywords(text: str, k: int) -> list[str]:
    """Returns up to `k` TF-IDF noun keywords of `text` (jieba)."""
    base_dictionary()   # quiet, shared with the tokenizers, and jieba imported without pkg_resources
    import jieba.analyse

    return [w for w in jieba.analyse.extract_tags(text, topK=k, allowPOS=NOUNS) if len(w) >= 2]


@skill
def entity_extract(config: Mapping[str, Any]) -> Term:
    """Returns a Lam that writes the entities a query names; offline: graph dictionary match + jieba keywords."""
    k = int(config.get("keywords", 3))

    def match(state, ctx):
        graph: Optional[EntityGraph] = ctx.resources.get("graph")
        spans = graph.spans(state.query, user=state.user) if graph is not None else []
        rest, found = state.query, list(dict.fromkeys(name for _, _, name in spans))
        for start, end, _ in reversed(spans):   # keywords come from the text the names do not cover
            rest = rest[:start] + "，" + rest[end:]
        found += [w for w in keywords(rest, k) if w not in found]
        return {"entities": tuple(found)}

    def parse(out: EntityList, state) -> dict:
        found = tuple(dict.fromkeys(short_name(e) for e in out.entities if e.strip()))
        if not found:   # blank names: the rules' entities stay
            raise InvalidOutput("LLM reply names only blank entities")
        return {"entities": found}

    fallback = Tool("entity_match", match, reads=["query", "user"], writes=["entities"], effect="io")
    return Lam("entity_extract", ENTITY_PROMPT, output=EntityList, reads=["query", "user"], writes=["entities"],
               fallback=fallback, parse=parse, max_tokens=200, required=["entities"])


@skill
def graph_walk(config: Mapping[str, Any]) -> Term:
    """Returns a term writing the relations within ``plan.max_hops`` hops / ``plan.max_nodes`` nodes of the entities."""

    def run(state, ctx):
        graph: EntityGraph = ctx.resource("graph")
        hops = int(config.get("max_hops", state.plan.max_hops))
        nodes = int(config.get("max_nodes", state.plan.max_nodes))
        return {"relations": graph.walk(state.entities, max_hops=hops, max_nodes=nodes, user=state.user).relations}

    return Tool("graph_walk", run, reads=["entities", "plan", "user"], writes=["relations"], effect="io")


@skill
def relation_lookup(config: Mapping[str, Any]) -> Term:
    """Returns a term writing the direct relations (both directions) and version chains of the entities."""
    limit = int(config.get("limit", 30))

    def run(state, ctx):
        graph: EntityGraph = ctx.resource("graph")
        out: dict[tuple[str, str, str], Relation] = {}
        for name in state.entities:
            for rel in graph.version_relations(name, state.user):
                out.setdefault((rel.head, rel.relation, rel.tail), rel)
            for rec in graph.neighbors(name, direction="both", user=state.user):
                out.setdefault((rec.head, rec.relation, rec.tail), rec.to_relation())
        return {"relations": tuple(out.values())[:limit]}

    return Tool("relation_lookup", run, reads=["entities", "user"], writes=["relations"], effect="io")


EXPAND_ORDER = {"涉及": 0, "主管": 1, "依据": 2, "引用": 3}


@skill
def graph_expand(config: Mapping[str, Any]) -> Term:
    """Returns a term that appends one ``expansion`` variant: the query plus related graph terms.

    The terms are the ends of the state's relations not already in the query,
    topics first, at most ``plan.expansion_count``. It writes
    ``(original, expansion)`` so that fusion search still runs the original
    query; it does not read earlier variants (that would make every pipeline
    write them first), so put it before `query_expand` if both are used.
    """

    def run(state, ctx):
        terms: list[str] = []
        ranked = sorted(state.relations, key=lambda r: (EXPAND_ORDER.get(r.relation, 9), -r.confidence))
        for rel in ranked:
            for end in (rel.tail, rel.head):
                if end not in state.query and end not in terms and end not in state.entities:
                    terms.append(end)
        terms = terms[:int(config.get("max_terms", state.plan.expansion_count))]
        variants: tuple[Variant, ...] = (Variant(text=state.query, kind="original"),)
        if terms:
            variants += (Variant(text=f"{state.query} {' '.join(terms)}", kind="expansion"),)
        return {"variants": variants}

    return Tool("graph_expand", run, reads=["query", "entities", "relations", "plan"],
                writes=["variants"], effect="pure")
