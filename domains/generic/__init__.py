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
from typing import Any

from lambdarag.skills.profile import CorpusProfile

from . import routes  # noqa: F401  (registers the pack's terms and route variants)
from . import cues, graph

EXEMPLARS = Path(__file__).with_name("data") / "classify_exemplars.jsonl"
"""Questions about documentation and prose of no particular field, in English and Chinese, labelled by type."""
PROMPTS = Path(__file__).with_name("data") / "prompts.yml"
"""The LLM prompts of every Lam in Chinese and English (skills.prompts): the default of every pack."""


class GenericProfile(CorpusProfile):
    """Any documents: sections are the units, titles and headings are the named things, no priors."""

    name = "generic"
    rules_version = graph.RULES_VERSION

    def tokenizer_options(self) -> dict:
        return {"english": "snowball"}

    sides_lead = False

    def extract_document(self, doc: Any) -> Any:
        return graph.extract_document(doc)

    relation_cue_table, asking_words, rules, exemplars_file = cues.RELATION_CUES, cues.ASKING, cues.RULES, EXEMPLARS
    prompt_files = (PROMPTS,)

    def query_entities(self, query: str) -> tuple[str, ...]:
        return cues.query_entities(query)

    answer_floor = 0.15
    """Below the best unit of every dev question of bench/data/domains (the lowest, 0.18, a Chinese synthesis
    question full of everyday words): documentation answers in other words than the question's."""

    def missing_things(self, query: str, context: str) -> list[str]:
        """Returns the named things of a question (`cues.named_things`, and capitalised words inside an English
        sentence) the lower-cased context never mentions: its everyday words are no evidence of a gap."""
        from lambdarag.skills.sentences import proper_nouns

        asked = dict.fromkeys([*cues.named_things(query), *proper_nouns(query)])
        return [name for name in asked if name.lower() not in context]

    unsure_below = 0.3
    """Barely above chance among five types: a guess that weak is no evidence, and the default type (fact, the
    plain route) is the safe one."""

    def admits_type(self, kind: str, query: str) -> bool:
        """Returns False for a comparison whose question pairs nothing (no and/or/than, 和/与/还是, both, two):
        a question no compare cue fired on is a comparison only if it sets two things side by side."""
        return kind != "compare" or bool(cues.PAIRED.search(query))
