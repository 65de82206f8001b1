"""The write-back journal: every write-back (entities, relations, pages, analysis), an item of the feedback store
keyed by query id with its provenance, so ``lambdarag feedback revert <id>`` can undo it.

Write-back (`write_back`) needs a passed citation check over ``minSources``
distinct cited corpus documents (cited wiki pages do not count); it adds only
facts the graph lacks, through `EntityGraph.add_entity/add_relation` with
``origin="feedback"``. The item (its entity and relation records and its
analysis page's text included) is stored as the next change of the store
(`replica`), in the transaction that replays what other servers sharing the
store changed before it; the graph, the touched entity pages (refreshing just
those in the knowledge base's wiki store, never re-reading the rest) and
``wiki/analyses/<hash>.md`` are written after it commits. `revert` removes by
provenance and re-renders, which restores relations.json and the pages byte for
byte when nothing else changed them meanwhile; every other server replays both.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace
import json
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from lambdarag import Context, State
from lambdarag.state import ALL_ACCESS
from lambdarag.errors import LambdaRAGError
from lambdarag.skills import build as build_skill
from lambdarag.skills.store.access import HIDDEN, Label
from lambdarag.skills.store.graph import EntityGraph, EntityRecord, RelationRecord
from lambdarag.skills.wiki import page_file

from ..knowledge import KnowledgeBase
from .cache import normalise
from .replica import EXTRACTOR_CONFIDENCE, WIKI_PAGES, Change, Replica, lock_for, render_into
from .store import FeedbackStore, Tx, now
from .store.rows import CHANGES, WRITEBACK, put_writeback

FUNCTION_WORDS = frozenset("由 都 对 在 将 被 和 与 及 规定 应当 负责 依照 根据 依法 实施".split())


class WriteBackJournal:
    """Facts learned from answers, written into the graph and wiki with provenance, and their undoing."""

    def __init__(self, store: FeedbackStore, min_sources: int, kb: Optional[KnowledgeBase] = None) -> None:
        self.store, self.min_sources, self.kb = store, min_sources, kb

    def write_back(self, query_id: str, state: State, ctx: Optional[Context]) -> Optional[dict[str, Any]]:
        """Returns the learned item after writing an answer's new facts into the graph and wiki, or None.

        Runs only for a passed citation check over at least ``minSources`` distinct
        cited sources; every entity and relation carries the provenance
        (query id, cited sources, time, extractor, confidence).
        """
        kb = self.kb
        sources = cited_sources(state)
        replica = Replica.of(kb)
        if replica is None or len(sources) < self.min_sources or state.verdict is None or not state.verdict.passed:
            return None
        extract = build_skill("fact_extract", {}) >> build_skill("fact_support", {})
        # the facts are read as the knowledge base's corpus profile reads its documents, whatever context asked
        run_ctx = replace(ctx, resources={**ctx.resources, **kb.resources()}) if ctx else Context(resources=kb.resources())
        facts = extract.run(state, run_ctx).facts
        self.log_rejections(query_id, facts.rejected)
        wiki_dir: Path = replica.dir
        analysis = f"analyses/{hashlib.sha1(normalise(state.query).encode()).hexdigest()[:12]}.md"
        labels = {h.source: Label(department=h.department, security_level=h.security_level) for h in state.hits}
        prov = {"query_id": query_id, "query": state.original_query or state.query, "sources": list(sources),
                "time": now(), "extractor": f"fact_extract/{facts.origin}",
                "confidence": EXTRACTOR_CONFIDENCE.get(facts.origin, 0.5)}
        is_title = kb.resources()["profile"].names.is_title

        def learn(tx: Tx, number: int) -> Optional[dict[str, Any]]:
            graph = replica.graph
            entities, relations = self._add_facts(graph, facts, prov, labels, is_title)
            created = not (wiki_dir / analysis).exists() and analysis not in replica.pending_analyses()
            if not (entities or relations or created):
                return None
            item = {"id": query_id, "query": prov["query"], "time": prov["time"], "sources": list(sources),
                    "extractor": prov["extractor"], "confidence": prov["confidence"], "entities": entities,
                    "relations": relations, "pages": [page_file(n) for n in pages_of(entities, relations)],
                    "analysis": analysis if created else None, "wiki_dir": str(wiki_dir), "reverted": False,
                    "entity_records": [graph.entity(n).model_dump() for n in entities],
                    "analysis_text": analysis_page(state, prov, labels, relations) if created else None}
            put_writeback(tx, item, number)
            return item

        with replica.lock:
            item = replica.record(self.store, learn, lambda: replica.remove(query_id))
            if item is not None:
                replica.due(pages_of(item["entities"], item["relations"]), item["analysis"], item["analysis_text"],
                            changed=bool(item["entities"] or item["relations"]))
            replica.materialise()
        if item is not None:
            item["change"] = replica.change
        return item

    @staticmethod
    def _add_facts(graph: EntityGraph, facts: Any, prov: dict[str, Any], labels: Mapping[str, Label],
                   is_title: Callable[[str], bool]) -> tuple[list[str], list[dict[str, Any]]]:
        """Adds the facts the graph does not hold yet; returns the new entity names and relation records."""
        def entity(name: str) -> Optional[str]:
            # an entity derives from the cited chunks that name it, never from everything the answer cited
            sources = [s for s in facts.attested.get(name, ()) if s in prov["sources"]]
            if not sources or graph.resolve(name) is not None or noisy(graph, name, is_title):
                return None
            graph.add_entity(EntityRecord(name=name, origin="feedback", provenance=prov, wiki_page=page_file(name),
                                          sources={s: labels.get(s, HIDDEN) for s in sources}))
            return name

        entities = [n for n in (entity(e) for e in facts.entities) if n]
        relations = []
        for r in facts.relations:
            if r.source not in prov["sources"]:      # learned only from cited corpus documents, never from wiki pages
                continue
            head, tail = (graph.resolve(x) or x for x in (r.head, r.tail))
            if head == tail or any(x.relation == r.relation and x.tail == tail for x in graph.neighbors(head, user=ALL_ACCESS)):
                continue
            entities += [n for n in (entity(x) for x in (head, tail)) if n]
            label = labels.get(r.source, HIDDEN)
            rec = graph.add_relation(RelationRecord(
                head=head, relation=r.relation, tail=tail, source=r.source, section=r.section,
                description=r.description, origin="feedback", confidence=min(r.confidence, prov["confidence"]),
                provenance=prov, department=label.department, security_level=label.security_level))
            relations.append(rec.model_dump())
        return list(dict.fromkeys(entities)), relations

    def log_rejections(self, query_id: str, rejected: Sequence[str]) -> None:
        """Appends each fact write-back refused, with its reason, to the ``rejected`` log beside the journal."""
        def append(tx: Tx) -> None:
            for reason in rejected:
                tx.append("rejected", {"query_id": query_id, "time": now(), "reason": reason})
        if rejected:
            self.store.write(append)

    def items(self) -> dict[str, dict[str, Any]]:
        """Returns every learned item by id (reverted ones included, marked); a row lacking an item's fields is left
        out (a replica refuses it too, `replica.checked`)."""
        return {i: x for i, x in self.store.read(lambda tx: tx.items(WRITEBACK)).items() if well_formed(x)}

    def item(self, item_id: str) -> dict[str, Any]:
        item = self.store.read(lambda tx: tx.item(WRITEBACK, item_id))
        if item is None:
            known = ", ".join(sorted(self.items())) or "none"
            raise LambdaRAGError(f"feedback: no learned item {item_id!r}; known: {known}")
        return item

    def revert(self, item_id: str) -> dict[str, Any]:
        """Returns the reverted item after removing its facts from the graph and its pages from the wiki: the
        knowledge base's, or (a command that opened none) those of the folder the item was written into."""
        replica = Replica.of(self.kb)
        if replica is None:
            return self.revert_files(item_id)
        item = self.item(item_id)

        def undo(tx: Tx, number: int) -> dict[str, Any]:
            live = reverted(live_item(tx, item_id))
            live["removed"] = replica.remove(item_id, live.get("analysis"))
            put_writeback(tx, live, number)
            return live

        def restore() -> None:       # the revert did not commit: its facts are live again
            replica.apply(own_change(item))
        with replica.lock:
            item = replica.record(self.store, undo, restore)
            replica.materialise()
        return item

    def revert_files(self, item_id: str) -> dict[str, Any]:
        """Returns the reverted item after marking it reverted in the store, then removing its facts from the files
        of the folder it was written into, when that folder is on this machine (servers replay the revert)."""
        def undo(tx: Tx) -> tuple[dict[str, Any], int]:
            number = tx.bump(CHANGES)
            item = reverted(live_item(tx, item_id))
            put_writeback(tx, item, number)
            return item, number
        item, number = self.store.write(undo)
        wiki_dir = Path(item["wiki_dir"])
        if not (wiki_dir / "relations.json").is_file():
            return item
        with lock_for(wiki_dir / "feedback"):
            graph = EntityGraph.load(wiki_dir / "relations.json")
            item["removed"] = graph.remove_by_provenance(query_id=item_id)
            graph.save(wiki_dir / "relations.json")
            for name in pages_of(item["entities"], item["relations"]):
                render_into(graph, wiki_dir, name)
            if item["analysis"]:
                (wiki_dir / item["analysis"]).unlink(missing_ok=True)
        self.store.write(lambda tx: tx.put_item(WRITEBACK, item_id, {**item, "change": number}, "reverted",
                                                pos=number))
        return item


def well_formed(item: Mapping[str, Any]) -> bool:
    """Returns whether a stored write-back has the fields the journal, its listing and retention read."""
    return isinstance(item.get("reverted"), bool) and isinstance(item.get("time"), str) \
        and isinstance(item.get("query"), str) and isinstance(item.get("sources"), list) \
        and isinstance(item.get("entities"), list) and isinstance(item.get("relations"), list)


def live_item(tx: Tx, item_id: str) -> dict[str, Any]:
    """Returns write-back `item_id`, its row locked until the transaction ends, or raises if it is gone or reverted."""
    item = tx.item(WRITEBACK, item_id, lock=True)
    if item is None:
        known = ", ".join(sorted(tx.items(WRITEBACK))) or "none"
        raise LambdaRAGError(f"feedback: no learned item {item_id!r}; known: {known}")
    if item["reverted"]:
        raise LambdaRAGError(f"feedback revert: item {item_id!r} was already reverted")
    return item


def reverted(item: dict[str, Any]) -> dict[str, Any]:
    """Returns `item` marked reverted, without what only replaying it live needs (its entity records and analysis
    text), so reverted items keep the store no larger than before."""
    kept = {k: v for k, v in item.items() if k not in ("entity_records", "analysis_text")}
    return {**kept, "reverted": True, "reverted_at": now()}


def own_change(item: Mapping[str, Any]) -> Change:
    """Returns the change that adds this server's own write-back item's facts again (parsed, not checked)."""
    return Change(item["id"], False, tuple(EntityRecord.model_validate(e) for e in item.get("entity_records") or ()),
                  tuple(RelationRecord.model_validate(r) for r in item["relations"]))


def pages_of(entities: Sequence[str], relations: Sequence[Mapping[str, Any]]) -> set[str]:
    """Returns the entities whose pages a write-back touches: its new entities and the ends of its relations."""
    return {*entities, *(e for r in relations for e in (r["head"], r["tail"]))}


def cited_sources(state: State) -> tuple[str, ...]:
    """Returns the corpus documents an answer cites; cited wiki pages are compiled from them and do not count."""
    return tuple(dict.fromkeys(c.source for c in state.citations if c.source and not c.source.startswith(WIKI_PAGES)))


def noisy(graph: EntityGraph, name: str, is_title: Callable[[str], bool] = lambda name: False) -> bool:
    """Returns whether a new name is a phrase rather than a name: a known entity with words glued in front, or
    (unless the corpus profile calls it a document title) a span holding function words (都由…机构, …规定…部门)."""
    from lambdarag.skills.store.tokenize import plain_words

    spans = graph.spans(name, user=ALL_ACCESS)
    if spans and spans[-1][1] == len(name) and spans[-1][0] > 0:
        return True
    return not is_title(name) and bool(FUNCTION_WORDS & {w for w, _, _ in plain_words().spans(name)})


def analysis_page(state: State, prov: Mapping[str, Any], labels: Mapping[str, Label],
                  relations: Sequence[Mapping[str, Any]]) -> str:
    """Returns the markdown of a cross-document analysis: the question, the cited answer, what it taught."""
    head = {"analysis": prov["query_id"], "query": prov["query"], "provenance": dict(prov),
            "sources": {s: labels.get(s, Label()).model_dump() for s in prov["sources"]}}
    lines = [f"<!-- wiki {json.dumps(head, ensure_ascii=False)} -->", f"# {prov['query']}", "",
             f"查询 {prov['query_id']}，{prov['time']}，抽取器 {prov['extractor']}，综合 {len(prov['sources'])} 个来源。",
             "", "## 综合回答", "", state.answer.strip(), "", "## 引用"]
    lines += [f"- {c.source}{'#' + c.section if c.section else ''} [来源: {c.source}]" for c in state.citations]
    if relations:
        lines += ["", "## 新发现的关系"]
        lines += [f"- [[{r['head']}]] --{r['relation']}--> [[{r['tail']}]] [来源: {r['source']}#{r['section']}]"
                  for r in relations]
    return "\n".join(lines) + "\n"
