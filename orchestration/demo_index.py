"""The demo index and wiki prebuilt in the package: copied into the data home on first use instead of built there.

The package's copy is read-only; the data home's copy is the one questions read and the feedback loop writes
into, so what the demo learns stays in the data home. `python scripts/demo_index.py` rebuilds the prebuilt copy
(and the classifier's shipped exemplar vectors); tests/test_demo_index.py fails when it no longer matches what
a fresh build of the demo documents gives.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from lambdarag.skills.store.files import private_dir, write_replace
from lambdarag.skills.store.index import index_dir, index_lock
from lambdarag.skills.store.vectors import default_embedder, model_fingerprint

from .config import AgentConfig, DEMO_DOCS, corpus_path

PREBUILT = Path(__file__).with_name("demo") / "prebuilt"
ABOUT = "prebuilt.json"       # the model fingerprint and domain the prebuilt index was built with


def prebuilt_about(prebuilt: Path = PREBUILT) -> dict[str, Any]:
    """Returns what the prebuilt index was built with ({model, domain}), or {} when the package has none."""
    path = prebuilt / ABOUT
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def fits(config: AgentConfig, name: str, embedder: Any) -> bool:
    """Returns whether the prebuilt index is the one `config` would build as `name`: the default index over the
    demo documents, local, dense with the embedder it was built with, under its corpus profile."""
    about = prebuilt_about()
    retrieval = config.retrieval
    return bool(about) and name == retrieval.index and retrieval.backend.kind == "local" \
        and retrieval.skills.embedding.enabled and model_fingerprint(embedder or default_embedder()) == about["model"] \
        and retrieval.domain in ("auto", about["domain"]) \
        and corpus_path(config).resolve() == DEMO_DOCS.resolve()


def seed(config: AgentConfig, name: str, embedder: Any, wiki_dir: Path) -> bool:
    """Copies the prebuilt index (and wiki, when `wiki_dir` has none) into the data home if it `fits` and the data
    home has no index `name`; returns whether it did. The manifest is copied last, under the index lock, so a
    concurrent process sees no index or a whole one."""
    if not fits(config, name, embedder):
        return False
    target = index_dir(name)
    private_dir(target.parent)
    with index_lock(target):
        if (target / "manifest.json").is_file():
            return False
        copy_tree(PREBUILT / "index", target, last="manifest.json")
    if not (wiki_dir / "relations.json").is_file():
        copy_tree(PREBUILT / "wiki", wiki_dir, last="relations.json")
    return True


def copy_tree(source: Path, target: Path, last: str) -> None:
    """Copies the files under `source` into `target` (private, as the data home's files are), `last` at the end."""
    files = sorted((p for p in source.rglob("*") if p.is_file()), key=lambda p: (p.name == last, str(p)))
    for path in files:
        dest = target / path.relative_to(source)
        private_dir(dest.parent)
        write_replace(dest, path.read_bytes())


def build_demo(home: Path, reuse: Path = PREBUILT, progress: bool = False) -> Path:
    """Builds the demo index and wiki into the data home `home` as a first `ask` would, and returns the folder
    holding them (index/, wiki/); vectors of chunk texts the `reuse` index holds are taken from it, the others
    embedded."""
    from lambdarag.domains.corpus import read_corpus
    from lambdarag.skills.store.corpus import searchable_text
    from lambdarag.skills.indexing import build_index
    from lambdarag.skills.store.local import LocalBackend
    from lambdarag.skills.wiki import compile_wiki

    with data_home(home):
        corpus = read_corpus(DEMO_DOCS, progress=progress)
        vectors = home / "reused-vectors"
        reused = []
        if (reuse / "index" / "manifest.json").is_file():
            old = LocalBackend.load(reuse / "index")
            by_text = {searchable_text(c): v for c, v in zip(old.chunks(), old.vectors)}
            reused = [(c.id, by_text[searchable_text(c)]) for c in corpus.chunks if searchable_text(c) in by_text]
        if reused:
            private_dir(vectors)
            np.save(vectors / "vectors.npy", np.array([v for _, v in reused], dtype=np.float32))
            (vectors / "ids.txt").write_text("".join(f"{i}\n" for i, _ in reused), encoding="utf-8")
        embedder = default_embedder()
        build_index(corpus, "demo", embedder=embedder, progress=progress, vectors_dir=vectors if reused else None)
        out = home / "demo"
        shutil.rmtree(out / "index" / "vector-cache", ignore_errors=True)
        compile_wiki(corpus, out / "wiki", progress=progress)
        if (out / "wiki").is_symlink():   # a compile publishes a generation; what ships is that one, as the folder
            current = (out / "wiki").resolve()
            (out / "wiki").unlink()
            current.rename(out / "wiki")
        for lock in out.rglob("*.lock"):
            lock.unlink()
        write_replace(out / ABOUT, json.dumps({"model": model_fingerprint(embedder), "domain": corpus.domain},
                                              ensure_ascii=False, indent=1).encode("utf-8"))
        return out


@contextmanager
def data_home(home: Path) -> Iterator[Path]:
    """Sets $LAMBDARAG_HOME to `home` for the `with` block (a build into a scratch home), restoring it after."""
    before = os.environ.get("LAMBDARAG_HOME")
    os.environ["LAMBDARAG_HOME"] = str(home)
    try:
        yield home
    finally:
        if before is None:
            os.environ.pop("LAMBDARAG_HOME", None)
        else:
            os.environ["LAMBDARAG_HOME"] = before


def regenerate(progress: bool = True) -> list[Path]:
    """Rebuilds the prebuilt demo index and wiki in the package from the demo documents, each shipped corpus
    profile's exemplar vectors and fit, and jieba's stored prefix dictionary; returns what it wrote."""
    from lambdarag.skills.exemplars import ExemplarClassifier, shipped_path, write_shipped
    from lambdarag.skills.store.tokenize import ship_dictionary
    from lambdarag.domains import PACKS, profile_named

    with tempfile.TemporaryDirectory() as scratch:
        built = build_demo(Path(scratch), progress=progress)
        shutil.rmtree(PREBUILT, ignore_errors=True)
        shutil.copytree(built, PREBUILT, ignore=shutil.ignore_patterns("*.lock"))
    written = [PREBUILT]
    for name in PACKS:
        profile = profile_named(name)
        if profile.classifier.exemplars_file:
            path = shipped_path(profile.classifier.exemplars_file)
            write_shipped(path, ExemplarClassifier(profile.classifier.exemplars, default_embedder(), shipped=path))
            written.append(path)
    return [*written, ship_dictionary()]


def files_of(folder: Path) -> Iterator[Path]:
    """Yields the files under `folder` by relative path, sorted (what tests compare between two builds)."""
    yield from sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
