"""The generic pack: a corpus profile for markdown, plain text and JSONL of any kind, in Chinese or English.

Sections are the units (chunked by headings, skills.store.corpus); the named
things of a question are document titles, file names and headings, matched
on word boundaries (skills.titles); the graph holds sections, links and definitions
(graph); the classifier's cues and exemplars are in both languages (cues,
data/classify_exemplars.jsonl); answers are worded in the question's
language (skills.phrasing). There are no priors and no repeals, and a survey
leads with the documents about its topic, by content and by headings (survey):
every route starts from hybrid retrieval and only adds.
"""
from __future__ import annotations

from pathlib import Path

from lambdarag.skills.profile import Classifier, Comparison, CorpusProfile, GraphRules, Names, Reading, Wording

from . import routes  # noqa: F401  (registers the pack's terms and route variants)
from . import cues, graph

EXEMPLARS = Path(__file__).with_name("data") / "classify_exemplars.jsonl"
"""Questions about documentation and prose of no particular field, in English and Chinese, labelled by type."""
PROMPTS = Path(__file__).with_name("data") / "prompts.yml"
"""The LLM prompts of every Lam in Chinese and English (skills.prompts): the default of every pack."""
EVIDENCE_WEIGHTS = Path(__file__).with_name("data") / "evidence_weights.json"
"""The learned evidence scorer's weights, fitted on the open dev halves by scripts/fit_evidence.py (its provenance
inside): they order the offline answer's candidate units (docs/answers.md, "Scoring")."""
ANSWER_FLOOR = 0.15
"""Below the best unit of every dev question of bench/data/domains (the lowest, 0.18, a Chinese synthesis question
full of everyday words): documentation answers in other words than the question's."""
ANSWER_NEAR = 0.88
"""Between the dev answers' units held under ANSWER_FLOOR (cosines 0.893 and 0.925, edu-zh-cn f04 and f02) and the
nearest unit to off-topic questions phrased like them (0.853: 在手机上要怎么写地址才能给朋友寄信 on edu-zh-cn)."""
UNSURE_BELOW = 0.3
"""Barely above chance among five types: a guess that weak is no evidence, and the default type (fact, the plain
route) is the safe one."""


class GenericProfile(CorpusProfile):
    """Any documents: sections are the units, titles and headings are the named things, no priors."""

    name = "generic"
    reading = Reading(tokenizer={"english": "snowball"})
    names = Names(query_entities=cues.query_entities)
    comparison = Comparison(sides_lead=False)
    graph = GraphRules(rules_version=graph.RULES_VERSION, extract_document=graph.extract_document,
                       relation_cues=cues.RELATION_CUES, asking_words=cues.ASKING)
    classifier = Classifier(rules=cues.RULES, exemplars_file=EXEMPLARS, unsure_below=UNSURE_BELOW,
                            admits_type=cues.admits_type, risk_cues=cues.RISK_CUES, table_cue=cues.TABLE_CUE)
    wording = Wording(prompt_files=(PROMPTS,), answer_floor=ANSWER_FLOOR, answer_near=ANSWER_NEAR,
                      evidence_weights=EVIDENCE_WEIGHTS, missing_things=cues.missing_things)
