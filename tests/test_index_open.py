"""Opening a saved index: constant work (no chunk parsed, vectors mapped), the IVF index saved and reused, older
indexes migrated, changed files refused."""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from lambdarag.errors import StoreCorrupt
from lambdarag.skills.store import chunk_store, local, vectors
from lambdarag.skills.store.corpus import Chunk, Document
from lambdarag.skills.store.index import index_dir, open_index
from lambdarag.skills.store.local import LocalBackend
from lambdarag.skills.store.tokenize import Tokenizer

WORDS = ["harbour", "pilot", "cargo", "berth", "tug", "anchor", "crane", "quay", "manifest", "ballast"]


def corpus(n: int, dim: int = 16, seed: int = 0) -> tuple[list[Document], list[Chunk], np.ndarray]:
    """Returns n one-chunk documents of random words, with random unit vectors (float16 values, as an index saves)."""
    rng = np.random.default_rng(seed)
    docs, chunks = [], []
    for i in range(n):
        text = " ".join(rng.choice(WORDS, 6))
        docs.append(Document(id=f"d{i}", source=f"d{i}.md", title=f"doc {i}", text=text, family="odd" if i % 2 else "even",
                             meta={"digest": f"x{i}"}))
        chunks.append(Chunk(id=f"d{i}#1", doc_id=f"d{i}", text=text, source=f"d{i}.md", title=f"doc {i}",
                            family="odd" if i % 2 else "even"))
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return docs, chunks, (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float16).astype(np.float32)


def built(n: int, **kw) -> LocalBackend:
    docs, chunks, vecs = corpus(n)
    backend = LocalBackend(Tokenizer(), model="test-model", **kw)
    backend.add(docs, chunks, vecs)
    return backend


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def hits(found) -> list[tuple[str, float]]:
    return [(c.id, round(s, 5)) for c, s in found]


def test_opening_reads_no_chunk_and_maps_the_stored_vectors(home, monkeypatch):
    memory = built(500)
    memory.save(index_dir("kb"))
    made = []

    class Counted(Chunk):
        def __init__(self, *a, **kw):
            made.append(1)
            super().__init__(*a, **kw)

    monkeypatch.setattr(chunk_store, "Chunk", Counted)
    monkeypatch.setattr(local, "Chunk", Counted)
    opened = open_index("kb")
    assert made == [] and len(opened.chunks()) == 500
    assert isinstance(opened.vectors, np.memmap) and opened.vectors.dtype == np.float16
    assert hits(opened.bm25("pilot cargo", 5)) == hits(memory.bm25("pilot cargo", 5))
    assert len(made) == 5          # the hits, read per hit
    assert hits(opened.dense(memory.vectors[7], 5)) == hits(memory.dense(memory.vectors[7], 5))
    assert hits(opened.bm25("tug", 50, filters={"family": "odd"})) == hits(memory.bm25("tug", 50, filters={"family": "odd"}))
    assert asdict(opened.chunk("d42#1")) == asdict(memory.chunk("d42#1")) and opened.fingerprint() == memory.fingerprint()


def test_exact_search_over_stored_float16_scores_as_over_a_float32_copy():
    stored = np.random.default_rng(1).normal(size=(1000, 24)).astype(np.float16)
    query = np.random.default_rng(2).normal(size=24).astype(np.float32)
    mapped = vectors.DenseIndex(stored).search(query, 20)
    whole = vectors.DenseIndex(stored.astype(np.float32)).search(query, 20)
    assert mapped[0].tolist() == whole[0].tolist() and mapped[1].tolist() == whole[1].tolist()


def test_the_ivf_index_is_built_at_save_and_read_back_not_rebuilt(home, monkeypatch):
    memory = built(400, ann_threshold=100)
    memory.save(index_dir("kb"))
    manifest = json.loads((index_dir("kb") / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"]["ann"]["name"].endswith(".faiss")

    def no_build(_):
        raise AssertionError("the IVF index was built again at open")

    monkeypatch.setattr(vectors, "build_ann", no_build)
    opened = open_index("kb")
    query = np.asarray(opened.vectors[3], dtype=np.float32)
    assert opened.dense(query, 1)[0][0].id == "d3#1"
    allowed_odd = opened.dense(query, 5, filters={"family": "odd"})
    assert allowed_odd and all(c.family == "odd" for c, _ in allowed_odd)


def write_format_2(directory: Path, backend: LocalBackend) -> None:
    """Writes `backend` as the previous version saved indexes (format 2: JSON lines, npz counts, SHA-256 each)."""
    directory.mkdir(parents=True)
    chunks = "".join(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in backend.chunks()).encode("utf-8")
    vocab, counts = backend.lexical.dump()
    buf = io.BytesIO()
    np.save(buf, backend.vectors.astype(np.float16))
    files = {}
    for part, suffix, data in (("chunks", "jsonl", chunks), ("bm25", "json", vocab), ("counts", "npz", counts),
                               ("vectors", "npy", buf.getvalue())):
        (directory / f"{part}.1.{suffix}").write_bytes(data)
        files[part] = {"name": f"{part}.1.{suffix}", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"format": 2, "generation": 1, "files": files, "fingerprint": backend.fingerprint(), "version": 1,
                "model": backend.model, "tokenizer": backend.tokenizer.config(), "ann_threshold": 200_000,
                "domain": None, "wiki": None, "documents": dict(backend.documents()), "chunks": len(backend.chunks())}
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_an_index_of_the_previous_format_is_migrated_at_open_with_the_same_results(home, capsys):
    memory = built(300)
    write_format_2(index_dir("old"), memory)
    opened = open_index("old")
    assert "migrated to the current index format" in capsys.readouterr().err
    assert json.loads((index_dir("old") / "manifest.json").read_text())["format"] == local.FORMAT
    assert isinstance(opened.vectors, np.memmap)
    assert hits(opened.bm25("berth crane", 10)) == hits(memory.bm25("berth crane", 10))
    assert hits(opened.dense(memory.vectors[5], 10)) == hits(memory.dense(memory.vectors[5], 10))


def test_an_unwritable_index_of_the_previous_format_opens_whole_and_says_how_to_rebuild(home, capsys, monkeypatch):
    memory = built(50)
    write_format_2(index_dir("old"), memory)

    def read_only(self, directory):
        raise OSError(30, "Read-only file system", str(directory))

    monkeypatch.setattr(LocalBackend, "save", read_only)     # as on a read-only mount (root ignores chmod)
    opened = open_index("old")
    assert json.loads((index_dir("old") / "manifest.json").read_text())["format"] == 2
    assert "lambdarag index --corpus PATH --name old" in capsys.readouterr().err
    assert hits(opened.bm25("tug", 5)) == hits(memory.bm25("tug", 5))


@pytest.mark.parametrize("damage", ["truncate", "rewrite head", "remove"])
def test_a_changed_or_missing_file_is_refused_naming_it(home, damage):
    built(200).save(index_dir("kb"))
    manifest = json.loads((index_dir("kb") / "manifest.json").read_text(encoding="utf-8"))
    path = index_dir("kb") / manifest["files"]["vectors"]["name"]
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:-64])
    elif damage == "rewrite head":
        path.write_bytes(data[:200] + bytes(64) + data[264:])
    else:
        path.unlink()
    with pytest.raises(StoreCorrupt, match=r"index 'kb' is damaged: .*vectors.*lambdarag index --corpus PATH --name kb"):
        open_index("kb")


def test_a_change_after_opening_reads_the_index_whole_and_saves_a_new_generation(home):
    built(100).save(index_dir("kb"))
    opened = open_index("kb")
    docs, chunks, vecs = corpus(3, seed=9)
    extra = [Document(id=f"n{i}", source=f"n{i}.md", title="new", text=d.text, meta={"digest": "n"})
             for i, d in enumerate(docs)]
    opened.add(extra, [Chunk(**{**asdict(c), "id": f"n{i}#1", "doc_id": f"n{i}"}) for i, c in enumerate(chunks)], vecs)
    opened.remove(["d0"])
    opened.save(index_dir("kb"))
    again = open_index("kb")
    assert len(again.chunks()) == 102 and "d0" not in again.documents() and again.chunk("n2#1").title == "doc 2"
