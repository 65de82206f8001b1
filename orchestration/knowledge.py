"""A knowledge base: a built index with its entity graph, wiki and corpus profile, opened once per process."""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from lambdarag.errors import StoreCorrupt
from lambdarag.domains import index_profile, profile_named
from lambdarag.domains.corpus import build_backend, compile_wiki
from lambdarag.skills.profile import CorpusProfile
from lambdarag.skills.store.graph import EntityGraph
from lambdarag.skills.store import generations
from lambdarag.skills.store.corpus import Corpus
from lambdarag.skills.store.index import (backend_exists, built_indexes, commit_wiki, knowledge_root, open_backend,
                                          recorded_wiki)
from lambdarag.skills.store.wiki import WikiStore, learned_change
from lambdarag.skills.store.home import cache_dir
from lambdarag.skills.store.tokenize import cache_dictionary_in

from .config import AgentConfig, corpus_path
from .demo_index import seed
from .folders import wiki_dir_for


@dataclass
class KnowledgeBase:
    """Returns the resources the skills look up: `index`, `profile`, `graph`, `wiki` (graph/wiki may be absent)."""

    name: str
    index: Any
    graph: Optional[EntityGraph]
    wiki: Optional[WikiStore]
    wiki_dir: Optional[Path]
    notes: tuple[str, ...] = ()
    profile: Optional[CorpusProfile] = None
    learned: int = 0
    """The last change of the feedback store the graph and pages held when they were read (`skills.store.wiki`)."""
    replica: Any = field(default=None, repr=False)
    """What the feedback loop replays onto the graph and wiki (`orchestration.feedback.replica`), made on first use."""

    def resources(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "profile": self.profile or index_profile(self.index)}
        if self.graph is not None:
            out["graph"] = self.graph
        if self.wiki is not None:
            out["wiki"] = self.wiki
        return out

    def limit(self, config: AgentConfig) -> AgentConfig:
        """Returns `config` with the graph and wiki switched off when this knowledge base has none compiled."""
        skills = config.retrieval.skills
        off = {name: getattr(skills, name).model_copy(update={"enabled": False})
               for name, present in (("graph", self.graph), ("wiki", self.wiki)) if present is None}
        if not off:
            return config
        retrieval = config.retrieval.model_copy(update={"skills": skills.model_copy(update=off)})
        return config.model_copy(update={"retrieval": retrieval})

    def version(self) -> str:
        """Returns a key that changes when the index or the graph changes (for caches)."""
        graph_mtime = (self.wiki_dir / "relations.json").stat().st_mtime_ns \
            if self.wiki_dir and (self.wiki_dir / "relations.json").is_file() else 0
        return f"{self.index.fingerprint()}:{graph_mtime}"


_LOCK = threading.Lock()
_OPEN: dict[tuple, KnowledgeBase] = {}


def index_wiki(name: str) -> Path:
    """Returns the path of the wiki `lambdarag index` compiles for index `name` (a link to its generation)."""
    return knowledge_root() / name / "wiki"


def pinned_wiki(recorded: Optional[str], wiki_dir: Path) -> Path:
    """Returns the folder a knowledge base reads its graph and pages from: the wiki generation its index manifest
    names (`recorded`; so index, graph and pages are of one state), else the one `wiki_dir` is switched to now."""
    if recorded and (wiki_dir.parent / recorded).is_dir():
        return wiki_dir.parent / recorded
    return generations.current(wiki_dir) or wiki_dir


def build_with_wiki(settings: dict, corpus: Corpus, name: str, *, wiki: bool = True, **options: Any) -> tuple:
    """Returns (index, wiki compile report or None) after building index `name` and its wiki as one generation.

    The wiki is compiled into a new generation first, unpublished; the index
    manifest naming it is then written (the one step that switches both); only
    then does ``<name>/wiki`` point at it. A kill at any moment leaves the old
    index with the old wiki or the new with the new. Milvus keeps its manifest
    in the collection, so there the two switch one after the other.
    """
    folder = index_wiki(name)
    base = pinned_wiki(recorded_wiki(name), folder) if folder.exists() else None
    report = compile_wiki(corpus, folder, base=base, progress=options.get("progress", True), publish=False) \
        if wiki else None
    index = build_backend(settings, corpus, name, wiki=report.generation.name if report else None, **options)
    if report is not None:
        generations.publish(folder, report.generation)
        generations.sweep(folder, keep=(base, report.generation))
    return index, report


def compile_index_wiki(corpus: Any, folder: Path, **options: Any) -> Any:
    """Returns the report of compiling the wiki at `folder`; when `folder` is a built index's own wiki, the new
    generation is recorded in that index's manifest before it is published (`build_with_wiki`)."""
    owner = next((n for n in built_indexes() if index_wiki(n).absolute() == Path(folder).absolute()), None)
    if owner is None:
        return compile_wiki(corpus, folder, **options)
    base = pinned_wiki(recorded_wiki(owner), Path(folder))
    report = compile_wiki(corpus, folder, base=base, publish=False, **options)
    if report.generation != base:
        commit_wiki(owner, report.generation.name)
        generations.publish(Path(folder), report.generation)
        generations.sweep(Path(folder), keep=(base, report.generation))
    return report


def open_knowledge(config: AgentConfig, name: Optional[str] = None, *, embedder: Any = None,
                   progress: bool = False) -> KnowledgeBase:
    """Returns the knowledge base `name` (default: the configured index), building the default one on first use.

    With `progress`, building says so on stderr and shows progress bars.
    """
    name = name or config.retrieval.index
    dense = config.retrieval.skills.embedding.enabled
    backend = config.retrieval.backend.model_dump()
    key = (name, str(knowledge_root()), dense, backend["kind"], backend["uri"])
    with _LOCK:
        if key in _OPEN:
            return _OPEN[key]
        notes: list[str] = []
        cache_dictionary_in(cache_dir("jieba"))
        default = name == config.retrieval.index
        corpus = corpus_path(config)
        wiki_dir = wiki_dir_for(config, name)
        index = None
        if default and not seed(config, name, embedder, wiki_dir) and not backend_exists(backend, name):
            notes.append(f"built index {name!r} from {corpus} on first use")
        else:
            try:
                index = open_backend(backend, name)
            except StoreCorrupt as e:
                if not default:
                    raise
                notes.append(f"rebuilt index {name!r} from {corpus}: {e}")
        if index is None:
            if progress:
                print(f"building index {name!r} from {corpus} on first use "
                      f"(once; about a minute on 2 cores)…", file=sys.stderr)
            index = build_backend(backend, corpus, name, embedder=embedder, dense=dense,
                                  progress=progress, domain=config.retrieval.domain)
        if name == config.retrieval.index and not (wiki_dir / "relations.json").is_file():
            compile_wiki(corpus, wiki_dir, progress=progress, domain=config.retrieval.domain)
        wiki_dir = pinned_wiki(getattr(index, "wiki", None), wiki_dir)
        profile = index_profile(index) if config.retrieval.domain == "auto" else profile_named(config.retrieval.domain)
        graph = wiki = None
        learned = learned_change(wiki_dir)     # read before the graph: replaying a change it already holds is a no-op
        if (wiki_dir / "relations.json").is_file():   # names are looked up in the forms the profile writes them
            graph = EntityGraph.load(wiki_dir / "relations.json", names=profile.names)
            wiki = WikiStore(wiki_dir, names=profile.names)
        else:
            notes.append(f"no compiled wiki for index {name!r} (lambdarag compile-wiki); graph and wiki skills fall back")
        kb = KnowledgeBase(name, index, graph, wiki, wiki_dir if graph is not None else None, tuple(notes), profile,
                           learned)
        _OPEN[key] = kb
        return kb


def warm_up(index: Any, embedder: Any) -> None:
    """Loads jieba's dictionaries and the embedding model now, so that a server's first question's step
    latencies measure the steps rather than their lazy initialisation (a one-shot `ask` skips it)."""
    from lambdarag.skills.sentences import keywords
    from lambdarag.skills.store.tokenize import keyword_extractor

    keyword_extractor().extract_tags("预热", allowPOS=("n",))
    keywords("预热")
    index.tokenizer("预热")
    if embedder is not None and getattr(index, "has_dense", False):
        embedder.embed(["预热"], kind="query")


def forget(name: Optional[str] = None) -> None:
    """Drops opened knowledge bases (all, or one) so the next search reopens them from disk."""
    with _LOCK:
        for key in [k for k in _OPEN if name is None or k[0] == name]:
            del _OPEN[key]
