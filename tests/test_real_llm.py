"""`ask` against a real small model behind a plain-text-only endpoint (tests/local_model_server.py): what the
framework guarantees whatever the model writes — prompts in the question's language, the JSON rungs asked once,
citations that resolve to retrieved chunks, refusals and markers in the answer's language, and an exit code that
says whether an LLM step failed. Run with ``python -m pytest -q -m llm`` (docs/llm-endpoints.md)."""
from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
import yaml

from lambdarag.orchestration.cli import main
from tests.test_llm_dialects import QUESTIONS, homes  # noqa: F401  (the fixture: a small English guide, the statutes)
from tests.test_search import BASE

pytestmark = pytest.mark.llm
CJK = re.compile(r"[\u4e00-\u9fff]")
MARKER = re.compile(r"\[(?:来源|source): ([^\]]+)\]")
CHINESE_QUESTION = "船长对船舶的管理负有什么职责？"


def ask(homes, monkeypatch, url: str, index: str, question: str) -> tuple[int, dict]:
    """Returns the exit code and the JSON result of ``lambdarag ask --json`` on `index` with the model at `url`,
    with time enough for a 135M model on a shared CPU (its limits are config, not what is tested)."""
    monkeypatch.setenv("LAMBDARAG_HOME", str(homes / "data"))
    data = json.loads(json.dumps(BASE))
    data["retrieval"].update(index=index)
    data["retrieval"]["skills"]["embedding"]["enabled"] = index != "laws"
    data["llm"] = {"baseUrl": url, "model": "smollm2-135m-instruct", "timeout": 300}
    data["limits"] = {"timeoutSeconds": 1800}
    path = homes / f"real-{index}.yml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--config", str(path), "ask", "--json", question])
    return code, json.loads(out.getvalue())


def answered_consistently(code: int, r: dict, refusal: str) -> None:
    """Asserts what holds whatever the model wrote: the exit code says `degraded`, a degraded answer names each
    failed step and why, and the answer either refuses in its language or cites only chunks that were retrieved."""
    assert code == (3 if r["degraded"] else 0), (code, r["degraded"])
    assert not r["degraded"] or all(f["term"] and f["reason"] for f in r["fallbacks"]), r["fallbacks"]
    retrieved = {h["chunk_id"] for h in r["hits"]}
    if r["answer"].startswith(refusal):
        assert not r["citations"], r["answer"]
        return
    assert r["citations"] and {c["chunk_id"] for c in r["citations"]} <= retrieved, (r["citations"], retrieved)
    assert set(MARKER.findall(r["answer"])) <= {c["chunk_id"] for c in r["citations"]}, r["answer"]


def answer_prompts(real_model, cue: str) -> list[list[dict]]:
    """Returns the messages of every answer request logged so far whose user message holds `cue`."""
    if real_model.log is None:
        pytest.skip("the prompts sent are logged only by tests/local_model_server.py (LAMBDARAG_TEST_LLM_URL is set)")
    return [r["messages"] for r in real_model.requests() if cue in r["messages"][-1]["content"]]


def test_an_english_question_gets_english_prompts_and_an_english_answer(homes, monkeypatch, real_model):
    seen = len(real_model.requests())
    code, r = ask(homes, monkeypatch, real_model.url, "guide", QUESTIONS[1])
    answered_consistently(code, r, "The documents do not answer this question")
    assert "来源" not in r["answer"] and not CJK.search(r["answer"]), r["answer"]
    sent = [q["messages"] for q in real_model.requests()[seen:]]
    assert sent and all(m[0]["role"] == "system" and m[-1]["role"] == "user" for m in sent)
    assert not any(CJK.search(part["content"]) for m in sent for part in m)
    asked = answer_prompts(real_model, "[Question]\n" + QUESTIONS[1])
    assert asked and asked[0][0]["content"].startswith("You answer questions from a knowledge base, in English.")
    assert "[source: apt.md#Pinning]" in asked[0][-1]["content"]


def test_a_chinese_question_gets_chinese_prompts_and_a_chinese_answer(homes, monkeypatch, real_model):
    code, r = ask(homes, monkeypatch, real_model.url, "laws", CHINESE_QUESTION)
    answered_consistently(code, r, "根据现有资料无法回答该问题")
    assert "[source:" not in r["answer"], r["answer"]
    asked = answer_prompts(real_model, "【问题】\n" + CHINESE_QUESTION)
    assert asked and CJK.search(asked[0][0]["content"]) and "依据法律法规" in asked[0][0]["content"]
    assert re.search(r"\[来源: [^\]]+\.md#第[^\]]+条\]", asked[0][-1]["content"])


def test_the_plain_text_endpoint_is_asked_each_json_rung_once_then_in_plain_text(homes, monkeypatch, real_model):
    ask(homes, monkeypatch, real_model.url, "guide", QUESTIONS[0])
    if real_model.log is None:
        pytest.skip("the requests are logged only by tests/local_model_server.py (LAMBDARAG_TEST_LLM_URL is set)")
    formats = [(q.get("response_format") or {}).get("type") for q in real_model.requests()]
    assert [f for f in formats if f] == ["json_schema", "json_object"], formats
    assert formats.count(None) >= 2
