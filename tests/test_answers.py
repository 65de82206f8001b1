"""Offline answer quality on the demo knowledge base: answers carry the facts the demo questions expect.

tests/data/demo_questions.jsonl lists, per question, phrases copied from the
document that answers it. Offline (extractive) answers contained 70% of them
when this floor was set; the test keeps that from sliding back.
"""
from __future__ import annotations

import json

from tests.conftest import ROOT
from lambdarag.orchestration.search_unified import search

QUESTIONS = [json.loads(line) for line in (ROOT / "tests" / "data" / "demo_questions.jsonl").read_text("utf-8").splitlines()
             if line.strip()]


def test_offline_answers_contain_the_expected_facts():
    shares = []
    for q in QUESTIONS:
        answer = search(q["query"]).answer
        shares.append(sum(phrase in answer for phrase in q["expect"]) / len(q["expect"]))
    assert sum(shares) / len(shares) >= 0.65, shares


def test_every_demo_answer_cites_only_retrieved_chunks():
    for q in QUESTIONS:
        r = search(q["query"])
        shown = {h.chunk_id for h in r.hits} | {h.source for h in r.hits}
        for c in r.citations:
            assert c.chunk_id in shown or c.source.startswith("entities/") or c.source in shown, (q, c)


def test_an_empty_answer_fails_the_offline_check():
    from lambdarag import State
    from lambdarag.skills.check import check_overlap

    verdict = check_overlap(State.of("船员条例由哪个部门主管？", answer="  "))
    assert not verdict.passed and verdict.details[0].startswith("empty")
