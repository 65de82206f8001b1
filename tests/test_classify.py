"""Offline classification: rules on the labelled maritime questions, learned rules, the rules → LLM → default term."""
import json
from pathlib import Path

import pytest

from lambdarag import Context, State
from lambdarag.errors import ConfigError
from lambdarag.providers.llm import OpenAIChat
from skills.classify import classify, query_entities, rule_classify
from tests.scripted_server import Reply

DATA = Path(__file__).parent / "data"


def labelled(name):
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def tally(rows):
    """Returns (right, decided by rules, left to the LLM as None) over labelled rows."""
    decided = [(r, rule_classify(r["query"])) for r in rows]
    right = sum(c is not None and c.type == r["type"] for r, c in decided)
    unsure = sum(c is None for _, c in decided)
    return right, len(rows) - unsure, unsure


def test_rules_classify_the_main_set():
    # The rules were tuned on this set, so the floor is high; 0.9 leaves room for
    # rule changes that trade one main-set question for broader coverage.
    rows = labelled("maritime_questions.jsonl")
    right, _, _ = tally(rows)
    assert right / len(rows) >= 0.9


def test_rules_generalise_to_the_held_out_set():
    # Held out (never used to tune): measured once at 13/20 right, 4 left to the LLM
    # (None), 3 wrong, i.e. 0.65 overall and 13/16 among rule decisions. The floors
    # sit just under that measurement so a regression fails.
    rows = labelled("classify_extra.jsonl")
    right, decided, _ = tally(rows)
    assert right / len(rows) >= 0.6
    assert right / decided >= 0.75


@pytest.mark.parametrize("query, kind", [
    ("海上交通安全法与水污染防治法在船舶管理方面有何异同？", "compare"),
    ("修订后的海上交通安全法什么时候施行？", "temporal"),
    ("梳理一下我国防治船舶污染的法律法规体系", "synthesis"),
    ("全国船员管理工作由哪个部门主管？", "relation"),
    ("船舶国籍证书的有效期是几年？", "fact"),
])
def test_each_type_has_a_rule(query, kind):
    c = rule_classify(query)
    assert c.type == kind and c.stage == "rules" and 0 < c.confidence <= 1


def test_unsure_returns_none():
    assert rule_classify("你好") is None


def test_learned_rules_win_over_builtin_ones():
    rules = [{"pattern": "定线制", "type": "temporal"}]
    assert rule_classify("琼州海峡定线制的船舶有哪些要求").type == "fact"
    c = rule_classify("琼州海峡定线制的船舶有哪些要求", rules)
    assert (c.type, c.stage) == ("temporal", "learned")


def test_bad_learned_rule_names_the_problem():
    with pytest.raises(ConfigError, match="type must be one of"):
        rule_classify("x", [{"pattern": "x", "type": "weird"}])


def test_entities_are_the_laws_named():
    assert query_entities("海洋环境保护法与防治船舶污染海洋环境管理条例在船舶污染事故报告要求上有什么不同？") == (
        "海洋环境保护法", "防治船舶污染海洋环境管理条例")


def test_classify_offline_uses_the_configured_default():
    s = classify({"default": "synthesis"}).run("你好")
    assert s.query_type == "synthesis" and s.classification.stage == "default"


def test_classify_asks_the_llm_only_when_rules_are_unsure(llm_server):
    llm_server.script.script(Reply(text='{"type": "relation", "entities": ["海事局"], "confidence": 0.7}'))
    ctx = Context(llm=OpenAIChat(llm_server.url, "m", timeout=2))
    term = classify({})
    s = term.run("全国船员管理工作由哪个部门主管？", ctx)
    assert s.classification.stage == "rules" and llm_server.script.requests == []
    s = term.run("海事局这个单位怎么样", ctx)
    assert (s.query_type, s.entities, s.classification.stage) == ("relation", ("海事局",), "llm")
    assert "海事局这个单位怎么样" in llm_server.script.requests[0]["body"]["messages"][-1]["content"]


def test_classify_llm_invalid_type_twice_falls_back_to_default(llm_server):
    llm_server.script.script(Reply(text='{"type": "opinion"}'), Reply(text="not json"))
    ctx = Context(llm=OpenAIChat(llm_server.url, "m", timeout=2))
    s = classify({"default": "fact"}).run(State.of("海事局这个单位怎么样"), ctx)
    assert s.classification.stage == "default"
    assert any("classify_llm" == f["term"] for f in ctx.trace.fallbacks())
