"""Wiki compile (corpus → ``wiki/entities/*.md`` + ``wiki/relations.json``) and `WikiStore`, its reader.

Compiling is incremental: ``wiki/manifest.json`` records a content hash per
document, so a recompile removes and re-extracts only documents that were
added, changed or removed, re-renders only the pages those touch, and does
nothing at all on an unchanged corpus. Every page line that states a fact ends
with ``[来源: <source>]``; the page's first line is an HTML comment holding the
access labels of those sources, so `WikiStore` can hide lines (and whole
pages) built only from documents a user may not read.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TypedDict, Union

from lambdarag import Context, User, tool
from lambdarag.state import ALL_ACCESS
from .store.records import WikiPage
from lambdarag.errors import ConfigError, InvalidOutput, ProviderError, StoreCorrupt
from lambdarag.lam import parse_reply

from .profile import CorpusProfile
from .store.corpus import Corpus, Document
from .store.files import ORPHAN_AGE, clean_temp, write_atomic, write_text
from .store import generations
from .store.graph import DocFacts, EntityGraph, EntityRecord
from .store.wiki import WikiStore
from .registry import skill

MANIFEST_SCHEMA = 1
LLM_MAX_TOKENS = 1500
"""Tokens an LLM may answer with about one document's facts (a cut reply fails rather than parse half)."""


@dataclass
class CompileReport:
    """What a compile did: documents added/changed/removed, pages written/deleted, LLM failures, and the corpus
    profile (`domain`) that read the facts and writes their names."""

    domain: str = ""
    documents: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    pages_written: int = 0
    pages_deleted: int = 0
    entities: int = 0
    relations: int = 0
    llm_failures: list[str] = field(default_factory=list)
    generation: Optional[Path] = None
    """The folder holding the compiled wiki (a generation, `skills.store.generations`)."""

    @property
    def noop(self) -> bool:
        return not (self.added or self.changed or self.removed)


PAGE_NAME_BYTES = 96
"""Longest readable part of a page's file name in UTF-8 bytes (file systems allow 255; a title of ~90 Chinese
characters is 270)."""


def page_file(name: str) -> str:
    """Returns the page path (relative to the wiki dir) of an entity: the name itself when it is short and safe,
    else its readable start and a hash of the whole name, so a long or unsafe name never breaks a compile and two
    names never share a page."""
    safe = re.sub(r'[\\/:*?"<>|\s]', "_", name)
    short = safe.encode("utf-8")[:PAGE_NAME_BYTES].decode("utf-8", "ignore")
    if short == name and not name.startswith("."):
        return f"entities/{name}.md"
    return f"entities/{short.lstrip('.')}~{hashlib.sha256(name.encode('utf-8')).hexdigest()[:12]}.md"


def doc_hash(doc: Document, with_llm: bool, rules_version: Any) -> str:
    """Returns what decides a document's facts: the extraction rules' version, the LLM's use and its content."""
    h = hashlib.sha256(f"{rules_version}\0{with_llm}\0{doc.title}\0{doc.date}\0{doc.department}\0"
                       f"{doc.security_level}\0{doc.headers}\0{doc.text}".encode())
    return h.hexdigest()


def read_manifest(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"schema": MANIFEST_SCHEMA, "documents": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise StoreCorrupt(f"{path}: invalid JSON at line {e.lineno}, column {e.colno} ({e.msg}); "
                           f"delete it to recompile everything") from None
    if data.get("schema") != MANIFEST_SCHEMA or not isinstance(data.get("documents"), dict):
        raise StoreCorrupt(f"{path}: not a schema-{MANIFEST_SCHEMA} wiki manifest; delete it to recompile everything")
    return data


def apply_facts(graph: EntityGraph, facts: DocFacts) -> set[str]:
    """Adds one document's facts to the graph; returns the entities touched."""
    touched = set()
    for rec in facts.entities:
        graph.add_entity(rec)
        touched.add(rec.name)
    for rel in facts.relations:
        graph.add_relation(rel)
        touched.update((rel.head, rel.tail))
    return touched


def compile_wiki(corpus: Corpus, wiki_dir: Union[str, Path], *, llm: Any = None,
                 progress: bool = True, base: Optional[Path] = None,
                 publish: bool = True) -> CompileReport:
    """Returns a report after bringing ``wiki_dir`` up to date with `corpus` (read by its profile, as `lambdarag
    index` passes the one it indexed; a path and a pack name are lambdarag.domains.compile_wiki's).

    The corpus profile (`corpus.profile`, see skills.profile) extracts each document's
    facts. Rules always run; with an `llm`, its validated relations are merged in
    (origin ``llm``). An LLM failure on a document keeps that document's rule
    output, is listed in the report and marked in the manifest, so the next
    compile with an LLM extracts that document again.

    A compile that changes anything writes a new generation beside `base` (default:
    the published one) and, with `publish`, switches ``wiki_dir`` to it
    (`skills.store.generations`); `report.generation` is the folder holding the
    result. `lambdarag index` publishes only after the index manifest names it.
    """
    wiki = Path(wiki_dir)
    base = base if base is not None else generations.current(wiki)
    for folder in (base, base / "entities", base / "analyses") if base is not None else ():
        if folder.is_dir():   # temp files of a compile or write-back killed mid-write
            clean_temp(folder, older_than=ORPHAN_AGE)
    profile = corpus.profile
    if profile is None:
        raise ConfigError(f"compile_wiki: corpus {corpus.root} was read by no profile; read it with "
                          "skills.reading.read_corpus or lambdarag.domains.read_corpus")
    manifest = read_manifest((base or wiki) / "manifest.json")
    known: dict[str, dict] = manifest["documents"]
    docs = {d.source: d for d in corpus.documents}
    hashes = {s: doc_hash(d, llm is not None, profile.graph.rules_version) for s, d in docs.items()}
    report = CompileReport(domain=corpus.domain, documents=len(docs))
    report.added = sorted(s for s in docs if s not in known)
    report.changed = sorted(s for s in docs if s in known and (
        known[s]["hash"] != hashes[s] or (llm is not None and known[s].get("llm_failed"))))
    report.removed = sorted(s for s in known if s not in docs)
    graph = EntityGraph.load((base or wiki) / "relations.json", missing_ok=True, names=profile.names)
    written = {rec.name: rec.wiki_page for rec in graph.entities() if rec.wiki_page}   # where each page is now
    if report.noop and base is not None and (base / "relations.json").exists():
        report.entities, report.relations, report.generation = len(graph), graph.g.number_of_edges(), base
        if publish:
            generations.sweep(wiki, keep=(base,))
        return report
    target = generations.stage(wiki, base)
    touched: set[str] = set()
    for source in report.changed + report.removed:
        touched |= graph.remove_source(source)
        known.pop(source, None)
    todo = report.added + report.changed
    if progress:
        from tqdm import tqdm

        todo = tqdm(todo, desc="compile wiki", unit="doc")
    for source in todo:
        doc = docs[source]
        facts = profile.graph.extract_document(doc)
        touched |= apply_facts(graph, facts)
        known[source] = {"hash": hashes[source], "entity": facts.entity}
        if llm is not None:
            try:
                touched |= apply_facts(graph, llm_facts(doc, llm, profile))
            except ProviderError as e:
                report.llm_failures.append(f"{source}: {e}")
                known[source]["llm_failed"] = str(e)[:200]
    pages = set(touched)
    for name in touched:
        if name in graph.g:
            pages.update(graph.g.predecessors(name))
            pages.update(graph.g.successors(name))
    for name in sorted(pages):
        path = target / page_file(name)
        old = target / written.get(name, page_file(name))   # a page an earlier naming put elsewhere goes too
        if name not in graph.g:
            if path.exists() or old.exists():
                path.unlink(missing_ok=True)
                old.unlink(missing_ok=True)
                report.pages_deleted += 1
            continue
        rec = graph.entity(name)
        if rec.wiki_page != page_file(name):
            old.unlink(missing_ok=True)
            graph.add_entity(rec.model_copy(update={"wiki_page": page_file(name)}))
        write_text(path, render_page(graph, name, profile))
        report.pages_written += 1
    graph.save(target / "relations.json")
    write_atomic(target / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8"))
    report.entities, report.relations, report.generation = len(graph), graph.g.number_of_edges(), target
    if publish:
        generations.publish(wiki, target)
        generations.sweep(wiki, keep=(base, target))
    return report


def llm_facts(doc: Document, llm: Any, profile: CorpusProfile) -> DocFacts:
    """Returns the facts the LLM reads in `doc` as the profile asks (`GraphRules.llm_reading`).

    Raises `ProviderError` (`InvalidOutput` included) when the profile has no LLM reading or the call or its reply
    fails; the caller keeps the rules' output.
    """
    reading = profile.graph.llm_reading
    if reading is None:
        raise ProviderError("this corpus profile has no LLM extraction")
    schema = reading.reply.model_json_schema()
    reply = llm.complete([{"role": "user", "content": reading.prompt(doc)}], schema=schema, max_tokens=LLM_MAX_TOKENS)
    if reply.finish_reason == "length":
        raise InvalidOutput(f"LLM reply was cut at max_tokens={LLM_MAX_TOKENS} (finish_reason: length)")
    return reading.facts(doc, parse_reply(reply.text, reading.reply))


def render_page(graph: EntityGraph, name: str, profile: Optional[CorpusProfile] = None) -> str:
    """Returns the markdown page of one entity: what it is (its type as the profile's `entity_type_names` spell
    it, else as stored), versions, dates, its relations (a section for each of the profile's `page_sections`, the
    rest together), sources.

    The first line is an HTML comment holding the entity's attesting sources,
    every source's access labels, and per body line the sources it was
    derived from (`WikiStore` shows a line only if all of them are readable).
    """
    rec: EntityRecord = graph.g.nodes[name]["record"]
    type_names = profile.graph.type_names if profile is not None else {}
    labels = {s: lab.model_dump() for s, lab in sorted(rec.sources.items())}
    # the page holds every line, each with its sources; the reader's rights filter it when it is read
    out_edges = sorted(graph.neighbors(name, direction="out", user=ALL_ACCESS),
                       key=lambda r: (r.relation, r.tail, r.source))
    in_edges = sorted(graph.neighbors(name, direction="in", user=ALL_ACCESS), key=lambda r: (r.relation, r.head, r.source))
    for r in out_edges + in_edges:
        labels.setdefault(r.source, r.label().model_dump())
    body: list[tuple[str, tuple[str, ...]]] = [(f"# {name}", ()), ("", ()),
                                              (f"类型：{type_names.get(rec.type, rec.type)}", ())]
    if rec.aliases:
        body.append((f"别名：{'、'.join(rec.aliases)}", tuple(sorted(rec.sources))))
    if rec.versions:
        body += [("", ()), ("## 版本", ())]
        by_date = {v.date: v.source for v in rec.versions}
        for v in reversed(rec.versions):
            mark = "（现行）" if v.current else ""
            prev = f"，取代 {v.supersedes} 版" if v.supersedes else ""
            # the newest version's mark and the superseded date come from the other versions' sources too
            also = tuple(x.source for x in rec.versions) if v.current else (by_date.get(v.supersedes, v.source),)
            body.append((f"- {v.date or '日期不详'}{mark}{prev} [来源: {v.source}]", (v.source, *also)))
        newest = rec.versions[-1]   # its header lines repeat the history of the older versions
        if newest.events:
            body += [("", ()), ("## 制定与修订", ())]
            body += [(f"- {e.date} {e.note} [来源: {newest.source}]", (newest.source,)) for e in newest.events]
    sections = [(title, [r for r in (in_edges if end == "head" else out_edges) if r.relation == relation], end)
                for title, relation, end in (profile.graph.page_sections if profile is not None else ())]
    shown = {id(r) for _, rs, _ in sections for r in rs}
    other = [r for r in out_edges + in_edges if id(r) not in shown]
    sections.append(("其他关系", other, "both"))
    for title, rels, end in sections:
        if not rels:
            continue
        body += [("", ()), (f"## {title}", ())]
        for r in rels:
            if end == "both":
                body.append((f"- [[{r.head}]] --{r.relation}--> [[{r.tail}]]：{r.description} "
                             f"[来源: {r.source}#{r.section}]", (r.source,)))
            else:
                body.append((f"- [[{getattr(r, end)}]] {r.section}：{r.description} [来源: {r.source}#{r.section}]",
                             (r.source,)))
    body += [("", ()), ("## 来源", ())] + [(f"- {s} [来源: {s}]", (s,)) for s in sorted(rec.sources)]
    head = {"entity": name, "type": rec.type, "aliases": list(rec.aliases), "attested": sorted(rec.sources),
            "sources": labels, "lines": {str(i): list(dict.fromkeys(src)) for i, (_, src) in enumerate(body) if src}}
    lines = [f"<!-- wiki {json.dumps(head, ensure_ascii=False)} -->"] + [text for text, _ in body]
    return "\n".join(lines) + "\n"


class PagesOut(TypedDict):
    """The write of `wiki_page_read`."""

    wiki_pages: tuple[WikiPage, ...]


@skill
@tool(effect="io")
def wiki_page_read(query: str, user: User, ctx: Context, entities: tuple[str, ...] = (), *, k: int = 3) -> PagesOut:
    """Writes the wiki pages of the state's entities, then the best BM25 pages, up to ``k``."""
    wiki: WikiStore = ctx.resource("wiki")
    pages: dict[str, WikiPage] = {}
    for name in entities:
        page = wiki.read(name, user)
        if page is not None and len(pages) < k:
            pages.setdefault(page.entity, page)
    for page in wiki.search(query, k, user):
        if len(pages) >= k:
            break
        pages.setdefault(page.entity, page)
    return {"wiki_pages": tuple(pages.values())}
