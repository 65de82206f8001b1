"""Context assembly and the `[来源: source#section]` citation markers that point into it.

The context is what generation may use: the best hits within the plan's
budgets, the knowledge-graph relations and wiki pages. Generation and
citation checking resolve markers against `context_hits(state)`, the same
selection, so an answer can never cite a chunk the context did not show.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, TypedDict

from lambdarag import Context, Reads, State, tool
from .store.records import Citation, Hit, Hits, Relation, RetrievalPlan, WikiPage

from .neighbours import neighbours
from .registry import skill
from .sentences import split_sentences
from .store.tokenize import language_of

MARKER = re.compile(r"\[(?:来源|[Ss]ource)[:：]\s*([^\]#]+?)\s*(?:#\s*([^\]]*?))?\s*\]")
"""A citation marker, ``[来源: file#section]`` (or ``[source: …]`` in an English answer)."""
SCAFFOLD: Mapping[str, Mapping[str, str]] = {
    "zh": {"relations": "## 实体关系（来自知识图谱）", "wiki": "## 知识库页面", "hits": "## 检索到的文档片段",
           "begin": "〔资料 {tag} 开始〕", "end": "〔资料 {tag} 结束〕", "source": "来源"},
    "en": {"relations": "## Relations (from the knowledge graph)", "wiki": "## Knowledge base pages",
           "hits": "## Retrieved passages", "begin": "[document {tag} begins]", "end": "[document {tag} ends]",
           "source": "source"},
}
"""The context's headings, fence lines and marker label in the question's language (the prompts name the fences)."""
RELATIONS_HEADING = SCAFFOLD["zh"]["relations"]


def marker(hit: Hit, label: str = "来源") -> str:
    """Returns the citation marker of a hit, e.g. ``[来源: guide/install.md#Install / Debian]`` (`label`: ``source``
    in an English answer)."""
    where = f"{hit.source or hit.chunk_id}#{hit.section}" if hit.section else f"{hit.source or hit.chunk_id}"
    return f"[{label}: {where}]"


def plan_of(state: Any) -> RetrievalPlan:
    """Returns the plan a state is read under: its own, or the default plan for a state built without one (a run
    starts from the default plan its terms declare; a helper called on a bare state reads the same)."""
    return state.plan or DEFAULT_PLAN


DEFAULT_PLAN = RetrievalPlan()


def context_hits(state: State) -> tuple[Hit, ...]:
    """Returns the hits the context shows: most relevant first, at most `final_top_k`, within the char budget.

    A table-preferring plan (`plan.prefer_tables`) puts table rows first among hits of equal score.
    """
    plan = plan_of(state)
    ranked = sorted(state.hits, key=lambda h: (-h.score, not (plan.prefer_tables and h.kind == "table_row")))
    ranked = ranked[: plan.final_top_k]
    chosen, used = [], 0
    for hit in ranked:
        size = min(len(hit.text), plan.max_chunk_chars)
        if chosen and used + size > plan.max_context_chars:
            break
        chosen.append(hit)
        used += size
    return tuple(chosen)


def page_hit(page: WikiPage, limit: int) -> Hit:
    """Returns a wiki page as a citable hit (source = the page path), clipped as the context shows it."""
    return Hit(chunk_id=page.path, text=clip(page.text, limit), score=page.score, source=page.path,
               title=page.entity, kind="wiki")


def shown(state: State, near: Optional[Sequence[Hit]] = None) -> tuple[Hit, ...]:
    """Returns the passages the context numbers: its hits, then the chunks next to the best of them (`near`, else
    the `neighbours` that `assemble_context` wrote)."""
    return context_hits(state) + tuple(near if near is not None else getattr(state, "neighbours", None) or ())


def citable(state: State) -> tuple[Hit, ...]:
    """Returns everything an answer may cite: the wiki pages and the passages the context shows."""
    return tuple(page_hit(p, plan_of(state).max_chunk_chars) for p in state.wiki_pages) + shown(state)


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


def fence_tag(texts: Sequence[str]) -> str:
    """Returns the tag that fences the documents' texts in the context: a digest of those texts, so a document
    cannot forge the closing line (its text would have to contain its own digest)."""
    return hashlib.sha256("\0".join(texts).encode("utf-8", "replace")).hexdigest()[:8]


def fenced(text: str, tag: str, words: Mapping[str, str] = SCAFFOLD["zh"]) -> list[str]:
    """Returns a document's text between the fence lines the prompts name as data (OWASP LLM01)."""
    return [words["begin"].format(tag=tag), text, words["end"].format(tag=tag)]


def render_context(state: State, near: Optional[Sequence[Hit]] = None) -> str:
    """Returns the context text in the question's language: graph relations, wiki pages, then numbered chunks with
    headings and citation markers; the relations and every page and chunk text are fenced (`fenced`), so the
    prompt can tell the model that fenced text is data."""
    plan = plan_of(state)
    question = getattr(state, "original_query", None)
    words = SCAFFOLD[language_of(question) if question else "zh"]
    pages = [page_hit(p, plan.max_chunk_chars) for p in state.wiki_pages]
    hits = shown(state, near)
    relations = "\n".join(relation_lines(state.relations))
    texts = [relations] + [h.text for h in pages] + [clip(h.text, plan.max_chunk_chars) for h in hits]
    tag = fence_tag(texts)
    parts = []
    label = words["source"]
    if state.relations:
        parts += [words["relations"], *fenced(relations, tag, words), ""]
    if pages:
        parts.append(words["wiki"])
        for page, hit in zip(state.wiki_pages, pages):
            parts += [f"### {page.entity} {marker(hit, label)}", *fenced(hit.text, tag, words), ""]
    if hits:
        parts.append(words["hits"])
        for i, hit in enumerate(hits, 1):
            heading = " · ".join(x for x in (hit.title, hit.section) if x)
            dated = f"（{hit.date}）" if hit.date else ""
            parts += [f"[{i}] {marker(hit, label)} {heading}{dated}",
                      *fenced(clip(hit.text, plan.max_chunk_chars), tag, words), ""]
    return "\n".join(parts).strip()


@dataclass(frozen=True)
class Citable(Reads):
    """What an answer may cite (`citable`): the context's hits under the plan, the wiki pages read and the
    neighbours the context shows; the base of every read that writes or checks citations."""

    hits: Hits
    plan: RetrievalPlan
    wiki_pages: tuple[WikiPage, ...] = ()
    neighbours: tuple[Hit, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Cited(Citable):
    """An answer with the citations it makes and what it may cite: what checks and fact extraction read."""

    answer: str
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class Assembling(Reads):
    """What the context is assembled from: relations and wiki pages are optional, used when present, so the
    term closes after a plain retriever that writes only `hits`."""

    hits: Hits
    plan: RetrievalPlan
    relations: tuple[Relation, ...] = ()
    wiki_pages: tuple[WikiPage, ...] = ()
    original_query: str = ""
    query_type: Optional[str] = None


class Assembled(TypedDict):
    """The write of `assemble_context`: the context and the index's chunks next to its best hits it shows."""

    context: str
    neighbours: tuple[Hit, ...]


@skill
@tool
def assemble_context(state: Assembling, ctx: Context) -> Assembled:
    """Writes `context` from hits, relations and wiki pages under the plan's budgets (`render_context`), and the
    `neighbours` it shows after its hits (the index's chunks next to the best; for a synthesis, the openings of
    their documents too)."""
    near = neighbours(context_hits(state), ctx.resources.get("index"), state.original_query,
                      overview=state.query_type == "synthesis")
    return {"context": render_context(state, near), "neighbours": near}


def resolve(source: str, section: str, hits: Sequence[Hit]) -> Optional[Hit]:
    """Returns the context hit a marker names, or None when it names none.

    The source must equal the hit's source, chunk id or title, or be a part of
    its source path (models often shorten paths); the section must match
    exactly when the marker gives one.
    """
    return next(iter(resolving(source, section, hits)), None)


def resolving(source: str, section: str, hits: Sequence[Hit]) -> list[Hit]:
    """Returns every context hit a marker names, best first (`resolve`'s test): a marker without a section names
    each chunk of its file."""
    source, section = source.strip(), (section or "").strip()
    out = []
    for hit in hits:
        if section and section != hit.section:
            continue
        names = (hit.source, hit.chunk_id, hit.title)
        if source in names or (len(source) >= 4 and (source in hit.source or source in hit.title)):
            out.append(hit)
    return out


def cited(text: str, hits: Sequence[Hit]) -> tuple[tuple[Citation, ...], tuple[str, ...]]:
    """Returns the citations in `text` that resolve to `hits`, and the markers that do not."""
    good: dict[str, Citation] = {}
    bad: list[str] = []
    for claim, markers in claims(text):
        for m in markers:
            hit = resolve(m.group(1), m.group(2) or "", hits)
            if hit is None:
                bad.append(m.group(0))
            elif hit.chunk_id not in good:
                good[hit.chunk_id] = Citation(source=hit.source, section=hit.section, chunk_id=hit.chunk_id,
                                              quote=claim[:120])
    return tuple(good.values()), tuple(dict.fromkeys(bad))


_UNIT_END = re.compile(r"\n|(?:%s\s*)+[。；;，,、.]*(?=[^\s\[。；;，,、.])" % MARKER.pattern)


def claim_units(text: str) -> tuple[list[str], str]:
    """Returns the complete claims of streamed `text` and the unfinished rest; the pieces join back to `text`.

    A claim ends at a line end, or after its group of citation markers once
    the next claim has begun, so each piece holds exactly one of the claims
    `claims` finds in the whole answer, with the same markers: a check run on
    one piece judges it as it judges that claim in the whole.
    """
    units, start = [], 0
    for m in _UNIT_END.finditer(text):
        units.append(text[start:m.end()])
        start = m.end()
    return units, text[start:]


_STOPS = " 。；;，,、."
"""What may stand between or after markers without being a claim: spaces and stops (an English answer ends
``X [source: a]. Y [source: b].``)."""
_LEAD = re.compile(r"^(?:[-*•\s。；;，,、]|\.(?=\s|$))+")
"""Bullets and stops before a claim's first word (a full stop only before a space: `.bashrc` keeps its dot)."""


def claims(text: str) -> list[tuple[str, tuple[re.Match[str], ...]]]:
    """Returns the claims of an answer, each with the markers that follow it.

    A claim is the text of one line between consecutive groups of markers;
    text after a line's last marker is a claim without markers.
    """
    out = []
    for line in text.splitlines():
        if line.rstrip().endswith(("：", ":")) and not MARKER.search(line):
            continue  # a heading such as 关于「…」： introduces claims, it makes none
        start, pending, claim = 0, [], ""
        for m in MARKER.finditer(line):
            between = line[start:m.start()]
            if between.strip(_STOPS) and pending:
                out.append((claim, tuple(pending)))
                pending = []
            if between.strip(_STOPS):
                claim = _LEAD.sub("", between).strip()
            pending.append(m)
            start = m.end()
        if pending:
            out.append((claim, tuple(pending)))
        rest = line[start:].strip().lstrip("-*• ").strip()
        if rest.strip(_STOPS):
            out.append((rest, ()))
    return out


NUMBERED = re.compile(r"\[(\d{1,2})\](?!\(|\]\()")
"""A bare ``[n]`` reference to the context's n-th passage, not a markdown link's text: ``[2](url)``, nor a footnote
link a document writes as ``[[2]](url)`` and a model quoting it copies."""


def numbered_markers(text: str, hits: Sequence[Hit], label: str) -> str:
    """Returns `text` with each bare ``[n]`` naming the n-th passage of the context (`context_hits`) written as that
    passage's marker; a model that cites by number still gives checkable citations."""
    def written(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return marker(hits[n - 1], label) if 1 <= n <= len(hits) else m.group(0)

    return NUMBERED.sub(written, text)


def drop_markers(text: str, markers: Sequence[str]) -> str:
    """Returns `text` without the given markers."""
    for m in markers:
        text = text.replace(m, "")
    return text
