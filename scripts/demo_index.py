"""Rebuilds the demo index and wiki prebuilt in the package, the classifier's shipped exemplar vectors and jieba's
stored prefix dictionary (lambdarag/skills/store/data/jieba-VERSION.sqlite.xz).

Run after a change to chunking, tokenizing, the wiki compiler, the embedder or the exemplars (the test
tests/test_demo_index.py says when): ``python scripts/demo_index.py``. Vectors of unchanged chunk texts and
exemplars are reused; only new ones are embedded.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the checkout's code, installed or not

from lambdarag.orchestration.demo_index import regenerate  # noqa: E402

if __name__ == "__main__":
    for path in regenerate():
        print(f"wrote {path}")
