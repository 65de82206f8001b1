"""Writes a --vectors directory for the laws-folder index from the precomputed STARD article vectors.

The STARD corpus is built from the same statute files (latest version of each law, one record per
article), so a laws-folder chunk with the same source file and article label (第X条) takes that
record's vector; a chunk of an older version whose article text is word for word a STARD record's text
takes that record's vector; every other chunk (changed articles of older versions, preambles, tables)
is embedded by `lambdarag index`, or, with --zero-rest (when the machine is too busy to embed them), gets a
zero vector: dense retrieval then never returns it, and meta.json says how many chunks that is.
The STARD passage text is "<full title>第X条\\n<text>", ours "<title>\\n第X条 <text>": same words,
slightly different framing, recorded in the routing result.
  python bench/laws_vectors.py [--zero-rest]    # → <data home>/laws/stard-vectors (lambdarag where)
  lambdarag index --corpus ../shared/data/laws --name laws --vectors <data home>/laws/stard-vectors
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.store.index import knowledge_root

ROOT = Path(__file__).resolve().parents[1]
STARD = ROOT.parent / "shared" / "data" / "stard"
LAWS = ROOT.parent / "shared" / "data" / "laws"


LABEL = re.compile(r"^第[一二三四五六七八九十百千零]+条(?:之[一二三四五六七八九十]+)?\s*")


def _bare(text: str) -> str:
    return re.sub(r"\s", "", text)


def main(out: Path, zero_rest: bool = False) -> dict:
    """Writes ids.txt, vectors.f16.npy and meta.json for the laws chunks STARD has, and returns the counts."""
    rows, texts = {}, {}
    with open(STARD / "corpus.jsonl", encoding="utf-8") as f:
        for n, line in enumerate(f):
            r = json.loads(line)
            rows[(r["source"], r["article"])] = n
            texts.setdefault(_bare(r["text"]), n)
    vectors = np.load(STARD / "embeddings" / "vectors.f16.npy", mmap_mode="r")
    chunks = read_corpus(LAWS, progress=False).chunks
    pairs = [(c.id, rows.get((c.source, c.section), texts.get(_bare(LABEL.sub("", c.text))))) for c in chunks]
    if not zero_rest:
        pairs = [(cid, n) for cid, n in pairs if n is not None]
    rows_of = [n if n is not None else 0 for _, n in pairs]
    matrix = np.asarray(vectors[rows_of], dtype=np.float16)
    matrix[[i for i, (_, n) in enumerate(pairs) if n is None]] = 0
    out.mkdir(parents=True, exist_ok=True)
    (out / "ids.txt").write_text("".join(f"{cid}\n" for cid, _ in pairs), encoding="utf-8")
    np.save(out / "vectors.f16.npy", matrix)
    meta = json.loads((STARD / "embeddings" / "meta.json").read_text(encoding="utf-8"))
    facts = {"model": meta["model"], "from": "stard/embeddings, matched by (source file, article label), else by identical article text",
             "chunks": len(chunks), "imported": sum(n is not None for _, n in pairs),
             "zero_vectors": sum(n is None for _, n in pairs)}
    (out / "meta.json").write_text(json.dumps(facts, ensure_ascii=False, indent=1), encoding="utf-8")
    return facts


if __name__ == "__main__":
    zero = "--zero-rest" in sys.argv[1:]
    sys.stdout.write(json.dumps(main(knowledge_root() / "laws" / "stard-vectors", zero), ensure_ascii=False) + "\n")
