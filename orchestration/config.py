"""The schema of `agent-config.yml`: unknown keys and bad values fail with their YAML path and line.

Keys are camelCase in YAML (as in the original design) and snake_case in
Python. Pattern names are checked against the pattern registry, so the list of
valid choices is never written twice. Endpoints and keys may come from the
environment; secrets are never echoed back (`SecretStr`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Optional, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from lambdarag.errors import ConfigError

from .plan import PlanConfig

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = ROOT / "agent-config.yml"
QUERY_TYPES = ("fact", "compare", "relation", "synthesis", "temporal")


def known_pattern(name: str) -> str:
    """Returns `name` if it is a registered pattern, else fails listing the registered ones."""
    from patterns import REGISTRY

    if name not in REGISTRY:
        raise ValueError(f"unknown pattern {name!r}; valid patterns: {', '.join(sorted(REGISTRY))}")
    return name


class Section(BaseModel):
    """Base of every config section: camelCase aliases, unknown keys rejected, frozen."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class Endpoint(Section):
    """An OpenAI-compatible endpoint; the key is read from the environment variable `api_key_env`."""

    base_url: Optional[str] = None
    model: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = Field(30.0, gt=0)

    def api_key(self) -> Optional[SecretStr]:
        value = os.environ.get(self.api_key_env)
        return SecretStr(value) if value else None


class Toggle(Section):
    """A component that can be switched off; the system degrades instead of failing."""

    enabled: bool = True


class EmbeddingConfig(Endpoint):
    enabled: bool = True
    batch_size: int = Field(32, ge=1, le=1024)


class RerankConfig(Endpoint):
    enabled: bool = True
    backend: Literal["local", "http"] = "local"


class WikiConfig(Toggle):
    """Where the default index's compiled wiki (entities/, analyses/, relations.json) lives."""

    dir: str = "wiki/"


class SkillsConfig(Section):
    bm25: Toggle = Toggle()
    embedding: EmbeddingConfig = EmbeddingConfig()
    rerank: RerankConfig = RerankConfig()
    graph: Toggle = Toggle()
    wiki: WikiConfig = WikiConfig()


class BackendConfig(Section):
    kind: Literal["local", "milvus"] = "local"
    uri: Optional[str] = None


class RetrievalConfig(Section):
    index: str = "demo"
    corpus: str = "knowledge/demo/docs"
    domain: str = "auto"
    """The corpus profile (skills.profile): auto (chosen from the documents when the index is built), generic,
    prc_statutes, or package.module:Factory for your own."""
    backend: BackendConfig = BackendConfig()
    skills: SkillsConfig = SkillsConfig()

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, value: str) -> str:
        from skills.profile import SHIPPED

        if value != "auto" and value not in SHIPPED and ":" not in value:
            raise ValueError(f"retrieval.domain must be auto, {', '.join(SHIPPED)} or package.module:Factory, "
                             f"got {value!r}")
        return value


class PatternConfig(Section):
    """Parameters of one pattern; which keys a pattern reads is documented in its module."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True)
    skills: tuple[str, ...] = ()
    merge: Literal["rrf", "score"] = "score"  # z-score fusion: best measured (bench/results/strategies-dev.json)
    rrf_k: int = Field(60, ge=1)
    query_expansion: bool = True
    expansion_count: int = Field(3, ge=0, le=10)
    gap_fill: bool = True
    weights: dict[str, float] = {}


class ClassifierConfig(Section):
    fast_classify: bool = True
    llm_fallback: bool = True
    default: Literal[QUERY_TYPES] = "fact"  # type: ignore[valid-type]


Targets = Union[str, tuple[str, ...]]


class RoutingConfig(Section):
    """Query type → pattern (or a list of patterns that fan out and merge)."""

    fact: Targets = "keyword_search"
    compare: Targets = ("graph_retrieval", "fusion_search")
    relation: Targets = ("graph_retrieval", "wiki_deep")
    synthesis: Targets = "synthesis"
    temporal: Targets = "temporal_search"
    default: str = "hybrid_search"
    adaptive: bool = True

    def targets(self, query_type: str) -> tuple[str, ...]:
        value = getattr(self, query_type, None) or self.default
        return (value,) if isinstance(value, str) else tuple(value)

    @field_validator(*QUERY_TYPES, "default")
    @classmethod
    def _known_patterns(cls, value: Targets) -> Targets:
        for name in (value,) if isinstance(value, str) else value:
            known_pattern(name)
        return value


class FeedbackConfig(Section):
    enabled: bool = True
    min_sources: int = Field(2, ge=1)
    cache_after: int = Field(2, ge=1)
    cache_size: int = Field(1000, ge=1)
    explore: float = Field(0.1, ge=0, le=1)
    min_samples: int = Field(5, ge=1)
    background_seconds: float = Field(120.0, gt=0)
    """Time limit of the LLM work (write-back fact extraction) run after a query's result is returned."""


class OrchestrationConfig(Section):
    classifier: ClassifierConfig = ClassifierConfig()
    routing: RoutingConfig = RoutingConfig()
    feedback: FeedbackConfig = FeedbackConfig()
    plan: PlanConfig = PlanConfig()


class CostConfig(Section):
    budget_per_query: float = Field(0.05, ge=0)
    fallback: str = "keyword_search"
    per_effect: dict[str, float] = {"pure": 0.0, "io": 0.0, "llm": 0.002}
    per_term: dict[str, float] = {"embedding_search": 0.0001}
    per1k_tokens: float = Field(0.0, ge=0)

    @field_validator("fallback")
    @classmethod
    def _known_fallback(cls, name: str) -> str:
        return known_pattern(name)


PRIORITY_CLASSES = ("answer", "classification", "expansion", "extraction")


class RouteBudget(Section):
    """A query type's own LLM budget (unset keys: the general budget's)."""

    max_calls: Optional[int] = Field(None, ge=0)
    time_share: Optional[float] = Field(None, ge=0, le=1)


class LLMBudgetConfig(Section):
    """What one query's LLM calls may spend (`lambdarag.budget`): calls, a share of limits.timeoutSeconds, and
    each priority class's share of that time (the answer's is kept for it until it runs)."""

    max_calls: int = Field(4, ge=0)
    time_share: float = Field(0.75, ge=0, le=1)
    shares: dict[Literal[PRIORITY_CLASSES], float] = {  # type: ignore[valid-type]
        "answer": 0.5, "classification": 0.2, "expansion": 0.2, "extraction": 0.1}
    priorities: dict[str, Literal[PRIORITY_CLASSES]] = {  # type: ignore[valid-type]
        "answer_generate": "answer", "classify_llm": "classification", "query_expand": "expansion",
        "sufficient": "expansion", "missing_topics": "expansion", "entity_extract": "extraction",
        "citation_check": "extraction", "fact_extract": "extraction"}
    min_call_seconds: float = Field(2.0, ge=0)
    routes: dict[Literal[QUERY_TYPES], RouteBudget] = {}  # type: ignore[valid-type]


class LLMConfig(Endpoint):
    """The chat endpoint, the model's context window in tokens, and the per-query LLM budget.

    `tokensPerChar` overrides the family table's tokens per Chinese character
    (`lambdarag.providers.tokens`) for a model it does not know.
    """

    context_tokens: int = Field(8192, ge=512)
    tokens_per_char: Optional[float] = Field(None, gt=0)
    budget: LLMBudgetConfig = LLMBudgetConfig()


class LimitsConfig(Section):
    max_query_chars: int = Field(2000, ge=1)
    max_history_chars: int = Field(20000, ge=0)
    timeout_seconds: float = Field(60.0, gt=0)


class AgentConfig(Section):
    """The whole of `agent-config.yml`."""

    retrieval: RetrievalConfig = RetrievalConfig()
    patterns: dict[str, PatternConfig] = {}
    orchestration: OrchestrationConfig = OrchestrationConfig()
    cost: CostConfig = CostConfig()
    llm: LLMConfig = LLMConfig()
    limits: LimitsConfig = LimitsConfig()

    @field_validator("patterns")
    @classmethod
    def _known_pattern_sections(cls, value: dict[str, PatternConfig]) -> dict[str, PatternConfig]:
        for name in value:
            known_pattern(name)
        return value

    def pattern(self, name: str) -> PatternConfig:
        """Returns the parameters of a pattern (defaults when the YAML has none)."""
        return self.patterns.get(name, PatternConfig())

    def with_env(self) -> "AgentConfig":
        """Returns the config with endpoints overridden by LAMBDARAG_* environment variables."""
        llm = self.llm.model_copy(update={k: v for k, v in {
            "base_url": os.environ.get("LAMBDARAG_LLM_BASE_URL"),
            "model": os.environ.get("LAMBDARAG_LLM_MODEL")}.items() if v})
        return self.model_copy(update={"llm": llm})


def _line_of(text: str, loc: tuple[Any, ...]) -> Optional[int]:
    """Returns the 1-based YAML line of the node at `loc`, if it can be found."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == str(key)), None)
            if match is None:
                match = next((k for k, _ in node.value if k.value == str(key)), None)
                return match.start_mark.line + 1 if match else node.start_mark.line + 1
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
    return node.start_mark.line + 1 if node is not None else None


def parse_config(text: str, source: str = "<string>") -> AgentConfig:
    """Returns the validated config in `text`, or raises `ConfigError` with YAML path, line and fix."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{source}:{where} is not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping, got {type(data).__name__}")
    try:
        return AgentConfig.model_validate(data).with_env()
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "literal["))))
        path = ".".join(str(p) for p in loc)
        line = _line_of(text, loc)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = f"unknown key {loc[-1]!r}"
        more = f" (and {len(e.errors()) - 1} more problems)" if len(e.errors()) > 1 else ""
        raise ConfigError(f"{source}:{f' line {line}:' if line else ''} {path}: {msg}{more}") from None


def config_path(path: Union[str, Path, None] = None) -> Path:
    """Returns `path`, else $LAMBDARAG_CONFIG, else the repo's agent-config.yml."""
    return Path(path or os.environ.get("LAMBDARAG_CONFIG") or DEFAULT_CONFIG)


def load_config(path: Union[str, Path, None] = None) -> AgentConfig:
    """Returns the config at `path` (default: see `config_path`)."""
    path = config_path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    return parse_config(path.read_text(encoding="utf-8"), str(path))


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        kind = field.annotation
        sub = kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None
        if sub is not None:
            rows.extend(_rows(sub, key + "."))
            continue
        default = field.get_default(call_default_factory=True)
        shown = json_default(default)
        type_name = kind.__name__ if isinstance(kind, type) else str(kind).replace("typing.", "")
        rows.append(f"| `{key}` | {type_name} | `{shown}` |")
    return rows


def json_default(value: Any) -> str:
    """Returns a default value as it would be written in YAML, compactly."""
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True)
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1000).strip()
    return text.removesuffix("\n...").removesuffix(" ...").replace("|", "\\|")


def reference() -> str:
    """Returns the configuration reference (every key, its type and default) as a markdown table."""
    return "\n".join(["| key | type | default |", "|---|---|---|", *_rows(AgentConfig, "")])


if __name__ == "__main__":
    print(reference())
