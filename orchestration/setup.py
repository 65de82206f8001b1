"""What a question needs before it runs: the config, the providers it names, the knowledge base and the run's context.

The CLI, the web app and the benches set up through these as `search()` does, so they open the same index
with the same embedder and read the same config object.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from lambdarag import Context, Trace, User
from lambdarag.providers.embedder import OpenAIEmbedder
from lambdarag.providers.llm import OpenAIChat
from lambdarag.providers.reranker import HTTPReranker, OverlapReranker
from lambdarag.skills.store.vectors import default_embedder

from .config import AgentConfig, config_path, load_config
from .folders import disabled_by_env, learns
from .knowledge import KnowledgeBase, open_knowledge
from .learning import open_learned
from .llm_budget import llm_budget
from .route_check import checked_routes
from .router import cost_model

if TYPE_CHECKING:
    from .feedback import FeedbackLoop

log = logging.getLogger(__name__)
ConfigArg = Union[AgentConfig, str, Path, None]
_CONFIGS: dict[tuple[str, int, bool], AgentConfig] = {}


def resolve_config(config: ConfigArg) -> AgentConfig:
    """Returns the config object for a path, an object, or None (the default file), cached per file version."""
    if isinstance(config, AgentConfig):
        return config
    path = config_path(config)
    key = (str(path.resolve()), path.stat().st_mtime_ns if path.is_file() else 0, config is None)
    if key not in _CONFIGS:
        config = load_config(config)   # as given: a config found in the working folder is trusted only if approved
        for route, why in checked_routes(config, str(path)):   # cost bounds and closed routes, before a question
            log.warning("%s: route %s: %s", path, route, why)
        _CONFIGS[key] = config
    return _CONFIGS[key]


def chat(config: AgentConfig) -> Optional[OpenAIChat]:
    """Returns the chat client of the config's `llm` section (its timeout included), or None when offline."""
    llm_cfg = config.llm
    key = llm_cfg.api_key()
    return chat_client(llm_cfg.base_url, llm_cfg.model or "default", key.get_secret_value() if key else None,
                       llm_cfg.timeout) if llm_cfg.base_url else None


@functools.lru_cache(maxsize=16)
def chat_client(base_url: str, model: str, api_key: Optional[str], timeout: float) -> OpenAIChat:
    """Returns one shared client per endpoint setting: a query reuses its connections instead of paying for a new
    client (and, the first time, the openai import) inside its latency."""
    return OpenAIChat(base_url, model, api_key, timeout)


@functools.lru_cache(maxsize=16)
def http_embedder(base_url: str, model: str, timeout: float) -> OpenAIEmbedder:
    """Returns one shared embedder per endpoint setting, as `chat_client` does for chat."""
    return OpenAIEmbedder(base_url, model, None, timeout)


def embedder_of(config: AgentConfig) -> Any:
    """Returns the process's one embedder for the config's `retrieval.skills.embedding` (the bundled model when it
    names no endpoint): the model loads once, and its query vectors are remembered across questions."""
    emb = config.retrieval.skills.embedding
    return http_embedder(emb.base_url, emb.model or "default", emb.timeout) if emb.base_url else default_embedder()


def providers(config: AgentConfig) -> dict[str, Any]:
    """Returns the LLM, embedder and reranker the config asks for (None LLM = offline)."""
    llm = chat(config)
    embedder = embedder_of(config)
    rr = config.retrieval.skills.rerank
    reranker = HTTPReranker(rr.base_url or "", rr.model or "", None, rr.timeout) if rr.backend == "http" \
        else OverlapReranker()
    return {"llm": llm, "embedder": embedder, "reranker": reranker}


def open_index(config: AgentConfig, index: Optional[str] = None, *, progress: bool = False) -> KnowledgeBase:
    """Returns the knowledge base `index` names (default: the configured one), opened with the config's embedder
    (built on first use, with a progress bar if asked)."""
    return open_knowledge(config, index, embedder=providers(config)["embedder"], progress=progress)


OFFLINE = "offline answer (no LLM configured)"
"""The mode a run without an LLM is in: every Lam runs its offline path, and nothing failed."""


def asked_components(config: AgentConfig) -> set[str]:
    """Returns the components (bm25, embedding, rerank, graph, wiki) some pattern of the config names in its
    ``skills`` list: those it asks for, whose being switched off is a degradation rather than a choice."""
    return {name for p in config.patterns.values() for name in p.skills}


def disabled_components(config: AgentConfig, kb: KnowledgeBase) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Returns the degradations the config or the knowledge base imposes, as fallback records, and the modes it
    chose, as records of the same shape: a component switched off is a fallback when a pattern asks for it
    (`asked_components`), else a mode; no LLM is a mode."""
    s = config.retrieval.skills
    fallbacks, modes = [], []
    what = {"embedding": "lexical retrieval only", "rerank": "fusion order kept, no rerank",
            "graph": "graph patterns search the question alone", "wiki": "wiki_deep searches the question alone",
            "bm25": "dense retrieval only"}
    asked = asked_components(config)
    for name, effect in what.items():
        if not getattr(s, name).enabled and not (name == "rerank" and s.rerank.backend == "http"):
            record = {"term": name, "path": "config", "reason": f"{name} disabled in config: {effect}"}
            (fallbacks if name in asked else modes).append(record)
    if config.llm.base_url is None:
        modes.append({"term": "llm", "path": "config", "reason": OFFLINE})
    fallbacks.extend({"term": "knowledge", "path": kb.name, "reason": note} for note in kb.notes)
    return fallbacks, modes


@dataclass(frozen=True)
class Prepared:
    """What every question of one (config, index) shares, built once (`prepared`): the config limited by the
    knowledge base, the base, its feedback loop (None when learning is off), the providers, the degradations
    and modes setup imposes, and the resources every run reads."""

    config: AgentConfig
    kb: KnowledgeBase
    loop: Optional[FeedbackLoop]
    providers: dict[str, Any]
    fallbacks: tuple[dict[str, str], ...]
    modes: tuple[dict[str, str], ...]
    resources: dict[str, Any]


def config_fingerprint(config: AgentConfig) -> str:
    """Returns a digest of everything a config says (it is frozen, so its dump is what it is)."""
    return hashlib.sha256(config.model_dump_json().encode("utf-8")).hexdigest()[:16]


_PREPARED: "OrderedDict[tuple, Prepared]" = OrderedDict()
_PREPARED_LOCK = threading.Lock()
PREPARED_KEPT = 8
"""How many (config, index) setups a process keeps (least recently used dropped first)."""


def prepared(config: AgentConfig, index: Optional[str]) -> Prepared:
    """Returns the shared setup of `config` on `index`, built by the first question that needs it (concurrent
    first questions wait for that one) and built anew when the config, the opened knowledge base or its index
    version changes, when LAMBDARAG_FEEDBACK is switched, or when the feedback store was deleted."""
    kb = open_knowledge(config, index, embedder=embedder_of(config))
    key = (config_fingerprint(config), id(kb), id(kb.index), getattr(kb.index, "version", 0), disabled_by_env())
    with _PREPARED_LOCK:
        found = _PREPARED.get(key)
        if found is not None and found.kb is kb and (found.loop is None or found.loop.store.engine.exists()):
            _PREPARED.move_to_end(key)
            return found
        found = _PREPARED[key] = build_prepared(config, kb)   # holding kb keeps its id from being reused
        while len(_PREPARED) > PREPARED_KEPT:
            _PREPARED.popitem(last=False)
        return found


def build_prepared(config: AgentConfig, kb: KnowledgeBase) -> Prepared:
    """Returns the shared setup of `config` on the opened `kb` (`prepared` keeps it)."""
    prov = providers(config)
    fallbacks, modes = disabled_components(config, kb)
    config = kb.limit(config)
    prompts = {"prompts": config.llm.prompts_by_name()} if config.llm.prompts else {}
    loop = None
    if learns(config):      # the loop's modules are imported only by a process that learns
        from .feedback import open_feedback

        loop = open_feedback(config, kb)
    return Prepared(config, kb, loop, prov, tuple(fallbacks), tuple(modes),
                    {**kb.resources(), **prompts})


@dataclass(frozen=True)
class Setup:
    """One question's setup: the config limited by its knowledge base, the base, its feedback loop (None when
    learning is off), the degradations setup imposes, the run's context (deadline not yet started), and the
    loop's learned classification rules and corrected exemplars (read once)."""

    config: AgentConfig
    kb: KnowledgeBase
    loop: Optional[FeedbackLoop]
    fallbacks: tuple[dict[str, str], ...]
    ctx: Context
    modes: tuple[dict[str, str], ...] = ()
    """What the config chose that a reader should know, none of it a failure (offline, a component not asked for)."""
    corrections: tuple[Sequence[dict], Sequence[dict]] = ((), ())
    """The learned classification rules the asking user may see and the corrected exemplars, read once."""


def set_up(config: AgentConfig, index: Optional[str], trace: Trace, query: str = "",
           user: Optional[User] = None) -> Setup:
    """Returns what a question of `user` against `index` needs: the shared setup of (config, index) (`prepared`),
    its graph and wiki brought up to every change the servers sharing its feedback store committed, what the loop
    has learned so far (synonyms, learned index, the rules that user may see: read per question,
    since answers teach), and context, with the one-time work of answering `query` done (`prepare`), when given.
    """
    shared = prepared(config, index)
    loop, kb, embedder = shared.loop, shared.kb, shared.providers["embedder"]
    learned = {}
    if loop is not None:      # what any server committed before this question is what it reads
        from .feedback.replica import follow
        from .feedback.store.rows import CHANGES, synonym_terms

        counter, terms = loop.store.read(lambda tx: (tx.counter(CHANGES), synonym_terms(tx)))   # one round trip
        follow(kb, loop.store, counter)
        learned = {"synonyms": loop.lexicon.synonyms(terms=terms), "learned": open_learned(
            loop.dir, kb.index, embedder, shared.config.orchestration.feedback.query_adapter,
            shared.config.orchestration.feedback.agreement_boost)}
    ctx = Context(**shared.providers, resources={**shared.resources, **learned},
                  llm_budget=llm_budget(shared.config), cost_model=cost_model(shared.config), trace=trace)
    corrections = loop.rules.learned(user) if loop else ((), ())
    if query:
        prepare(kb, corrections[1], embedder, query)
    return Setup(shared.config, kb, loop, shared.fallbacks, ctx, shared.modes, corrections)


def prepare(kb: KnowledgeBase, exemplars: Sequence[dict], embedder: Any, query: str) -> None:
    """Does the one-time work a process's (or data home's) first question would do, before its deadline starts:
    fit the learned classifier (with the corrected `exemplars`), load the embedding models, and build the
    tokenizer's dictionary by tokenizing `query`. Each step costs nothing once done."""
    from lambdarag.skills.classify import prepare_classifier

    profile = kb.resources()["profile"]
    prepare_classifier(profile, exemplars)
    models = ([default_embedder()] if profile.classifier.exemplars else []) + ([embedder] if kb.index.has_dense else [])
    for model in dict.fromkeys(models):
        getattr(model, "load", lambda: None)()
    kb.index.tokenizer(query)
