"""The corpus profile: the one seam through which generic skills learn what the indexed documents are.

Everything that depends on the kind of document — what a unit is and how a
file is chunked, titles, families and repeals, the things a comparison names
and how they resolve, ranking priors, entity and relation extraction, the
aspects a comparison is made on, classifier cues and exemplars, the offline
answer's phrasing and the direct replies, and what counts as in-domain — is a
method of a `CorpusProfile`. Generic skills call these methods and hold no
domain words; a domain pack (``domains/…``) subclasses the profile.

The base class is what a skill may assume of documents it knows nothing
about (no priors, no repeals, no sides, words in the question's language);
a subclass overrides what its documents have. A profile is chosen by name or spec (``generic``,
``prc_statutes``, ``package.module:Factory``), recorded in the index manifest
when the index is built, and found again from the index at query time.
"""
from __future__ import annotations

import importlib
import re
import threading
from typing import Any, Callable, Mapping, Optional, Sequence

from lambdarag.errors import ConfigError
from lambdarag.registry import is_plugin

from .store.derived import PerObject

SHIPPED = {"generic": "lambdarag.domains.generic:GenericProfile", "prc_statutes": "lambdarag.domains.prc_statutes:StatuteProfile"}
"""The profiles that ship, by name; `auto` asks each whether it claims a corpus (statutes first)."""
AUTO_ORDER = ("prc_statutes", "generic")


class CorpusProfile:
    """What a corpus's documents are, as generic skills need to know it; this base knows nothing domain-specific."""

    name = "base"

    # -- choosing ---------------------------------------------------------------------------------------------

    @classmethod
    def claims(cls, documents: Sequence[Any]) -> bool:
        """Returns whether this profile fits a corpus, judged from its documents (for ``domain: auto``)."""
        return True

    # -- structure --------------------------------------------------------------------------------------------

    def markdown_fields(self, name: str, title: str, lines: Sequence[str]) -> dict[str, Any]:
        """Returns the kind, header lines, date and family of a markdown file (its name, title and body lines)
        where front matter does not declare them."""
        from .store.corpus import file_date

        return {"kind": "markdown", "headers": (), "date": file_date(name), "family": self.family(title)}

    record_document_keys: tuple[str, ...] = ("document",)
    """Fields of a JSONL record naming the document it is a part of (the first one set gives its family, else its
    title does)."""

    def family(self, title: str) -> str:
        """Returns the family id of a title: the dated versions of one document share it."""
        from .store.corpus import family_of

        return family_of(title)

    def chunk(self, doc: Any, cap: int) -> list:
        """Returns the chunks of a document (see skills.store.corpus for the generic chunkers)."""
        from .store.corpus import chunk_document

        return chunk_document(doc, cap)

    def tokenizer_options(self) -> dict:
        """Returns the options of the index's BM25 tokenizer (skills.store.tokenize.Tokenizer keyword arguments)."""
        return {}

    def short_title(self, title: str) -> str:
        """Returns the short form of a document title used to match it in a question."""
        return title.strip()

    # -- comparison sides ----------------------------------------------------------------------------------------

    sides_lead = True
    """Whether the sides' own best chunks go ahead of the question's ranking (else the ranking's first chunk leads,
    and the sides follow it round-robin)."""

    def compare_aspects(self, query: str) -> list[tuple[str, tuple[str, ...]]]:
        """Returns (aspect, cue words a document states it with) the question compares on; one plain aspect by default."""
        return [("", ())]

    def named_aspects(self, query: str) -> list[tuple[str, tuple[str, ...]]]:
        """Returns (aspect, cue words) for each aspect the question asks about by name: none by default."""
        return []

    def without_aspects(self, words: Sequence[str]) -> list[str]:
        """Returns the words that are not themselves the way a question names an aspect."""
        return list(words)

    # -- ranking priors, versions and repeals ------------------------------------------------------------------

    def source_rank(self, source: str) -> int:
        """Returns the prior rank of a document by its source path (all 0 by default)."""
        return 0

    # -- graph --------------------------------------------------------------------------------------------------

    rules_version: Any = "base-1"
    """Changes when extraction changes, so that incremental wiki compiles redo every document."""

    entity_type_names: Mapping[str, str] = {}
    """How a wiki page spells the entity types of this profile's graph (a type not named here is shown as stored)."""

    page_sections: tuple[tuple[str, str, str], ...] = ()
    """The sections of a wiki page, each (title, relation, end): the edges of that relation, listed by their `head`
    (edges into the entity) or `tail` (edges out of it); edges of no section are listed together."""

    def short_name(self, name: str) -> str:
        """Returns the short form an entity's name is stored and looked up by (without quotes, by default)."""
        from .store.graph import plain_name

        return plain_name(name)

    def name_forms(self, name: str, kind: Optional[str] = None) -> set[str]:
        """Returns the ways text may write an entity's name, for an entity of type `kind` (None: of any type): as given
        and its short form, by default."""
        return {name, self.short_name(name)}

    support_cues: Mapping[str, tuple[str, ...]] = {}
    """Relation type → words one of which a sentence must contain to state a relation of that type (a type not
    listed: its own name)."""
    entity_name_rule = "名称去掉书名号和引号，只列问题里出现或明确指代的，不要补充。"
    """The line of the LLM's entity prompt that says how to write the names it lists."""

    def extract_document(self, doc: Any) -> Any:
        """Returns the `DocFacts` (skills.wiki) of a document: its own entity, no relations by default."""
        from .store.graph import DocFacts, EntityRecord, Label

        name = self.short_title(doc.title or doc.family)
        me = EntityRecord(name=name, type="document",
                          sources={doc.source: Label(department=doc.department, security_level=doc.security_level)})
        return DocFacts(source=doc.source, entity=name, entities=[me])

    def llm_extract(self, doc: Any, llm: Any) -> Any:
        """Returns the `DocFacts` an LLM reads in a document; raises `ProviderError` when it fails (rules' output stays)."""
        from lambdarag.errors import ProviderError

        raise ProviderError(f"corpus profile {self.name!r} has no LLM extraction")

    def answer_facts(self, source: Any, text: str) -> tuple[list, list[tuple[str, str]]]:
        """Returns (relations, (entity, type) pairs) the rules read in a cited passage of an answer (`source`: its hit)."""
        return [], []

    relation_cue_table: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = ()
    """(question cue, relation types it asks about) pairs for edge search."""
    asking_words: frozenset[str] = frozenset()
    """Words of a relation question that name the relation rather than what it is about."""
    rules: tuple[tuple[str, float, re.Pattern[str]], ...] = ()
    """The classifier's (type, confidence, cue pattern) rules, the first firing one deciding."""
    exemplars_file: Any = None
    """A JSONL file of labelled questions ``{"query", "type"}`` the learned classifier is fitted on, or None."""

    def relation_cues(self) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
        """Returns (question cue, relation types it asks about) pairs for edge search."""
        return self.relation_cue_table

    def relation_asking_words(self) -> frozenset[str]:
        """Returns words of a relation question that name the relation rather than what it is about."""
        return self.asking_words

    # -- classification -------------------------------------------------------------------------------------------

    def classifier_rules(self) -> tuple[tuple[str, float, re.Pattern[str]], ...]:
        """Returns (type, confidence, cue pattern) rules, the first firing one deciding."""
        return self.rules

    def exemplars(self) -> tuple[tuple[str, str], ...]:
        """Returns labelled questions (query, type) the learned classifier is fitted on, read once per profile
        (the classifier asks on every question)."""
        from .exemplars import read_exemplars

        if "_exemplars" not in self.__dict__:
            self._exemplars = read_exemplars(self.exemplars_file) if self.exemplars_file else ()
        return self._exemplars

    def query_entities(self, query: str) -> tuple[str, ...]:
        """Returns the named things of a question, in order of appearance."""
        return ()

    def asks_compare(self, query: str) -> bool:
        """Returns whether a question's words set things side by side (a compare rule of the profile fires)."""
        return any(kind == "compare" and pattern.search(query) for kind, _, pattern in self.classifier_rules())

    unsure_below = 0.0
    """Probability below which the learned classifier's guess decides nothing (the classifier's default type does)."""

    def admits_type(self, kind: str, query: str) -> bool:
        """Returns whether the learned classifier may give a question no rule settled this type (any, by default)."""
        return True

    def is_title(self, name: str) -> bool:
        """Returns whether a named thing is a document's title rather than a body or a topic (none by default)."""
        return False

    pronoun_nouns = "文件|文档|章节|部分|机构|部门|单位|机关|工具|命令|软件|功能|系统|方法|问题"
    """Nouns a Chinese demonstrative stands with for the previous turn's subject (这个文件, 该命令), joined by |."""
    step_back_suffix = ""
    """Words a step-back query variant ends with (none by default)."""

    def without_label(self, sentence: str) -> str:
        """Returns a sentence without the leading label its unit is numbered with, never part of a quote (none by
        default)."""
        return sentence

    def is_heading(self, line: str) -> bool:
        """Returns whether a line of a chunk is a structural heading not to be quoted as an answer."""
        return False

    # -- answers and direct replies -----------------------------------------------------------------------------

    def phrasing(self, query: str) -> Mapping[str, str]:
        """Returns the offline answer's phrases for a question (skills.phrasing keys)."""
        from .phrasing import phrases

        return phrases(query)

    prompt_files: tuple = ()
    """The LLM prompt files (`skills.prompts`), later ones overriding earlier ones; none here (a pack names its own)."""

    answer_floor = 0.2
    """Share of a question's weighted words the best retrieved sentence must cover for the offline answer to quote
    it when no sentence covers enough of any one part (skills.coverage.THRESHOLD); below it nothing retrieved is
    about the question, and the answer refuses. A profile at or above THRESHOLD never answers from partial support."""

    def missing_things(self, query: str, context: str) -> list[str]:
        """Returns what a question names that the lower-cased context never mentions: what an answer may honestly
        say the documents lack, and why it then refuses rather than quote partial support.

        Those are its named things (`query_entities`, and capitalised words inside an English sentence), never its
        everyday words (易读, 查看, current): the text often says those otherwise, so their absence proves nothing.
        """
        from .sentences import proper_nouns

        asked = dict.fromkeys([*self.query_entities(query), *proper_nouns(query)])
        return [name for name in asked if name.lower() not in context]

    def direct_replies(self, query: str) -> Mapping[str, str]:
        """Returns the greeting and out-of-scope replies for a question's language (`greeting`, `out_of_scope`)."""
        from .phrasing import phrases

        p = phrases(query)
        return {"greeting": p["greeting"], "out_of_scope": p["out_of_scope"]}

    def in_domain(self, query: str, index: Any = None) -> bool:
        """Returns whether a question with an off-topic cue (weather, a joke) is about the documents all the same:
        when at least half its words are words of the index (none without an index)."""
        lexical = getattr(index, "lexical", None)
        if lexical is None:
            return False
        tokens = index.tokenizer(query)
        return bool(tokens) and 2 * sum(t in lexical.vocab for t in tokens) >= len(tokens)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def load_profile(spec: str) -> CorpusProfile:
    """Returns the profile `spec` names: a shipped name, or ``package.module:Factory`` of a listed plugin
    (`lambdarag.registry.is_plugin`) returning a `CorpusProfile`; an index manifest's `domain` comes here too, so
    neither a config nor a manifest can make this import a module nobody listed."""
    target = SHIPPED.get(spec, spec)
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ConfigError(f"retrieval.domain: {spec!r} is neither a shipped profile "
                          f"({', '.join(['auto', *SHIPPED])}) nor package.module:Factory")
    if spec not in SHIPPED and not is_plugin(module):
        raise ConfigError(f"retrieval.domain: {spec!r} imports {module}, which no trusted config lists under "
                          f"plugins:; a domain is a shipped profile ({', '.join(SHIPPED)}) or module:Factory of a "
                          f"listed plugin")
    try:
        factory: Callable[[], Any] = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"retrieval.domain: cannot load {spec!r}: {e}") from None
    profile = factory()
    if not isinstance(profile, CorpusProfile):
        raise ConfigError(f"retrieval.domain: {spec!r} returned {type(profile).__name__}, not a CorpusProfile")
    return profile


def choose_profile(documents: Sequence[Any]) -> str:
    """Returns the name of the first shipped profile that claims the documents (``domain: auto``)."""
    for name in AUTO_ORDER:
        if type(load_profile(name)).claims(documents):
            return name
    return "generic"


_LOADED: dict[str, CorpusProfile] = {}
_LOADING = threading.Lock()


def profile_named(spec: str) -> CorpusProfile:
    """Returns the profile of `spec`, loaded once per process (under a lock: concurrent first questions share it)."""
    with _LOADING:
        if spec not in _LOADED:
            _LOADED[spec] = load_profile(spec)
        return _LOADED[spec]


def index_profile(index: Any) -> CorpusProfile:
    """Returns the profile an index was built with (its manifest's `domain`), else the one its documents fit."""
    return profile_named(getattr(index, "domain", None) or _detected(index))


_detected: PerObject[str] = PerObject(lambda index: choose_profile(list(index.documents().values())))
"""Returns the profile an index built before profiles were recorded fits, judged once per index version."""


def packs_of(profile: CorpusProfile) -> tuple[str, ...]:
    """Returns the packs whose own terms and route variants a profile runs: its own, then those it derives from."""
    return tuple(dict.fromkeys(c.name for c in type(profile).__mro__ if isinstance(c, type) and
                               issubclass(c, CorpusProfile) and "name" in vars(c)))


def profile_of(ctx: Any) -> CorpusProfile:
    """Returns the profile a term runs under: the context's `profile` resource, else its index's, else generic."""
    resources = getattr(ctx, "resources", None) or {}
    found = resources.get("profile")
    if found is not None:
        return found
    index = resources.get("index")
    return index_profile(index) if index is not None else profile_named("generic")
