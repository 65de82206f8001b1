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
from typing import Any, Callable, Mapping, Optional, Sequence

from lambdarag.domains.generic import PROMPTS as GENERIC_PROMPTS
from lambdarag.skills.generate import THRESHOLD
from lambdarag.skills.profile import CorpusProfile
from lambdarag.skills.sentences import keywords
from lambdarag.skills.store.corpus import Document

from . import routes  # noqa: F401  (registers the pack's terms and route variants)
from . import aspects, cues, documents, edges, extract, kinds, ranks, repeal, wording
from .names import name_forms, short_name

EXEMPLARS = Path(__file__).with_name("data") / "classify_exemplars.jsonl"
"""Statute questions labelled by type, the learned classifier's training set (none from a test half)."""
PROMPTS = Path(__file__).with_name("data") / "prompts.yml"
"""The statute answer, planning and extraction prompts, layered over the generic pack's."""


class StatuteProfile(CorpusProfile):
    """PRC statutes: articles are the units, titles name families of dated versions, laws outrank regulations."""

    name = "prc_statutes"

    @classmethod
    def claims(cls, docs: Sequence[Any]) -> bool:
        return documents.claims(docs)

    def markdown_fields(self, name: str, title: str, lines: Sequence[str]) -> dict[str, Any]:
        headers = documents.header_lines(lines)
        return {"kind": "statute" if documents.is_statute(lines) else "markdown", "headers": headers,
                "date": documents.date_of(name, headers), "family": self.family(title)}

    record_document_keys = ("document", "law")
    """STARD records name their statute in `law`."""

    def family(self, title: str) -> str:
        return documents.family(title)

    def chunk(self, doc: Any, cap: int) -> list:
        return documents.chunk(doc, cap)

    def short_title(self, title: str) -> str:
        return short_name(title)

    def short_name(self, name: str) -> str:
        return short_name(name)

    def name_forms(self, name: str, kind: Optional[str] = None) -> set[str]:
        return name_forms(name, kind)

    support_cues = extract.SUPPORT_CUES
    entity_name_rule = extract.NAME_RULE

    # -- comparison ---------------------------------------------------------------------------------------------

    def compare_aspects(self, query: str) -> list[tuple[str, tuple[str, ...]]]:
        return aspects.aspects_of(query)

    def named_aspects(self, query: str) -> list[tuple[str, tuple[str, ...]]]:
        return aspects.named_aspects(query)

    def without_aspects(self, words: Sequence[str]) -> list[str]:
        return aspects.without_aspects(tuple(words))

    # -- priors, versions, repeals --------------------------------------------------------------------------------

    def source_rank(self, source: str) -> int:
        return ranks.source_rank(source)

    # -- graph --------------------------------------------------------------------------------------------------

    rules_version = extract.RULES_VERSION

    entity_type_names = extract.TYPE_NAMES
    page_sections = extract.PAGE_SECTIONS

    def extract_document(self, doc: Any) -> Any:
        return extract.extract_document(doc)

    def llm_extract(self, doc: Any, llm: Any) -> Any:
        return extract.llm_extract(doc, llm)

    def answer_facts(self, hit: Any, text: str) -> tuple[list, list[tuple[str, str]]]:
        doc = Document(id=hit.chunk_id, source=hit.source, title=hit.title, text=text, date=hit.date, kind="statute")
        return extract.extract_relations(doc), extract.extract_entities(text)

    relation_cue_table, asking_words = edges.CUES, edges.ASKING

    # -- classification -------------------------------------------------------------------------------------------

    rules, exemplars_file = cues.RULES, EXEMPLARS

    def query_entities(self, query: str) -> tuple[str, ...]:
        return cues.query_entities(query)

    def admits_type(self, kind: str, query: str) -> bool:
        return kind != "synthesis" or cues.asks_for_survey(query)

    def without_label(self, sentence: str) -> str:
        return documents.UNIT_LABEL.sub("", sentence, count=1)

    def is_heading(self, line: str) -> bool:
        return bool(documents.DIVISION_LINE.search(line))

    def is_title(self, name: str) -> bool:
        return bool(cues.TITLE_END.search(name))

    pronoun_nouns = "法律|法规|条例|规定|办法|机构|部门|单位|机关|法"
    step_back_suffix = " 相关规定"

    # -- answers and replies ------------------------------------------------------------------------------------

    prompt_files = (GENERIC_PROMPTS, PROMPTS)

    def phrasing(self, query: str) -> Mapping[str, str]:
        return wording.PHRASES

    answer_floor = THRESHOLD
    """A statute answer quotes only articles that cover the question; a partial match is no answer."""

    def missing_things(self, query: str, context: str) -> list[str]:
        """Returns the question's keywords the context never contains: a statute question's words are its terms."""
        return [w for w in keywords(query) if w.lower() not in context]

    def direct_replies(self, query: str) -> Mapping[str, str]:
        return {"greeting": wording.PHRASES["greeting"], "out_of_scope": wording.PHRASES["out_of_scope"]}

    def in_domain(self, query: str, index: Any = None) -> bool:
        return bool(wording.DOMAIN.search(wording.PUNCTUATION.sub("", query)))
