"""Named indexes: fingerprinted no-op rebuilds, incremental updates, and the CLI on top."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from lambdarag.orchestration.cli import main
from lambdarag.skills.store.index import index_dir, open_index
from lambdarag.domains.corpus import build_index
from tests.conftest import MARITIME

FILES = ["行政法规/国际海运条例(2019-03-02).md", "行政法规/国际海运条例(2023-07-20).md", "经济法/港口法(2018-12-29).md"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    corpus = tmp_path / "corpus"
    for f in FILES:
        (corpus / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MARITIME / f, corpus / f)
    return corpus


def test_unchanged_rebuild_is_a_no_op_and_changes_are_incremental(home):
    first = build_index(home, "m", dense=False, progress=False)
    manifest = index_dir("m") / "manifest.json"
    stamp = manifest.stat().st_mtime_ns
    again = build_index(home, "m", dense=False, progress=False)
    assert again.version == first.version and manifest.stat().st_mtime_ns == stamp
    (home / FILES[2]).unlink()
    (home / "extra.md").write_text("# 引航规定\n\n## 总则\n\n引航员应当持证上岗。\n", encoding="utf-8")
    updated = build_index(home, "m", dense=False, progress=False)
    assert updated.version == first.version + 2  # one removal, one addition
    assert not any(c.doc_id == FILES[2] for c in updated.chunks())
    assert updated.bm25("引航员 持证", 1)[0][0].doc_id == "extra.md"
    fresh = build_index(home, "fresh", dense=False, progress=False)
    assert updated.fingerprint() == fresh.fingerprint()
    tokens = fresh.tokenizer("无船承运业务 保证金 港口")
    assert np.allclose(updated.lexical.scores(tokens)[np.argsort([c.id for c in updated.chunks()])],
                       fresh.lexical.scores(tokens)[np.argsort([c.id for c in fresh.chunks()])])
    reopened = open_index("m")
    assert reopened.fingerprint() == updated.fingerprint() and len(reopened.chunks()) == len(updated.chunks())


def test_cli_index_and_eval(home, tmp_path, capsys):
    assert main(["index", "--corpus", str(home), "--name", "cli", "--no-dense"]) == 0
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"qid": "1", "query": "无船承运业务保证金多少", "relevant":
                                   ["行政法规/国际海运条例(2019-03-02).md#第八条"]}) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", "--index", "cli", "--queries", str(queries), "--retriever", "bm25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_queries"] == 1 and set(out["metrics"]) == {"recall@5", "mrr@5", "recall@10", "recall@100",
                                                             "mrr@10", "ndcg@10"}
    assert out["metrics"]["recall@10"] == 1.0 and set(out["latency_ms"]) == {"p50", "p95"}


def test_cli_user_errors_exit_2_with_one_line(home, tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"qid": "1", "query": "q", "relevant": ["x"]}\n', encoding="utf-8")
    assert main(["eval", "--index", "missing", "--queries", str(queries), "--retriever", "bm25"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no index named 'missing'" in err and "Traceback" not in err
    assert main(["index", "--corpus", str(tmp_path / "nowhere"), "--name", "x", "--no-dense"]) == 2
    assert "does not exist" in capsys.readouterr().err
    main(["index", "--corpus", str(home), "--name", "cli2", "--no-dense"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": 1}\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", "--index", "cli2", "--queries", str(bad), "--retriever", "dense"]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
