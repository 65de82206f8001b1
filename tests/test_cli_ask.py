"""`lambdarag ask` on a built index loads only what its route needs (speed itself is measured by bench/cli.py)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("networkx", "scipy", "faiss", "openai", "pkg_resources")

ASK = """
import json, sys
from lambdarag.orchestration.cli import main
sys.argv = ["lambdarag", "ask", sys.argv[1]]
code = main()
from lambdarag import Reply
def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)
replies = list(subclasses(Reply))
print(json.dumps([len(replies), [c.__name__ for c in replies if c.__pydantic_complete__]]), file=sys.stderr)
print(json.dumps([m for m in {heavy} if m in sys.modules]), file=sys.stderr)
sys.exit(code)
"""


def ask(question: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LAMBDARAG_FEEDBACK": "off"}
    return subprocess.run([sys.executable, "-c", ASK.format(heavy=HEAVY), question], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)


def test_a_fact_question_loads_no_graph_sparse_ann_or_llm_library():
    ask("船长有什么权力？")   # builds the demo index on first use
    out = ask("船长有什么权力？")
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("[fact]"), out.stdout
    assert json.loads(out.stderr.strip().splitlines()[-1]) == []
    assert "Building prefix dict" not in out.stderr


def test_an_offline_question_builds_no_llm_reply_schema():
    out = ask("船长有什么权力？")
    assert out.returncode == 0, out.stderr[-3000:]
    loaded, built = json.loads(out.stderr.strip().splitlines()[-2])
    assert loaded >= 10 and built == []   # every LLM skill's reply type is loaded, none is built


def test_an_offline_answer_lists_no_fallback_says_it_is_offline_and_exits_0():
    out = ask("船长有什么权力？")
    line = next(l for l in out.stdout.splitlines() if "fallbacks:" in l)
    assert line.endswith("; fallbacks: 0; offline answer (no LLM configured)"), line
    assert out.returncode == 0 and "degraded" not in out.stdout


@pytest.mark.slow
def test_the_first_ask_says_it_is_building_the_demo_index_and_shows_progress(tmp_path):
    env = {**os.environ, "LAMBDARAG_FEEDBACK": "off", "LAMBDARAG_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "ask", "船长有什么权力？"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "building index 'demo'" in out.stderr and re.search(r"embed \d+ passages: 100%", out.stderr)
    assert out.stdout.startswith("[fact]")
