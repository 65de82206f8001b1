"""bench/feedback.py's CLI helper exits naming the command that failed (a bench never reads a failed run's output)."""
import json

import pytest

from bench.feedback import cli_json


def test_cli_json_exits_naming_the_command_that_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"qid": "a", "query": "x", "relevant": ["d"]}) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="lambdarag eval --index missing"):
        cli_json("eval", "--index", "missing", "--queries", str(queries), "--json")
