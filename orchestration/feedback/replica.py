"""Write-backs and reverts of every server sharing a feedback store, replayed in commit order onto this one's wiki.

Every write-back and revert takes the next number of the store's `rows.CHANGES` counter as the first statement of
the transaction that records it, and stores its item under that number (`rows.put_writeback`). The counter's row
lock makes the changes of all servers go one at a time, each after replaying what the others committed before it
(`Replica.record`), so no two live write-backs claim one fact and a revert removes exactly what its write-back
added. A `Replica` is one wiki folder's copy: its graph and wiki store hold every change up to `Replica.change`.
`Replica.follow` (run as a question opens the feedback loop) applies the changes committed after that, writes them
into the folder (graph, pages, analyses) and records the number there (`skills.store.wiki.LEARNED`), so a process
opening the folder later replays only what came after; one killed before that replays them again, which changes
nothing the folder already holds.

A row is replayed only as a local write-back could have written it (`checked`): facts of origin ``feedback`` carrying
the write-back's id in their provenance, learned from corpus documents this index holds, each with its source's
access label as this index labels it (or hidden), and an analysis page under ``analyses/``. A malformed row, or one
claiming a label its source does not have, is refused whole (named in `Replica.refused` and on stderr); it never
stops the reader.
"""
from __future__ import annotations

import json
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, TypeVar, Union

from filelock import FileLock
from pydantic import ValidationError

from lambdarag.errors import LambdaRAGError
from lambdarag.skills.profile import CorpusProfile
from lambdarag.skills.store.access import HIDDEN, Label
from lambdarag.skills.store.files import write_text
from lambdarag.skills.store.graph import EntityGraph, EntityRecord, RelationRecord
from lambdarag.skills.store.wiki import HEADER, WikiStore, learned_change, record_learned
from lambdarag.skills.wiki import page_file, render_page

from ..knowledge import KnowledgeBase
from .store import FeedbackStore, Tx
from .store.rows import CHANGES, writebacks_after

T = TypeVar("T")
EXTRACTOR_CONFIDENCE = {"rule": 0.6, "llm": 0.5}
"""Confidence of a learned relation by extractor: below compiled facts (1.0), so graph walks prefer those."""
WIKI_PAGES = ("entities/", "analyses/")     # citation sources that are wiki pages, not corpus documents
ANALYSIS = re.compile(r"analyses/[0-9a-f]{12}\.md")
LOCK_TIMEOUT = 60.0
_LOCK = threading.Lock()


def lock_for(path: Path) -> FileLock:
    """Returns the inter-process lock guarding the wiki files under `path` (graph, pages)."""
    return FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT)


def render_into(graph: EntityGraph, wiki_dir: Path, name: str, profile: Optional[CorpusProfile] = None) -> None:
    """Re-renders the wiki page of `name` from the graph (as the corpus `profile` lays a page out), or deletes it
    when the entity is gone."""
    path = wiki_dir / page_file(name)
    if name in graph.g:
        write_text(path, render_page(graph, name, profile))
    elif path.exists():
        path.unlink()


@dataclass(frozen=True)
class Change:
    """One write-back as a replica applies it: its facts added (live) or removed (reverted), its analysis page."""

    id: str
    reverted: bool
    entities: tuple[EntityRecord, ...] = ()
    relations: tuple[RelationRecord, ...] = ()
    analysis: Optional[str] = None           # the analysis page's path in the wiki folder
    analysis_text: Optional[str] = None      # its text (None: keep the page as the folder has it)

    def names(self) -> set[str]:
        """Returns the entities whose pages this change touches."""
        return {*(e.name for e in self.entities), *(x for r in self.relations for x in (r.head, r.tail))}


def index_labels(index: Any) -> dict[str, Label]:
    """Returns the access label of every document of `index`, by source."""
    return {str(m.get("source")): Label(department=m.get("department"), security_level=int(m.get("security_level") or 0))
            for m in index.documents().values()}


def label_refusal(source: str, claimed: Label, labels: Mapping[str, Label]) -> Optional[str]:
    """Returns why a fact from `source` may not carry label `claimed` here (None: it may): it must come from a
    document of this index and carry that document's label, or be hidden."""
    if source.startswith(WIKI_PAGES):
        return f"source {source!r} is a wiki page, not a corpus document"
    actual = labels.get(source)
    if actual is None:
        return f"source {source!r} is not a document of this index"
    if claimed != actual and claimed != HIDDEN:
        return (f"claims label {claimed.model_dump()} for {source!r}, which this index labels "
                f"{actual.model_dump()}")
    return None


def checked(item_id: str, raw: str, labels: Mapping[str, Label]) -> Union[Change, str]:
    """Returns the change a stored write-back row makes, or why it is refused (see the module docstring)."""
    try:
        body = json.loads(raw)
    except ValueError:
        return "the row is not JSON"
    if not isinstance(body, dict) or body.get("id") != item_id or not isinstance(body.get("reverted"), bool):
        return "the row is not a write-back item (id, reverted)"
    analysis = body.get("analysis")
    if analysis is not None and not (isinstance(analysis, str) and ANALYSIS.fullmatch(analysis)):
        return f"analysis {analysis!r} is not a page analyses/<hash>.md"
    if body["reverted"]:
        return Change(item_id, True, analysis=analysis)
    try:
        relations = tuple(RelationRecord.model_validate(r) for r in body.get("relations") or ())
        entities = tuple(EntityRecord.model_validate(e) for e in body.get("entity_records") or ())
    except (ValidationError, TypeError) as e:
        return f"invalid record: {str(e).splitlines()[0]}"
    for rec in (*relations, *entities):
        if rec.origin != "feedback" or rec.provenance.get("query_id") != item_id:
            return f"{rec.head if isinstance(rec, RelationRecord) else rec.name!r} was not learned by write-back " \
                   f"{item_id!r} (origin {rec.origin!r}, query id {rec.provenance.get('query_id')!r})"
    for r in relations:
        why = label_refusal(r.source, r.label(), labels) or (
            f"confidence {r.confidence} above a learned fact's {max(EXTRACTOR_CONFIDENCE.values())}"
            if r.confidence > max(EXTRACTOR_CONFIDENCE.values()) else None)
        if why:
            return f"relation {r.head} --{r.relation}--> {r.tail}: {why}"
    for e in entities:
        why = next((w for s, lab in e.sources.items() if (w := label_refusal(s, lab, labels))), None) \
            if e.sources else "no source attests it"
        if why:
            return f"entity {e.name}: {why}"
    text = body.get("analysis_text")
    if analysis is not None and text is not None:
        why = analysis_refusal(item_id, text, labels)
        if why:
            return f"analysis {analysis}: {why}"
    return Change(item_id, False, entities, relations, analysis, text)


def analysis_refusal(item_id: str, text: Any, labels: Mapping[str, Label]) -> Optional[str]:
    """Returns why `text` is not the analysis page of write-back `item_id` with its sources labelled as here."""
    m = HEADER.match(text.split("\n", 1)[0]) if isinstance(text, str) else None
    try:
        head = json.loads(m.group(1)) if m else None
        sources = {s: Label.model_validate(lab) for s, lab in head["sources"].items()} \
            if isinstance(head, dict) and head.get("analysis") == item_id else None
    except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
        sources = None
    if sources is None:
        return "its header does not name this write-back and its sources"
    return next((w for s, lab in sources.items() if (w := label_refusal(s, lab, labels))), None)


class Replica:
    """One wiki folder's copy of the learned facts: its graph (and wiki store), holding every change up to
    `change` (see the module docstring)."""

    def __init__(self, graph: EntityGraph, wiki_dir: Path, change: int, labels: Callable[[], Mapping[str, Label]],
                 profile: Optional[CorpusProfile] = None, wiki: Optional[WikiStore] = None) -> None:
        self.graph, self.dir, self.change, self.profile, self.wiki = graph, Path(wiki_dir), change, profile, wiki
        self.labels = labels
        self.lock = threading.RLock()
        self.refused: dict[str, str] = {}
        self._pages: set[str] = set()                       # entities whose pages the folder shows out of date
        self._analyses: dict[str, Optional[str]] = {}      # analysis pages to write (text) or delete (None)
        self._dirty = False                                 # whether the graph changed since it was last saved

    @classmethod
    def of(cls, kb: Optional[KnowledgeBase]) -> Optional["Replica"]:
        """Returns the replica of a knowledge base's graph and wiki, made once (None when it has no compiled wiki)."""
        if kb is None or kb.graph is None or kb.wiki_dir is None:
            return None
        with _LOCK:
            if kb.replica is None:
                kb.replica = cls(kb.graph, kb.wiki_dir, kb.learned, lambda: index_labels(kb.index),
                                 kb.resources()["profile"], kb.wiki)
        return kb.replica

    def follow(self, store: FeedbackStore, counter: Optional[int] = None) -> int:
        """Returns how many changes committed after `change` were replayed, after applying them and writing them
        into the folder (one counter read when there are none; none when the caller read the `counter`)."""
        if (store.read(lambda tx: tx.counter(CHANGES)) if counter is None else counter) <= self.change:
            return 0
        with self.lock:
            last, rows = store.read(lambda tx: writebacks_after(tx, self.change))
            self.replay(last, rows)
            self.materialise()
        return len(rows)

    def record(self, store: FeedbackStore, change: Callable[[Tx, int], T], undo: Callable[[], Any]) -> T:
        """Returns `change(tx, number)` run in one write transaction as change `number`, after replaying the changes
        committed before it; `undo` reverses what `change` did to the graph, run when the transaction fails (and
        before it is run again). The caller holds `lock` and then calls `materialise`."""
        tried, number = False, 0

        def run(tx: Tx) -> T:
            nonlocal tried, number
            if tried:
                undo()
            tried = True
            number = tx.bump(CHANGES)            # the counter's row lock: other servers' changes wait for this one
            self.replay(number - 1, writebacks_after(tx, self.change)[1])
            return change(tx, number)
        try:
            out = store.write(run)
        except BaseException:
            if tried:
                undo()
            raise
        self.change = max(self.change, number)
        return out

    def replay(self, last: int, rows: list[tuple[str, int, str]]) -> None:
        """Applies the stored write-back rows in order (refusing those `checked` refuses); `change` becomes `last`."""
        labels: Optional[Mapping[str, Label]] = None
        for item_id, number, raw in rows:
            labels = self.labels() if labels is None else labels
            change = checked(item_id, raw, labels)
            try:
                if isinstance(change, str):
                    self.refuse(item_id, change)
                else:
                    self.apply(change)
            except LambdaRAGError as e:
                self.refuse(item_id, str(e))
            self.change = max(self.change, number)
        self.change = max(self.change, last)

    def refuse(self, item_id: str, why: str) -> None:
        self.refused[item_id] = why
        print(f"feedback replica {self.dir}: refused write-back {item_id!r}: {why}", file=sys.stderr)

    def apply(self, change: Change) -> None:
        """Adds a live change's facts the graph lacks, or removes a reverted one's; its pages become due."""
        graph = self.graph
        if change.reverted:
            self.remove(change.id, change.analysis)
            return
        for rec in change.entities:
            if graph.resolve(rec.name) is None:
                graph.add_entity(rec)
        for rel in change.relations:
            graph.add_relation(rel)
        self.due(change.names(), change.analysis, change.analysis_text, changed=bool(change.names()))

    def remove(self, item_id: str, analysis: Optional[str] = None) -> int:
        """Returns how many relations and entities went after removing what write-back `item_id` added to the graph;
        the pages they touched and its `analysis` page become due."""
        graph = self.graph
        touched = {x for r in graph.records() if r.provenance.get("query_id") == item_id for x in (r.head, r.tail)}
        touched |= {e.name for e in graph.entities() if e.provenance.get("query_id") == item_id}
        removed = graph.remove_by_provenance(query_id=item_id) if touched else 0
        self.due(touched, analysis, delete=True, changed=bool(removed))
        return removed

    def pending_analyses(self) -> set[str]:
        """Returns the analysis pages due to be written or deleted."""
        return set(self._analyses)

    def due(self, names: set[str], analysis: Optional[str] = None, text: Optional[str] = None,
            delete: bool = False, changed: bool = False) -> None:
        """Marks the pages of `names` for re-rendering, an analysis page for writing (`text`) or deleting, and the
        graph for saving when it `changed`."""
        self._pages |= names
        self._dirty = self._dirty or changed
        if analysis is not None and (text is not None or delete):
            self._analyses[analysis] = text

    def materialise(self) -> None:
        """Writes what changed into the folder (the graph, the due pages and analyses, the change number), then
        refreshes the wiki store's copies of those pages; a folder it may not write keeps its old files."""
        pages, analyses = self._pages, self._analyses
        try:
            with lock_for(self.dir / "feedback"):
                if self._dirty:            # an unchanged graph keeps its file, so cache keys stay valid
                    self.graph.save(self.dir / "relations.json")
                for name in sorted(pages):
                    render_into(self.graph, self.dir, name, self.profile)
                for rel, text in analyses.items():
                    if text is not None:
                        write_text(self.dir / rel, text)
                    else:
                        (self.dir / rel).unlink(missing_ok=True)
                if learned_change(self.dir) < self.change:
                    record_learned(self.dir, self.change)
        except OSError as e:
            print(f"feedback replica {self.dir}: cannot write the learned facts ({e}); they are served from memory",
                  file=sys.stderr)
        self._pages, self._analyses, self._dirty = set(), {}, False
        if self.wiki is not None and pages:
            self.wiki.refresh(page_file(n) for n in pages)


def follow(kb: Optional[KnowledgeBase], store: FeedbackStore, counter: Optional[int] = None) -> None:
    """Replays onto `kb`'s graph and wiki what the servers sharing `store` wrote back or reverted since (up to the
    change `counter` the caller read, if it did)."""
    replica = Replica.of(kb)
    if replica is not None:
        replica.follow(store, counter)
