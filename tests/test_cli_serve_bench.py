"""`lambdarag serve` and `lambdarag bench`: they run what they name, and usage errors exit 2 with one line."""
from __future__ import annotations

import json

import httpx
import pytest

from lambdarag.orchestration.cli import benchmarks, main
from tests.conftest import serve_process


def test_bench_lists_the_scripts_of_the_bench_folder():
    assert {"runner", "retrieval", "graph", "routing"} <= set(benchmarks())


def test_bench_runs_a_script_and_prints_its_json(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_BENCH_RESULTS", str(tmp_path))
    assert main(["bench", "runner"]) == 0
    assert "machine" in json.loads((tmp_path / "runner.json").read_text())
    out = json.loads(capsys.readouterr().out)
    assert out["terms"] == 20 and out["runner_us_per_term"] > 0


def test_bench_passes_arguments_through_to_the_script(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "graph", "--no-such-option"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["bench", "nope"], "lambdarag bench: unknown benchmark 'nope'; choose from: "),
    (["serve", "--port", "70000"], "lambdarag serve: --port 70000 is not a TCP port (1-65535)"),
    (["serve", "--config", "/no/such/agent-config.yml"], "lambdarag serve: "),
    (["--config", "/no/such/agent-config.yml", "serve"], "lambdarag serve: "),
    (["serve", "--index", "no_such_index"], "lambdarag serve: no index named 'no_such_index'"),
])
def test_usage_errors_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(message) and "Traceback" not in "\n".join(err)
    if argv[0] == "bench":
        assert err[-1].endswith(", ".join(benchmarks()))


def test_serve_answers_http_on_the_given_port():
    with serve_process() as url:
        info = httpx.get(f"{url}/api/info", timeout=2).json()
        assert info["index"] == "demo"
        page = httpx.get(f"{url}/", timeout=5)
        assert page.status_code == 200 and "LambdaRAG" in page.text
