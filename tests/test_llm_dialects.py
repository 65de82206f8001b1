"""Any endpoint's dialect, in the question's language: scripted OpenAI-compatible servers over real HTTP that honour a
JSON-schema response format, refuse it with a 400 and answer in plain text, or wrap their JSON in a code fence; the
prompts per language (system + user) and their overrides in agent-config.yml; the offline mode."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from lambdarag.orchestration.cli import main
from lambdarag.orchestration.config import parse_config
from lambdarag.orchestration.knowledge import forget
from lambdarag.orchestration.search_unified import search
from tests.conftest import MARITIME
from tests.scripted_server import DIALECTS, REFUSES_FORMAT, Reply, dialect_route
from tests.test_search import BASE

GUIDE = {
    "apt.md": "# APT\n\n## Sources\nAPT reads the sources.list file and fetches packages from the mirrors it names.\n"
              "\n## Pinning\nPinning gives one release a higher priority than another in the preferences file.\n",
    "dpkg.md": "# dpkg\n\n## Install\ndpkg installs a local .deb file without resolving its dependencies.\n",
    "df.md": "# df\n\n## Options\n-h, --human-readable prints sizes in powers of 1024, such as 1K, 234M or 2G.\n",
}
QUESTIONS = ("Which file does APT read to find the mirrors it fetches packages from?",
             "What does pinning give a release in APT?")


@pytest.fixture(scope="module")
def homes(tmp_path_factory):
    """Yields the data home holding two indexes built with the CLI: `guide` (English documentation) and `laws`
    (the statute fixture, without vectors)."""
    home = tmp_path_factory.mktemp("home")
    docs = home / "guide"
    docs.mkdir()
    for name, text in GUIDE.items():
        (docs / name).write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LAMBDARAG_HOME", str(home / "data"))
        forget()
        assert main(["index", "--corpus", str(docs), "--name", "guide"]) == 0
        assert main(["index", "--corpus", str(MARITIME), "--name", "laws", "--no-dense"]) == 0
        yield home
        forget()


def config(index: str, url: str = "", **llm) -> object:
    """Returns the default config on `index` (without dense retrieval on `laws`), with an LLM at `url` if given."""
    data = json.loads(json.dumps(BASE))
    data["retrieval"].update(index=index)
    data["retrieval"]["skills"]["embedding"]["enabled"] = index != "laws"
    if url:
        data["llm"] = {"baseUrl": url, "model": "m", "timeout": 20, **llm}
    data["limits"] = {"timeoutSeconds": 120}
    return parse_config(yaml.safe_dump(data, allow_unicode=True))


def messages(server) -> list[list[dict]]:
    return [r["messages"] for r in server.script.chat_requests()]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_english_question_gets_english_prompts_and_a_cited_answer_on_any_dialect(homes, llm_server, dialect):
    llm_server.script.route = dialect_route(dialect)
    cfg = config("guide", llm_server.url, budget={"maxCalls": 8})
    for question in QUESTIONS:
        r = search(question, config=cfg)
        assert not r.degraded and r.fallbacks == [], (dialect, r.fallbacks)
        assert r.citations and "[source: apt.md#" in r.answer and "来源" not in r.answer, r.answer
        assert not any(m["term"] == "llm" for m in r.modes)
    sent = messages(llm_server)
    assert sent and all(m[0]["role"] == "system" and m[-1]["role"] == "user" for m in sent)
    assert not any(re.search(r"[\u4e00-\u9fff]", part["content"]) for m in sent for part in m)   # not one CJK char
    answer_prompt = next(m for m in sent if "[Question]" in m[-1]["content"])
    assert answer_prompt[0]["content"].startswith("You answer questions from a knowledge base, in English.")
    assert "[source: apt.md#Sources]" in answer_prompt[-1]["content"]   # the marker to copy, in the answer's language


def test_a_plain_text_endpoint_is_asked_each_rung_once_then_in_plain_text(homes, llm_server):
    llm_server.script.route = dialect_route("plain")
    cfg = config("guide", llm_server.url, budget={"maxCalls": 8})
    for question in QUESTIONS:
        assert not search(question, config=cfg).degraded
    asked = [(r.get("response_format") or {}).get("type") for r in llm_server.script.chat_requests()]
    structured = [a for a in asked if a]
    assert structured == ["json_schema", "json_object"], asked   # refused once each, remembered for the endpoint
    assert asked.count(None) >= 3       # the answers (no format asked) and every later structured call


def test_structured_calls_made_at_once_wait_for_one_probe_of_the_endpoint(llm_server):
    """A `Par` asks an unknown endpoint for JSON from several threads at once: one finds the rung, the others wait
    for it instead of each being refused on every rung (the real model's run showed json_object asked twice)."""
    import threading
    import time

    from lambdarag.providers.llm import OpenAIChat

    def slow_refusal(body):
        if "response_format" in body:
            time.sleep(0.3)
            return Reply(status=400, text=REFUSES_FORMAT)
        return Reply(text='{"ok": true}')

    llm_server.script.route = slow_refusal
    client = OpenAIChat(llm_server.url, "m", timeout=20)
    schema = {"title": "Ok", "type": "object", "properties": {"ok": {"type": "boolean"}}}
    replies: list = []
    calls = [threading.Thread(target=lambda: replies.append(client.complete([{"role": "user", "content": "x"}],
                                                                            schema=schema))) for _ in range(4)]
    for call in calls:
        call.start()
    for call in calls:
        call.join(30)
    asked = [(r.get("response_format") or {}).get("type") for r in llm_server.script.chat_requests()]
    assert [a for a in asked if a] == ["json_schema", "json_object"] and asked.count(None) == 4, asked
    assert [r.text for r in replies] == ['{"ok": true}'] * 4


def test_a_chinese_statute_question_keeps_the_article_marker_and_a_chinese_prompt(homes, llm_server):
    llm_server.script.route = dialect_route("plain")
    r = search("船长对船舶的管理负有什么职责？", config=config("laws", llm_server.url))
    assert not r.degraded and r.citations
    assert re.search(r"\[来源: [^\]#]+\.md#第[^\]]+条\]", r.answer), r.answer
    answer_prompt = next(m for m in messages(llm_server) if "【问题】" in m[-1]["content"])
    assert answer_prompt[0]["role"] == "system" and "依据法律法规" in answer_prompt[0]["content"]


def test_an_english_answer_the_final_check_empties_is_refused_in_english(homes, llm_server):
    """What SmolLM2-135M does (tests/test_real_llm.py): it cites a passage for a sentence the passage does not hold."""
    unsupported = "The mirrors are chosen at random every night by a cron job. [source: apt.md#Sources]"
    llm_server.script.route = lambda body: Reply(status=400, text=REFUSES_FORMAT) if "response_format" in body \
        else Reply(text=unsupported)
    r = search(QUESTIONS[0], config=config("guide", llm_server.url))
    assert any(f["term"] == "claim_check" for f in r.fallbacks), r.fallbacks
    assert r.answer == "The documents do not answer this question. The documents do not support the answer that " \
                       "was generated.", r.answer


def test_an_answer_whose_model_forgot_its_markers_is_cited_where_a_passage_supports_it(homes, llm_server):
    """Small models often write the passage's words and no marker: each supported sentence gets the marker of the
    passage that supports it, and a sentence no passage supports is still rejected."""
    forgot = ("APT reads the sources.list file and fetches packages from the mirrors it names. "
              "The mirrors are chosen at random every night by a cron job.")
    llm_server.script.route = lambda body: Reply(status=400, text=REFUSES_FORMAT) if "response_format" in body \
        else Reply(text=forgot)
    r = search(QUESTIONS[0], config=config("guide", llm_server.url))
    assert r.answer.startswith("APT reads the sources.list file and fetches packages from the mirrors it names."
                               "[source: apt.md#Sources]"), r.answer
    assert [c.chunk_id for c in r.citations] == ["apt.md#Sources"] and "cron" not in r.answer, r.answer
    assert not any(f["term"] == "answer_generate" for f in r.fallbacks), r.fallbacks


def test_a_configured_prompt_replaces_the_profiles_and_a_bad_one_names_its_line(homes, llm_server, tmp_path):
    llm_server.script.route = dialect_route("structured")
    mine = "You answer from the manuals of the ops team. Cite as told."
    cfg = config("guide", llm_server.url, prompts={"answer_generate": {"en": {"system": mine}}})
    r = search(QUESTIONS[0], config=cfg)
    assert not r.degraded
    answer_prompt = next(m for m in messages(llm_server) if "[Question]" in m[-1]["content"])
    assert answer_prompt[0]["content"] == mine
    bad = tmp_path / "agent-config.yml"
    bad.write_text("llm:\n  prompts:\n    answer_generate:\n      en:\n        system: Be brief.\n"
                   "        user: 'Q: {original_query} {contxt}'\n", encoding="utf-8")
    assert main(["--config", str(bad), "check"]) == 2


def test_a_template_error_names_the_line_the_variable_and_the_choices():
    from lambdarag.errors import ConfigError

    unknown = "llm:\n  prompts:\n    answer_generate:\n      en:\n        user: 'Q: {original_query} {contxt}'\n"
    with pytest.raises(ConfigError, match=r"line 5: llm\.prompts\.answer_generate\.en\.user: answer_generate: "
                                          r"unknown variable \{contxt\}; variables: context, entities, hits"):
        parse_config(unknown)
    missing = "llm:\n  prompts:\n    citation_check:\n      zh:\n        user: '【回答】{answer}'\n"
    with pytest.raises(ConfigError, match=r"line 5: .*citation_check: missing required variable \{context\}"):
        parse_config(missing)
    with pytest.raises(ConfigError, match=r"no Lam has a prompt named 'answer'; prompts: answer_generate, "):
        parse_config("llm:\n  prompts:\n    answer:\n      en:\n        user: '{query}'\n")


def test_offline_is_a_mode_the_cli_exits_0_and_lists_no_fallback(homes, capsys, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(homes / "data"))
    path = homes / "offline.yml"
    data = json.loads(json.dumps(BASE))
    data["retrieval"].update(index="guide")
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert main(["--config", str(path), "ask", "--json", QUESTIONS[0]]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fallbacks"] == [] and out["degraded"] is False
    assert {"term": "llm", "path": "config", "reason": "offline answer (no LLM configured)"} in out["modes"]
    spans = [s for s in out["trace"]["spans"] if s["kind"] == "lam"]
    assert spans and {s["notes"]["path_taken"] for s in spans} == {"offline"}
