"""Query classification: rules first (zero cost), a learned classifier next, an LLM when both are unsure, a default last.

Types: fact (a number, date, name or clause), compare (two or more things set
side by side), relation (who governs, owns or depends on what), synthesis (a
survey across documents), temporal (versions, revisions, dates in force).
The cues, the exemplars the learned classifier is fitted on and the named
things of a question are the corpus profile's (skills.profile).
"""
from __future__ import annotations

import re
import threading
from typing import Annotated, Any, Iterable, Literal, Mapping, Optional, TypedDict

from pydantic import AfterValidator, Field

from lambdarag import Context, If, Lam, Reply, State, Term, tool
from lambdarag.errors import ConfigError
from lambdarag.state import Record

from .dense import default_embedder
from .exemplars import SURE, ExemplarClassifier, exemplar_cache, shipped_path
from .profile import CorpusProfile, profile_of
from .registry import skill
from .prompts import ProfilePrompt

QueryType = Literal["fact", "compare", "relation", "synthesis", "temporal"]
TYPES: tuple[str, ...] = ("fact", "compare", "relation", "synthesis", "temporal")


class Classification(Record):
    """A query's type with the entities named in it, how sure the decider was, and which stage decided."""

    type: QueryType
    entities: tuple[str, ...] = ()
    confidence: float = 0.0
    stage: Literal["learned", "rules", "exemplars", "llm", "default"] = "rules"
    rule: str = ""


class Classified(TypedDict):
    """What a classifier writes: the type, the named entities, and the whole decision (the field's declaration)."""

    query_type: str
    entities: tuple[str, ...]
    classification: Classification


class RulesDecided(TypedDict):
    """What the rules stage of `classify` writes: their decision, or None when they are unsure."""

    rule_classification: Optional[Classification]


class LLMClassification(Reply):
    """What the classification prompt asks the model to return."""

    type: QueryType
    entities: list[str] = Field(default_factory=list)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


def learned_rule(rule: Any) -> tuple[str, re.Pattern[str]]:
    """Returns a learned rule ``{pattern, type}`` compiled, or fails naming the bad part."""
    try:
        pattern, kind = rule["pattern"], rule["type"]
    except (KeyError, TypeError):
        raise ConfigError(f"classification rule {rule!r} needs the keys 'pattern' and 'type'") from None
    if kind not in TYPES:
        raise ConfigError(f"classification rule {rule!r}: type must be one of {', '.join(TYPES)}")
    try:
        return kind, re.compile(pattern)
    except re.error as e:
        raise ConfigError(f"classification rule {rule!r}: bad pattern: {e}") from None


def rule_classify(query: str, extra_rules: Iterable[Mapping[str, str]],
                  profile: CorpusProfile) -> Optional[Classification]:
    """Returns the rule-based classification of `query`, or None when no rule fires (unsure).

    Learned rules (``{"pattern": regex, "type": ...}``, e.g. from user corrections)
    are tried before the profile's built-in ones because they encode past mistakes.
    """
    entities = profile.names.query_entities(query)
    for rule in extra_rules:
        kind, pattern = learned_rule(rule)
        if pattern.search(query):
            return Classification(type=kind, entities=entities, confidence=0.95, stage="learned",
                                  rule=pattern.pattern)
    for kind, confidence, pattern in profile.classifier.rules:
        m = pattern.search(query)
        if m:
            return Classification(type=kind, entities=entities, confidence=confidence, stage="rules", rule=m.group(0))
    return None


def _default_type(kind: Any) -> str:
    if kind not in TYPES:
        raise ConfigError(f"classify.default must be one of {', '.join(TYPES)}, got {kind!r}")
    return str(kind)


def _rules(rules: tuple[Any, ...]) -> tuple[Any, ...]:
    for rule in rules:
        learned_rule(rule)
    return rules


def _exemplars_checked(exemplars: tuple[Any, ...]) -> tuple[Any, ...]:
    _exemplars({"exemplars": exemplars})
    return exemplars


DefaultType = Annotated[Any, AfterValidator(_default_type)]
"""The ``default`` parameter: the type when nothing decides, one of `TYPES`."""
Rules = Annotated[tuple[Any, ...], AfterValidator(_rules)]
"""The ``rules`` parameter: learned ``[{pattern, type}]``, each checked when the term is built."""
Exemplars = Annotated[tuple[Any, ...], AfterValidator(_exemplars_checked)]
"""The ``exemplars`` parameter: extra labelled ``[{query, type}]``, each checked when the term is built."""


def _as_fields(c: Classification) -> Classified:
    return {"query_type": c.type, "entities": c.entities, "classification": c}


def _exemplars(config: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Returns the extra labelled questions ``[{query, type}]`` of the config (e.g. from user corrections)."""
    out = []
    for e in config.get("exemplars", ()):
        if not isinstance(e, Mapping) or e.get("type") not in TYPES or not str(e.get("query", "")).strip():
            raise ConfigError(f"classification exemplar {e!r} needs a non-empty 'query' and a 'type' "
                              f"among {', '.join(TYPES)}")
        out.append((str(e["query"]), str(e["type"])))
    return tuple(out)


_CLASSIFIERS: dict[tuple[str, str, tuple[tuple[str, str], ...], str], ExemplarClassifier] = {}
_CLASSIFIERS_LOCK = threading.Lock()


def exemplar_classifier(extra: tuple[tuple[str, str], ...],
                        profile: CorpusProfile) -> ExemplarClassifier:
    """Returns the learned classifier over the profile's exemplars plus `extra` (vectors cached per user, by text).

    It always embeds with the bundled model, whatever retrieval is configured with: the classifier is
    fitted on that model's vectors, and a failing embedding endpoint must not break classification.
    Kept per exemplars file and extra exemplars (two profiles of one name may read other files: a benchmark's
    leave-one-book-out fit), as refitting per question would cost more than the classification.
    """
    embedder = default_embedder()
    key = (profile.name, str(profile.classifier.exemplars_file), extra, embedder.name)
    with _CLASSIFIERS_LOCK:
        if key not in _CLASSIFIERS:
            if len(_CLASSIFIERS) >= 8:
                _CLASSIFIERS.clear()
            shipped = shipped_path(profile.classifier.exemplars_file) if profile.classifier.exemplars_file else None
            _CLASSIFIERS[key] = ExemplarClassifier(profile.classifier.exemplars + extra, embedder, exemplar_cache(), shipped)
        return _CLASSIFIERS[key]


def prepare_classifier(profile: CorpusProfile, exemplars: Iterable[Mapping[str, Any]] = (),
                       progress: bool = False) -> None:
    """Fits the learned classifier of `profile` with the corrected `exemplars` (``[{query, type}]``) now, embedding
    what no shipped or cached vector covers (with a progress bar if asked): the model load and the fit are work
    a question must not do inside its deadline."""
    if profile.classifier.exemplars:
        exemplar_classifier(_exemplars({"exemplars": list(exemplars)}), profile).model(progress)


def learned_classify(query: str, config: Mapping[str, Any],
                     profile: CorpusProfile) -> Optional[Classification]:
    """Returns the learned classifier's most probable type the profile admits for the question (its first when
    none is), or None when the config switches it off (``learned: false``), the profile has no exemplars, or the
    classifier is less sure than the profile's `unsure_below`."""
    if not config.get("learned", True) or not profile.classifier.exemplars:
        return None
    ranked = exemplar_classifier(_exemplars(config), profile).ranked(query)
    kind, p = next(((k, p) for k, p in ranked if profile.classifier.admits_type(k, query)), ranked[0])
    if p < profile.classifier.unsure_below:
        return None
    return Classification(type=kind, entities=profile.names.query_entities(query), confidence=round(p, 3), stage="exemplars")


@skill
@tool
def classify_offline(query: str, ctx: Context, *, default: DefaultType = "fact", rules: Rules = (),
                     exemplars: Exemplars = (), learned: bool = True) -> Classified:
    """Writes the offline classification: learned and built-in rules, else the learned classifier, else the
    default type."""
    profile = profile_of(ctx)
    found = rule_classify(query, rules, profile) or learned_classify(
        query, {"learned": learned, "exemplars": exemplars}, profile)
    if found is None:
        found = Classification(type=default, entities=profile.names.query_entities(query), confidence=0.3, stage="default")
    return _as_fields(found)


def _from_llm(out: LLMClassification, state: State) -> Classified:
    entities = tuple(dict.fromkeys(e.strip() for e in out.entities if e.strip()))
    return _as_fields(Classification(type=out.type, entities=entities, confidence=out.confidence, stage="llm"))


classify_llm = skill(Lam("classify_llm", ProfilePrompt("classify_llm"), output=LLMClassification, reads=["query"],
                         writes=Classified, parse=_from_llm, fallback=classify_offline, max_tokens=200))
"""The LLM classifier; offline (or on failure) `classify_offline`: the rules, then the default type."""


@skill
def classify(*, default: DefaultType = "fact", rules: Rules = (), exemplars: Exemplars = (),
             learned: bool = True) -> Term:
    """Returns rules → learned classifier → LLM → default: the LLM is asked only when rules and classifier are unsure.

    ``default`` (type when nothing decides, default fact), ``rules`` (learned ``[{pattern, type}]``),
    ``exemplars`` (extra labelled ``[{query, type}]``), ``learned`` (false switches the learned classifier off).
    """
    config = {"learned": learned, "exemplars": exemplars}

    @tool
    def classify_rules(query: str, ctx: Context) -> RulesDecided:
        profile = profile_of(ctx)
        found = rule_classify(query, rules, profile)
        if found is None:
            found = learned_classify(query, config, profile)
            found = found if found is not None and found.confidence >= SURE else None
        return {"rule_classification": found}

    @tool
    def adopt_rules(rule_classification: Optional[Classification]) -> Classified:  # runs when it is set
        return _as_fields(rule_classification)

    return If(classify_rules, adopt_rules, classify_llm.configured(default=default, rules=rules, exemplars=exemplars,
                                                                   learned=learned))
