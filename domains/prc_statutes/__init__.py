"""The PRC statute pack: a corpus profile for statutes, regulations and judicial interpretations in Chinese.

Every rule that only statutes have lives in this package: articles 第X条
and 编/章/节 divisions (documents), statute titles and their short forms
(names), the aspects two statutes are compared on (aspects), repeals by a
successor's closing article (repeal), the kinds of document and the kind
prior a question's wording turns off or reverses (kinds), the topic, purpose,
specificity and listed-area searches of a survey (ranks), agency relations and the
entity extraction of the graph (hierarchy, extract), the classifier's cues
and exemplars (cues), and the wording of answers and replies (wording).
"""
from __future__ import annotations

from pathlib import Path

from lambdarag.domains.generic import PROMPTS as GENERIC_PROMPTS
from lambdarag.skills.generate import THRESHOLD
from lambdarag.skills.profile import Classifier, Comparison, CorpusProfile, GraphRules, Names, Reading, Wording

from . import routes  # noqa: F401  (registers the pack's terms and route variants)
from . import aspects, cues, documents, edges, extract, ranks, wording
from .names import name_forms, short_name

EXEMPLARS = Path(__file__).with_name("data") / "classify_exemplars.jsonl"
"""Statute questions labelled by type, the learned classifier's training set (none from a test half)."""
PROMPTS = Path(__file__).with_name("data") / "prompts.yml"
"""The statute answer, planning and extraction prompts, layered over the generic pack's."""


class StatuteProfile(CorpusProfile):
    """PRC statutes: articles are the units, titles name families of dated versions, laws outrank regulations."""

    name = "prc_statutes"
    reading = Reading(claims=documents.claims, markdown_fields=documents.markdown_fields,
                      record_document_keys=("document", "law"),   # STARD records name their statute in `law`
                      family=documents.family, chunk=documents.chunk, without_label=documents.without_label,
                      is_heading=documents.is_heading, refers_back=documents.refers_back)
    names = Names(short_title=short_name, short_name=short_name, name_forms=name_forms, is_title=cues.is_title,
                  query_entities=cues.query_entities, pronoun_nouns="法律|法规|条例|规定|办法|机构|部门|单位|机关|法")
    comparison = Comparison(aspects=aspects.aspects_of, named_aspects=aspects.named_aspects,
                            without_aspects=aspects.words_without_aspects)
    graph = GraphRules(rules_version=extract.RULES_VERSION, extract_document=extract.extract_document,
                       llm_reading=extract.LLM_READING, answer_facts=extract.answer_facts,
                       type_names=extract.TYPE_NAMES, page_sections=extract.PAGE_SECTIONS,
                       support_cues=extract.SUPPORT_CUES, relation_cues=edges.CUES, asking_words=edges.ASKING,
                       expand_order=extract.EXPAND_ORDER, source_rank=ranks.source_rank)
    classifier = Classifier(rules=cues.RULES, exemplars_file=EXEMPLARS, admits_type=cues.admits_type,
                            risk_cues=cues.RISK_CUES, table_cue=cues.TABLE_CUE)
    wording = Wording(phrasing=wording.phrasing, answer_floor=THRESHOLD, missing_things=wording.missing_things,
                      in_domain=wording.in_domain, step_back_suffix=" 相关规定",
                      prompt_files=(GENERIC_PROMPTS, PROMPTS), entity_name_rule=extract.NAME_RULE)
    """A statute answer quotes only articles that cover the question (answer_floor): a partial match is no answer."""
