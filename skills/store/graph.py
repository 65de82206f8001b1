"""The entity graph: typed relations with provenance between laws, agencies and topics, on networkx.

Entities are nodes (one node per law, whatever its dated versions); relations
are edges of a `MultiDiGraph` keyed by `RelationRecord.key()`, so the same
fact found in two documents is two edges with two sources. The graph persists
to ``wiki/relations.json``::

    {"schema": 1, "entities": {name: EntityRecord}, "relations": [RelationRecord, ...]}

Save semantics (several processes may save one file): under a `filelock` lock,
if the file changed since this graph loaded it, this graph's own changes since
then (added/removed relations, upserted/removed entities) are re-applied onto
the file's current contents; otherwise this graph is written as is. For an
entity both sides changed, this side's record wins. The write is atomic (temp
file in the same directory, fsync, `os.replace`) and the previous file is kept
as ``relations.json.bak``. A corrupt file raises `StoreCorrupt` and is never
overwritten.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, Optional, Protocol, Union

from filelock import FileLock
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lambdarag import User
from .records import Relation
from lambdarag.state import Record
from lambdarag.errors import LambdaRAGError, StoreCorrupt

from .access import Label, attested, principal, visible
from .files import write_atomic

if TYPE_CHECKING:
    import networkx as nx

SCHEMA = 1
ORIGINS = ("rule", "llm", "feedback")


class Event(Record):
    """One header line of a statute: adopted, promulgated, revised, amended, in force."""

    date: Optional[str] = None
    action: str = ""
    body: str = ""
    note: str = ""


class Version(Record):
    """One dated version of an entity's text, from one source document."""

    date: Optional[str] = None
    source: str
    title: str = ""
    events: tuple[Event, ...] = ()
    current: bool = False
    supersedes: Optional[str] = None   # date of the version this one replaced


class EntityRecord(Record):
    """A node: what the entity is, its names, where it was seen, and its versions."""

    name: str
    type: str = "unknown"
    aliases: tuple[str, ...] = ()
    alias_sources: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """The documents that gave each alias, so removing a document removes the aliases only it gave (an alias with
    no entry, e.g. from a graph compiled before these were kept, stays)."""
    refs: int = 0                                   # number of sources mentioning it
    wiki_page: str = ""
    versions: tuple[Version, ...] = ()
    current: Optional[str] = None                   # date of the current version
    sources: dict[str, Label] = Field(default_factory=dict)
    origin: Literal["rule", "llm", "feedback"] = "rule"
    provenance: dict[str, Any] = Field(default_factory=dict)

    def visible_to(self, user: Optional[User]) -> bool:
        """Returns whether some source attests this entity to `user` (`EntityGraph.visible` also asks its relations)."""
        return attested(self.sources, user)


class RelationRecord(Relation):
    """An edge as stored: a `Relation` plus when it was added, its provenance and its source's access labels."""

    origin: Literal["rule", "llm", "feedback"] = "rule"
    added: str = ""
    provenance: dict[str, Any] = Field(default_factory=dict)
    department: Optional[str] = None
    security_level: int = 0

    def key(self) -> str:
        """Returns the identity of this fact: the same fact from the same place and origin is one edge."""
        return "\x1f".join((self.head, self.relation, self.tail, self.source, self.section, self.origin))

    def label(self) -> Label:
        return Label(department=self.department, security_level=self.security_level)

    def visible_to(self, user: Optional[User]) -> bool:
        """Returns whether `user` may see this fact: it is derived from its one source."""
        return self.label().visible_to(user)

    def to_relation(self) -> Relation:
        """Returns the `skills.store.records.Relation` a State carries (without storage-only fields)."""
        return Relation(**self.model_dump(include=set(Relation.model_fields)))


@dataclass
class DocFacts:
    """What one document contributes to the graph: entities and relations, all tagged with its source."""

    source: str
    entity: str = ""                                   # the entity the document is a version of
    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)


class GraphFile(BaseModel):
    """The on-disk form of the graph (schema 1); its validator is built when a graph is first read or saved."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    schema_: Literal[1] = Field(SCHEMA, alias="schema")
    entities: dict[str, EntityRecord] = Field(default_factory=dict)
    relations: list[RelationRecord] = Field(default_factory=list)


@dataclass(frozen=True)
class Walk:
    """A bounded neighbourhood: the nodes reached, the relations among them, and how each node was reached."""

    nodes: tuple[str, ...]
    relations: tuple[Relation, ...]
    paths: dict[str, tuple[Relation, ...]] = field(default_factory=dict)
    truncated: bool = False   # max_nodes stopped the walk before max_hops did


def plain_name(name: str) -> str:
    """Returns a name without surrounding blanks and 《》 / 〈〉 / <> quotes: the short form any corpus allows."""
    return name.strip().strip("《》〈〉<> ")


class Names(Protocol):
    """How a corpus writes an entity's name (a corpus profile is one): its short form and every form text may use."""

    def short_name(self, name: str) -> str: ...

    def name_forms(self, name: str, kind: Optional[str] = None) -> set[str]: ...


class PlainNames:
    """The names of a graph that knows nothing of its corpus: a name as given and without its quotes."""

    def short_name(self, name: str) -> str:
        return plain_name(name)

    def name_forms(self, name: str, kind: Optional[str] = None) -> set[str]:
        return {name, plain_name(name)}


PLAIN = PlainNames()


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def read_store(path: Path) -> GraphFile:
    """Returns the validated contents of a relations.json, or raises `StoreCorrupt` naming file and position."""
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:   # typically a file cut inside a multi-byte character
        before = raw[:e.start].decode("utf-8", "replace")
        line, col = before.count("\n") + 1, len(before) - before.rfind("\n")
        raise StoreCorrupt(f"{path}: invalid UTF-8 at line {line}, column {col} (byte {e.start}); "
                           f"the file was left unchanged") from None
    except json.JSONDecodeError as e:
        raise StoreCorrupt(f"{path}: invalid JSON at line {e.lineno}, column {e.colno} ({e.msg}); "
                           f"the file was left unchanged (previous version: {path.name}.bak)") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise StoreCorrupt(f"{path}: expected an object with \"schema\": {SCHEMA}, got {got!r}; "
                           f"the file was left unchanged")
    try:
        return GraphFile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise StoreCorrupt(f"{path}: invalid record at {where}: {first['msg']}; the file was left unchanged") from None


def surface_forms(rec: EntityRecord, forms: Names) -> set[str]:
    """Returns the names text may use for an entity: the forms of its name for its type, its aliases and their short
    forms."""
    found = {*forms.name_forms(rec.name, rec.type), *rec.aliases, *(forms.short_name(a) for a in rec.aliases)}
    return {f for f in found if len(f) >= 2}


def put_entity(g: "nx.MultiDiGraph", names: dict[str, str], rec: EntityRecord, forms: Names) -> None:
    """Adds (or replaces) an entity node and its surface forms."""
    g.add_node(rec.name, record=rec)
    for form in surface_forms(rec, forms):
        names.setdefault(form, rec.name)
    names[rec.name] = rec.name


def put_relation(g: "nx.MultiDiGraph", names: dict[str, str], rec: RelationRecord, forms: Names) -> None:
    """Adds a relation edge, creating missing end entities with the relation's origin and provenance."""
    for end in (rec.head, rec.tail):
        if end not in g:
            put_entity(g, names, EntityRecord(name=end, origin=rec.origin, provenance=rec.provenance), forms)
    g.add_edge(rec.head, rec.tail, key=rec.key(), record=rec)


class EntityGraph:
    """Entities and typed relations with provenance; see the module docstring for persistence.

    Every reading method that takes a `user` shows only what that user may
    see; a missing user is the public (`skills.store.access.principal`). The
    raw accessors (`entity`, `entities`, `records`, `resolve`) are the store's
    own and check nothing: callers showing their output filter with `visible`.

    >>> g = EntityGraph()
    >>> _ = g.add_relation(RelationRecord(head="细则", relation="依据", tail="法"))
    >>> [r.tail for r in g.neighbors("细则")]
    ['法']
    """

    def __init__(self, path: Union[str, Path, None] = None, *, names: Names = PLAIN) -> None:
        self.path = Path(path) if path else None
        self.names = names                            # how the corpus writes names (its profile's forms)
        self._g: Optional["nx.MultiDiGraph"] = None
        self._pending: Optional[GraphFile] = None     # read by `load`, put into the graph on first use
        self._surface: dict[str, str] = {}           # any surface form → canonical name
        self._matcher: Optional[dict[str, tuple[int, ...]]] = None
        self._base_entities: dict[str, EntityRecord] = {}
        self._base_relations: dict[str, RelationRecord] = {}
        self._base_digest: Optional[str] = None
        self._building = threading.Lock()

    # -- persistence -------------------------------------------------------
    @classmethod
    def load(cls, path: Union[str, Path], *, missing_ok: bool = False, names: Names = PLAIN) -> "EntityGraph":
        """Returns the graph stored at `path` (an empty one if missing and `missing_ok`), its names written as `names`
        writes them (the corpus profile's forms; plain ones by default)."""
        graph = cls(path, names=names)
        p = Path(path)
        if not p.exists():
            if missing_ok:
                return graph
            raise LambdaRAGError(f"{p}: no such relations file; compile the wiki first (lambdarag compile-wiki)")
        raw = p.read_bytes()
        graph._pending = read_store(p)
        graph._base_digest = hashlib.sha256(raw).hexdigest()
        return graph

    @property
    def g(self) -> "nx.MultiDiGraph":
        """Returns the networkx graph, built on first use, once, under a lock.

        Importing networkx takes 0.25 s or more, so a question whose route never reads the graph
        (and a knowledge base that only opens it) does not pay for it. Concurrent `Par` branches and
        requests share one graph: the first builds it while the others wait, and a failed build
        keeps the stored records, so the next use tries again.
        """
        if self._g is None:
            with self._building:
                if self._g is None:
                    self._fill(self._pending or GraphFile())
                    self._pending = None
                    self._mark_clean()
        return self._g

    @property
    def _names(self) -> dict[str, str]:
        self.g  # building the graph fills the surface forms
        return self._surface

    def _fill(self, store: GraphFile) -> None:
        """Replaces the graph and its surface forms by `store`'s, built aside and swapped in whole,
        so a concurrent reader sees the old graph or the new one, never a half-built one."""
        import networkx as nx

        g: "nx.MultiDiGraph" = nx.MultiDiGraph()
        names: dict[str, str] = {}
        for rec in store.entities.values():
            put_entity(g, names, rec, self.names)
        for rel in store.relations:
            put_relation(g, names, rel, self.names)
        self._g, self._surface, self._matcher = g, names, None

    def _mark_clean(self) -> None:
        self._base_entities = {n: d["record"] for n, d in self.g.nodes(data=True)}
        self._base_relations = {k: d["record"] for _, _, k, d in self.g.edges(keys=True, data=True)}

    def to_store(self) -> GraphFile:
        """Returns the graph as its on-disk model."""
        return GraphFile(entities={n: self.g.nodes[n]["record"] for n in sorted(self.g.nodes)},
                         relations=sorted(self.records(), key=lambda r: r.key()))

    def save(self, path: Union[str, Path, None] = None) -> Path:
        """Saves atomically under a lock, merging with changes other processes saved meanwhile; returns the path."""
        target = Path(path) if path else self.path
        if target is None:
            raise LambdaRAGError("EntityGraph.save: no path given and the graph was not loaded from a file")
        target.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target) + ".lock", timeout=60):
            store = self.to_store()
            if target.exists():
                raw = target.read_bytes()
                if hashlib.sha256(raw).hexdigest() != self._base_digest:
                    store = self._rebase(read_store(target))
            data = (store.model_dump_json(by_alias=True, indent=1) + "\n").encode("utf-8")
            write_atomic(target, data)
        self.path = target
        self._fill(store)
        self._base_digest = hashlib.sha256(data).hexdigest()
        self._mark_clean()
        return target

    def _rebase(self, disk: GraphFile) -> GraphFile:
        """Returns `disk` with this graph's changes since it was loaded applied on top."""
        entities = dict(disk.entities)
        mine = {n: d["record"] for n, d in self.g.nodes(data=True)}
        for name, rec in mine.items():
            if self._base_entities.get(name) != rec:
                entities[name] = rec
        for name in self._base_entities.keys() - mine.keys():
            entities.pop(name, None)
        relations = {r.key(): r for r in disk.relations}
        current = {k: d["record"] for _, _, k, d in self.g.edges(keys=True, data=True)}
        for key, rec in current.items():
            if self._base_relations.get(key) != rec:
                relations[key] = rec
        for key in self._base_relations.keys() - current.keys():
            relations.pop(key, None)
        for rec in relations.values():
            for end in (rec.head, rec.tail):
                entities.setdefault(end, EntityRecord(name=end))
        return GraphFile(entities=dict(sorted(entities.items())),
                         relations=sorted(relations.values(), key=lambda r: r.key()))

    # -- building ------------------------------------------------------------
    def _put_entity(self, rec: EntityRecord) -> None:
        put_entity(self.g, self._names, rec, self.names)
        self._matcher = None

    def _put_relation(self, rec: RelationRecord) -> None:
        put_relation(self.g, self._names, rec, self.names)
        self._matcher = None

    def add_entity(self, rec: Union[EntityRecord, str], **fields: Any) -> EntityRecord:
        """Returns the stored entity after adding `rec` or merging it into the existing one.

        Merging unions aliases, sources and versions (by source); a known type
        is kept unless the existing one is ``unknown``.
        """
        new = rec if isinstance(rec, EntityRecord) else EntityRecord(name=rec, **fields)
        if not new.name.strip():
            raise LambdaRAGError(f"entity name is empty (sources: {', '.join(new.sources) or 'none'}); "
                                 "every entity needs a name")
        if new.sources and new.aliases and not new.alias_sources:
            new = new.model_copy(update={"alias_sources": {a: tuple(sorted(new.sources)) for a in new.aliases}})
        old = self.entity(new.name)
        if old is not None:
            given = {a: tuple(sorted({*old.alias_sources.get(a, ()), *new.alias_sources.get(a, ())}))
                     for a in {*old.alias_sources, *new.alias_sources}}
            versions = {v.source: v for v in old.versions}
            versions.update({v.source: v for v in new.versions})
            new = old.model_copy(update={
                "type": old.type if old.type != "unknown" else new.type,
                "aliases": tuple(sorted(set(old.aliases) | set(new.aliases))),
                "alias_sources": given,
                "sources": {**old.sources, **new.sources},
                "versions": tuple(versions.values()),
                "wiki_page": new.wiki_page or old.wiki_page,
                "provenance": {**old.provenance, **new.provenance},
            })
        new = self._with_version_chain(new)
        new = new.model_copy(update={"refs": len(new.sources)})
        self._put_entity(new)
        return new

    @staticmethod
    def _with_version_chain(rec: EntityRecord) -> EntityRecord:
        """Returns `rec` with versions sorted by date, each pointing at the one it supersedes, newest current."""
        if not rec.versions:
            return rec.model_copy(update={"current": None})
        ordered = sorted(rec.versions, key=lambda v: (v.date or "", v.source))
        chain, previous = [], None
        for i, v in enumerate(ordered):
            chain.append(v.model_copy(update={"supersedes": previous, "current": i == len(ordered) - 1}))
            previous = v.date
        return rec.model_copy(update={"versions": tuple(chain), "current": ordered[-1].date})

    def add_relation(self, rec: Union[RelationRecord, None] = None, **fields: Any) -> RelationRecord:
        """Returns the stored relation; missing end entities are created with type ``unknown``."""
        rec = rec if rec is not None else RelationRecord(**fields)
        if not (rec.head.strip() and rec.tail.strip()):
            raise LambdaRAGError(f"relation {rec.head!r} --{rec.relation}--> {rec.tail!r} from {rec.source}: "
                                 "an end entity has an empty name")
        if rec.origin not in ORIGINS:
            raise LambdaRAGError(f"relation origin must be one of {', '.join(ORIGINS)}, got {rec.origin!r}")
        if not rec.added:
            rec = rec.model_copy(update={"added": now()})
        self._put_relation(rec)
        return rec

    def remove_relation(self, rec: RelationRecord) -> None:
        if self.g.has_edge(rec.head, rec.tail, key=rec.key()):
            self.g.remove_edge(rec.head, rec.tail, key=rec.key())

    def remove_entity(self, name: str) -> None:
        """Removes an entity and every relation touching it."""
        if name in self.g:
            self.g.remove_node(name)
            self._surface = {k: v for k, v in self._names.items() if v != name}
            self._matcher = None

    def remove_by_provenance(self, **match: Any) -> int:
        """Removes every relation and entity whose provenance contains all `match` items; returns how many."""
        if not match:
            raise LambdaRAGError("remove_by_provenance needs at least one provenance key, e.g. query_id='q1'")

        def hit(prov: dict[str, Any]) -> bool:
            return all(prov.get(k) == v for k, v in match.items())

        gone = [r for r in self.records() if hit(r.provenance)]
        for rec in gone:
            self.remove_relation(rec)
        # an entity learned with these facts goes too, unless other facts now use it
        names = [n for n, d in self.g.nodes(data=True) if hit(d["record"].provenance) and not self.g.degree(n)]
        for name in names:
            self.remove_entity(name)
        return len(gone) + len(names)

    def remove_source(self, source: str) -> set[str]:
        """Removes what document `source` contributed; returns the entities affected.

        Relations from the source go; the source leaves every entity's sources,
        versions and the aliases only it gave; an entity left with no source and
        no relation goes too.
        """
        touched: set[str] = set()
        for rec in [r for r in self.records() if r.source == source]:
            self.remove_relation(rec)
            touched.update((rec.head, rec.tail))
        for name, data in list(self.g.nodes(data=True)):
            rec: EntityRecord = data["record"]
            if source not in rec.sources and not any(v.source == source for v in rec.versions):
                continue
            touched.add(name)
            sources = {s: lab for s, lab in rec.sources.items() if s != source}
            versions = tuple(v for v in rec.versions if v.source != source)
            given = {a: tuple(s for s in srcs if s != source) for a, srcs in rec.alias_sources.items()}
            aliases = tuple(a for a in rec.aliases if given.get(a, True))   # untracked aliases stay
            rec = self._with_version_chain(rec.model_copy(update={
                "sources": sources, "versions": versions, "aliases": aliases,
                "alias_sources": {a: srcs for a, srcs in given.items() if srcs}}))
            if aliases != self.entity(name).aliases:    # the forms only a dropped alias gave stop naming it
                self._surface = {k: v for k, v in self._names.items() if v != name}
            self._put_entity(rec.model_copy(update={"refs": len(sources)}))
        for name in touched:
            if name in self.g and not self.g.degree(name) and not self.entity(name).sources \
                    and self.entity(name).origin != "feedback":
                self.remove_entity(name)
        return touched

    # -- reading ---------------------------------------------------------------
    def __contains__(self, name: str) -> bool:
        return self.resolve(name) is not None

    def __len__(self) -> int:
        return self.g.number_of_nodes()

    def entity(self, name: str) -> Optional[EntityRecord]:
        """Returns the entity called `name` (any of its surface forms), or None."""
        canonical = self.resolve(name)
        return self.g.nodes[canonical]["record"] if canonical else None

    def entities(self) -> Iterator[EntityRecord]:
        for _, data in self.g.nodes(data=True):
            yield data["record"]

    def records(self) -> Iterator[RelationRecord]:
        for _, _, data in self.g.edges(data=True):
            yield data["record"]

    def resolve(self, name: str) -> Optional[str]:
        """Returns the canonical name for a surface form (full, short, quoted, alias), or None."""
        name = name.strip()
        return self._names.get(name) or self._names.get(self.names.short_name(name))

    def neighbors(self, name: str, relation: Optional[str] = None, direction: str = "out",
                  user: Optional[User] = None) -> list[RelationRecord]:
        """Returns the relations leaving (``out``), entering (``in``) or touching (``both``) an entity that `user`
        may see (no user: the public; an operator passes `ALL_ACCESS`)."""
        canonical = self.resolve(name)
        if canonical is None:
            return []
        edges: list[RelationRecord] = []
        if direction in ("out", "both"):
            edges += [d["record"] for _, _, d in self.g.out_edges(canonical, data=True)]
        if direction in ("in", "both"):
            edges += [d["record"] for _, _, d in self.g.in_edges(canonical, data=True)]
        return [r for r in edges if (relation is None or r.relation == relation) and r.visible_to(user)]

    def incoming(self, name: str, relation: Optional[str] = None, user: Optional[User] = None) -> list[RelationRecord]:
        """Returns the reverse lookup: relations pointing at `name`."""
        return self.neighbors(name, relation, "in", user)

    def visible(self, name: str, user: Optional[User]) -> bool:
        """Returns whether `user` may know the entity: a readable source names it, or (none recorded) a readable
        relation does; an entity with neither was added by hand and is public."""
        rec: EntityRecord = self.g.nodes[name]["record"]
        user = principal(user)
        if rec.sources or user.all_access:
            return rec.visible_to(user)
        edges = [d["record"] for _, _, d in self.g.in_edges(name, data=True)]
        edges += [d["record"] for _, _, d in self.g.out_edges(name, data=True)]
        return not edges or any(r.visible_to(user) for r in edges)

    def versions(self, name: str, user: Optional[User] = None) -> tuple[Version, ...]:
        """Returns the versions of an entity whose source `user` may read, chained among themselves."""
        rec = self.entity(name)
        if rec is None or not self.visible(rec.name, user):
            return ()
        if principal(user).all_access:
            return rec.versions
        shown = rec.model_copy(update={"versions": tuple(v for v in rec.versions
                                                         if visible([v.source], rec.sources, user))})
        return self._with_version_chain(shown).versions

    def version_relations(self, name: str, user: Optional[User] = None) -> list[Relation]:
        """Returns the version chain `user` may see as ``name(old) --新版本--> name(new)`` relations."""
        rec = self.entity(name)
        if rec is None:
            return []
        out = []
        for v in self.versions(name, user):
            if v.supersedes:
                out.append(Relation(head=f"{rec.name}({v.supersedes})", relation="新版本", tail=f"{rec.name}({v.date})",
                                    source=v.source, description=f"{v.date} 版取代 {v.supersedes} 版"
                                    + ("（现行）" if v.current else ""), origin="rule"))
        return out

    # -- matching ----------------------------------------------------------------
    def _lengths(self) -> dict[str, tuple[int, ...]]:
        if self._matcher is None:
            by_first: dict[str, set[int]] = {}
            for form in list(self._names):   # a snapshot: a writer may add names meanwhile
                by_first.setdefault(form[0], set()).add(len(form))
            self._matcher = {c: tuple(sorted(ls, reverse=True)) for c, ls in by_first.items()}
        return self._matcher

    def find_entities(self, text: str, types: Optional[Iterable[str]] = None, user: Optional[User] = None) -> list[str]:
        """Returns the known entities named in `text`, in order of first mention, longest match first.

        Scans once, left to right: at each position only the name lengths that
        start with that character are tried (a dict of first characters), so
        the cost grows with the text, not with the number of entities.
        """
        return list(dict.fromkeys(name for _, _, name in self.spans(text, types, user)))

    def spans(self, text: str, types: Optional[Iterable[str]] = None,
              user: Optional[User] = None) -> list[tuple[int, int, str]]:
        """Returns (start, end, entity) for each non-overlapping leftmost-longest entity mention in `text`."""
        wanted = set(types) if types is not None else None
        lengths, names = self._lengths(), self._names
        found: list[tuple[int, int, str]] = []
        i = 0
        while i < len(text):
            step = 1
            for n in lengths.get(text[i], ()):
                canonical = names.get(text[i:i + n])
                if canonical is None:
                    continue
                rec = self.g.nodes[canonical]["record"]
                if (wanted is None or rec.type in wanted) and self.visible(canonical, user):
                    found.append((i, i + n, canonical))
                    step = n
                    break
            i += step
        return found

    # -- traversal -------------------------------------------------------------
    def _touching(self, name: str, user: Optional[User]) -> list[tuple[str, RelationRecord]]:
        edges = [(v, d["record"]) for _, v, d in self.g.out_edges(name, data=True)]
        edges += [(u, d["record"]) for u, _, d in self.g.in_edges(name, data=True)]
        edges = [(other, r) for other, r in edges if r.visible_to(user)]
        # strongest facts and best-known neighbours first, so max_nodes keeps what matters
        return sorted(edges, key=lambda e: (-e[1].confidence, -self.g.nodes[e[0]]["record"].refs, e[0], e[1].key()))

    def walk(self, seeds: Iterable[str], max_hops: int = 2, max_nodes: int = 20,
             user: Optional[User] = None) -> Walk:
        """Returns the breadth-first neighbourhood of `seeds` (both edge directions), bounded by hops and nodes."""
        start = [c for c in dict.fromkeys(self.resolve(s) for s in seeds) if c]
        start = [s for s in start if self.visible(s, user)][:max_nodes]
        paths: dict[str, tuple[RelationRecord, ...]] = {s: () for s in start}
        queue = deque((s, 0) for s in start)
        truncated = False
        while queue:
            node, depth = queue.popleft()
            if depth >= max_hops:
                continue
            for other, rec in self._touching(node, user):
                if other in paths:
                    continue
                if len(paths) >= max_nodes:
                    truncated = True
                    break
                paths[other] = paths[node] + (rec,)
                queue.append((other, depth + 1))
        nodes = tuple(paths)
        return Walk(nodes=nodes, relations=self._among(nodes, user),
                    paths={n: tuple(r.to_relation() for r in p) for n, p in paths.items()}, truncated=truncated)

    def _among(self, nodes: Iterable[str], user: Optional[User]) -> tuple[Relation, ...]:
        """Returns the relations between `nodes`, one per (head, relation, tail), the most confident kept."""
        sub = self.g.subgraph(nodes)
        best: dict[tuple[str, str, str], RelationRecord] = {}
        for _, _, d in sub.edges(data=True):
            rec: RelationRecord = d["record"]
            if not rec.visible_to(user):
                continue
            k = (rec.head, rec.relation, rec.tail)
            if k not in best or (rec.confidence, rec.source) > (best[k].confidence, best[k].source):
                best[k] = rec
        return tuple(best[k].to_relation() for k in sorted(best))

    def subgraph(self, entities: Iterable[str], user: Optional[User] = None) -> Walk:
        """Returns the named entities and the relations among them."""
        nodes = tuple(c for c in dict.fromkeys(self.resolve(e) for e in entities) if c and self.visible(c, user))
        return Walk(nodes=nodes, relations=self._among(nodes, user), paths={})

    def shortest_path(self, a: str, b: str, user: Optional[User] = None) -> list[Relation]:
        """Returns the relations on a shortest path between two entities (either direction), [] if none."""
        ca, cb = self.resolve(a), self.resolve(b)
        if not ca or not cb or ca == cb:
            return []
        import networkx as nx

        view = nx.subgraph_view(self.g, filter_edge=lambda u, v, k: self.g.edges[u, v, k]["record"].visible_to(user))
        try:
            nodes = nx.shortest_path(view.to_undirected(as_view=True), ca, cb)
        except nx.NetworkXNoPath:
            return []
        out = []
        for u, v in zip(nodes, nodes[1:]):
            edges = [d["record"] for d in (view.get_edge_data(u, v) or {}).values()]
            edges += [d["record"] for d in (view.get_edge_data(v, u) or {}).values()]
            out.append(max(edges, key=lambda r: r.confidence).to_relation())
        return out
