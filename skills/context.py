"""Context assembly and the `[来源: source#section]` citation markers that point into it.

The context is what generation may use: the best hits within the plan's
budgets, the knowledge-graph relations and wiki pages. Generation and
citation checking resolve markers against `context_hits(state)`, the same
selection, so an answer can never cite a chunk the context did not show.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from lambdarag import Citation, Hit, State, Term, Tool

from .registry import skill
from .sentences import split_sentences

MARKER = re.compile(r"\[来源[:：]\s*([^\]#]+?)\s*(?:#\s*([^\]]*?))?\s*\]")
RELATIONS_HEADING = "## 实体关系（来自知识图谱）"
WIKI_HEADING = "## 知识库页面"
HITS_HEADING = "## 检索到的文档片段"


def marker(hit: Hit) -> str:
    """Returns the citation marker of a hit, e.g. ``[来源: 行政法/海上交通安全法(2021-04-29).md#第三十八条]``."""
    return f"[来源: {hit.source or hit.chunk_id}#{hit.section}]" if hit.section else f"[来源: {hit.source or hit.chunk_id}]"


def context_hits(state: State) -> tuple[Hit, ...]:
    """Returns the hits the context shows: most relevant first, at most `final_top_k`, within the char budget."""
    plan = state.plan
    ranked = sorted(state.hits, key=lambda h: -h.score)[: plan.final_top_k]
    chosen, used = [], 0
    for hit in ranked:
        size = min(len(hit.text), plan.max_chunk_chars)
        if chosen and used + size > plan.max_context_chars:
            break
        chosen.append(hit)
        used += size
    return tuple(chosen)


def clip(text: str, limit: int) -> str:
    """Returns `text` cut to `limit` chars at a sentence end where possible, marked with …."""
    if len(text) <= limit:
        return text
    out = ""
    for sentence in split_sentences(text):
        if len(out) + len(sentence) > limit:
            break
        out += sentence
    return (out or text[:limit]) + "…"


def relation_lines(relations: Sequence[Any]) -> list[str]:
    """Returns graph relations as ``- head --relation--> tail`` lines, each with its source."""
    lines = []
    for r in relations:
        where = f"（{r.source}{'#' + r.section if r.section else ''}）" if r.source else ""
        lines.append(f"- {r.head} --{r.relation}--> {r.tail}{where}")
    return list(dict.fromkeys(lines))


def render_context(state: State) -> str:
    """Returns the context text: graph relations, wiki pages, then numbered chunks with headings."""
    plan = state.plan
    parts = []
    if state.relations:
        parts += [RELATIONS_HEADING, *relation_lines(state.relations), ""]
    if state.wiki_pages:
        parts.append(WIKI_HEADING)
        for page in state.wiki_pages:
            parts += [f"### {page.entity}（{page.path}）", clip(page.text, plan.max_chunk_chars), ""]
    hits = context_hits(state)
    if hits:
        parts.append(HITS_HEADING)
        for i, hit in enumerate(hits, 1):
            heading = " · ".join(x for x in (hit.title, hit.section) if x)
            dated = f"（{hit.date}）" if hit.date else ""
            parts += [f"[{i}] {marker(hit)} {heading}{dated}", clip(hit.text, plan.max_chunk_chars), ""]
    return "\n".join(parts).strip()


def assemble(state: State) -> dict[str, str]:
    return {"context": render_context(state)}


@skill("assemble_context")
def assemble_context(config: Mapping[str, Any]) -> Term:
    """Returns the pure term that writes `context` from hits, relations and wiki pages under the plan's budgets."""
    return Tool("assemble_context", assemble, reads=["hits", "relations", "wiki_pages", "plan"], writes=["context"])


def resolve(source: str, section: str, hits: Sequence[Hit]) -> Optional[Hit]:
    """Returns the context hit a marker names, or None when it names none.

    The source must equal the hit's source, chunk id or title, or be a part of
    its source path (models often shorten paths); the section must match
    exactly when the marker gives one.
    """
    source, section = source.strip(), (section or "").strip()
    for hit in hits:
        if section and section != hit.section:
            continue
        names = (hit.source, hit.chunk_id, hit.title)
        if source in names or (len(source) >= 4 and (source in hit.source or source in hit.title)):
            return hit
    return None


def cited(text: str, hits: Sequence[Hit]) -> tuple[tuple[Citation, ...], tuple[str, ...]]:
    """Returns the citations in `text` that resolve to `hits`, and the markers that do not."""
    good: dict[str, Citation] = {}
    bad: list[str] = []
    for sentence in split_sentences(text):
        for m in MARKER.finditer(sentence):
            hit = resolve(m.group(1), m.group(2) or "", hits)
            if hit is None:
                bad.append(m.group(0))
            elif hit.chunk_id not in good:
                quote = MARKER.sub("", sentence).strip()
                good[hit.chunk_id] = Citation(source=hit.source, section=hit.section, chunk_id=hit.chunk_id,
                                              quote=quote[:120])
    return tuple(good.values()), tuple(dict.fromkeys(bad))


def drop_markers(text: str, markers: Sequence[str]) -> str:
    """Returns `text` without the given markers."""
    for m in markers:
        text = text.replace(m, "")
    return text
