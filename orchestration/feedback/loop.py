"""The feedback loop: what each answered question teaches the system, stored so it can be traced and undone.

A thin loop over one part each of the knowledge base's feedback store (`store`: SQLite in
``<data home>/<index>/feedback/``, `skills.store.home`, or a shared PostgreSQL): the query log
and gap list (append-only logs), the query cache
(`cache`), learned synonyms (`lexicon`), classification rules (`rules`), routing
statistics (`routing`), the write-back journal (`journal`), the confirmed
question → chunk pairs learned retrieval is built from (`confirmations`) and the
votes on cited chunks waiting for review or applied (`votes`). What an answer teaches
depends on who asked (`asking`); what the logs and write-backs keep, on `retention`.

- ``query_log``: one record per query (rewrite, type, strategy, per-retriever
  top lists, rerank top, answer, citations, the chunk ids it cited and showed — what
  a vote may name, `votes` —, verdict, tokens, cost, latency per step, fallbacks,
  whether it came from the cache).
- ``gaps``: questions retrieval found nothing for — the wiki's to-do list.
- ``background``: one record per job the feedback worker ran after a result was
  returned (`worker`), with its trace.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import lambdarag
from lambdarag import Context, State, User
from lambdarag.state import PUBLIC
from lambdarag.skills import build as build_skill
from lambdarag.skills.check import supporting_hits
from lambdarag.skills.generate import REFUSAL
from lambdarag.skills.store.vectors import remembered_query_vector

from ..config import AgentConfig, FeedbackConfig
from ..folders import feedback_dir, learns
from ..knowledge import KnowledgeBase
from .asking import Asking, asking_source
from .cache import QueryCache, scope_of
from .confirmations import Confirmations
from .store import now, open_store
from .journal import WIKI_PAGES, WriteBackJournal
from .lexicon import Lexicon
from .replica import follow
from .retention import CACHE_ENTRY_BYTES, PRUNE_EVERY, capped, live_write_backs, prune, size
from .routing import RoutingStats
from .rules import RuleBook
from .votes import Votes, shown_chunks
from .worker import submit

MIN_SUPPORTING_SOURCES = 2
"""An answer confirms its evidence only when claims are supported from at least this many distinct documents."""
SYNTHESIS = "synthesis"
"""The query type whose answers never confirm their evidence: an overview quotes whatever was near the topic."""


def succeeded(state: State) -> bool:
    """Returns whether a run answered: it cites, does not refuse, and its citation check passed."""
    return bool(state.citations) and REFUSAL not in state.answer and state.verdict is not None \
        and state.verdict.passed


def everyone_may_read(state: State) -> bool:
    """Returns whether every chunk the answer cites is public, so that what it teaches may be shown to anyone."""
    cited = {c.chunk_id for c in state.citations}
    return all(PUBLIC.may_read(h.department, h.security_level) for h in state.hits if h.chunk_id in cited)


def open_feedback(config: AgentConfig, kb: KnowledgeBase) -> Optional["FeedbackLoop"]:
    """Returns the loop of a knowledge base, its graph and wiki brought up to what every server sharing its store
    wrote back or reverted (`replica.follow`), or None when feedback is off (config or LAMBDARAG_FEEDBACK)."""
    if not learns(config):
        return None
    llm = config.llm
    provider = f"{llm.base_url}|{llm.model or 'default'}" if llm.base_url else "offline"
    loop = FeedbackLoop(config.orchestration.feedback, feedback_dir(kb.name), kb, provider=provider)
    follow(kb, loop.store)
    return loop


class FeedbackLoop:
    """The learning stores of one knowledge base, and the one step that feeds them an answered query."""

    def __init__(self, config: FeedbackConfig, directory: Path, kb: Optional[KnowledgeBase] = None,
                 seed: str = "lambdarag", provider: str = "offline") -> None:
        self.config, self.dir, self.kb, self.provider = config, Path(directory), kb, provider
        self.store = open_store(self.dir, config.store)
        self.log = self.store.log("query_log")
        self.gaps = self.store.log("gaps")
        self.background = self.store.log("background")
        self.cache = QueryCache(self.store, config.cache_size, config.cache_after)
        self.lexicon = Lexicon(self.store)
        self.rules = RuleBook(self.store, config.min_samples)
        self.routing = RoutingStats(self.store, config, seed)
        self.journal = WriteBackJournal(self.store, config.min_sources, kb)
        self.confirmations = Confirmations(self.store)
        self.votes = Votes(self.store, config.votes, self.confirmations)
        self.asking = Asking(self.store, config.votes)

    def version(self, pipeline: str = "") -> str:
        """Returns the version cache keys carry: index + graph (from the KB) + learned rules, synonyms and
        confirmations + the LLM provider (base URL and model, or offline) + the `pipeline` answering (the
        lifecycle's fingerprint: its printed term and config, `orchestration.lifecycle.fingerprint`) + the
        release of LambdaRAG answering.

        A confirm, reject, revert or refit can re-rank any question (the term
        map, prior and gate are shared by all), so each makes every cached answer
        unreachable: the confirmations enter by their generation, a small file.
        The provider enters so enabling an LLM never serves an offline answer, and the release so an upgrade
        (whose terms print alike but answer differently) never serves the old code's answer.
        """
        parts = self.store.read(lambda tx: [self.rules.rules(everyone=True), self.lexicon.synonyms(),
                                            self.confirmations.generation()])     # one transaction
        learned = json.dumps([*parts, self.provider, pipeline, lambdarag.__version__], sort_keys=True,
                             ensure_ascii=False)
        return f"{self.kb.version() if self.kb else '-'}:{hashlib.sha1(learned.encode()).hexdigest()[:12]}"

    def record(self, result: Mapping[str, Any], state: Optional[State], llm: Any = None,
               user: Optional[User] = None, final: bool = True, embedder: Any = None, pipeline: str = ""
               ) -> dict[str, Any]:
        """Returns what was learned from one answered query after logging it and updating every store.

        `result` is the SearchResult as a dict (it gets a ``query_id``); `state`
        is the run's final state (None for a cache hit). Only rules run here: with
        an `llm`, the support check and the write-back's fact extraction run
        later in the feedback worker (``write_back: "queued"``). A result that is
        not `final` (an LLM step degraded) is never cached. The `embedder` of the run tells which query
        vectors it already embedded (`confirm_answer`); `pipeline` is the fingerprint of the lifecycle that
        answered (`version`).
        """
        query_id = result.get("query_id") or f"q{dt.datetime.now(dt.timezone.utc):%Y%m%d%H%M%S}-{uuid.uuid4().hex[:8]}"
        checked = state
        if state is not None and state.verdict is None and state.answer:
            checked = state.model_copy(update={"verdict": verdict_of(state, None)})
        ok = checked is not None and succeeded(checked)
        teaches = ok and self.asking.teaches(checked.original_query or checked.query,
                                             [c.chunk_id for c in checked.citations if c.chunk_id], user)
        learned = self.store.write(lambda tx: self.log_and_learn(query_id, result, state, checked, ok, teaches,
                                                                 user, embedder))
        for item_id in learned.pop("retire", ()):
            self.journal.revert(item_id)
        if state is None or checked is None:
            return learned
        if teaches and llm is None:
            item = self.journal.write_back(query_id, checked, None)
            if item:
                learned["write_back"] = summary(item)
        elif teaches:
            self.learn_later(query_id, state, llm)
            learned["write_back"] = "queued"
        cacheable = {k: v for k, v in result.items() if k not in ("trace", "from_cache")}
        if final and size(cacheable) <= CACHE_ENTRY_BYTES and self.store.write(lambda tx: self.cache.remember(
                result["rewritten_query"], user, {**cacheable, "query_id": query_id}, self.version(pipeline))):
            learned["cached"] = True
        return learned

    def log_and_learn(self, query_id: str, result: Mapping[str, Any], state: Optional[State],
                      checked: Optional[State], ok: bool, teaches: bool, user: Optional[User], embedder: Any
                      ) -> dict[str, Any]:
        """Returns what one query taught the stores after logging it: its gap, routing count, classification
        rule (the rule only for a trusted caller's or a teaching question), and when its caller `teaches`
        (`asking`) synonyms and confirmation. `record` runs it as one write
        transaction, so a query's log line and what it taught commit together (one commit, where a durable
        PostgreSQL pays an fsync); every `PRUNE_EVERY` records the logs are pruned to their retention and the
        write-backs past ``retention.maxWriteBacks`` are listed under ``retire`` (`record` reverts them)."""
        learned: dict[str, Any] = {"query_id": query_id}
        self.log.append(capped(log_record(query_id, result, checked, user, ok)))
        if self.store.write(lambda tx: tx.bump("appended")) % PRUNE_EVERY == 0:
            self.store.write(lambda tx: prune(tx, self.config.retention))
            learned["retire"] = live_write_backs(self.journal.items(), self.config.retention.max_write_backs)
        if state is None or checked is None:
            return learned
        if not state.hits:
            self.gaps.append({"query_id": query_id, "time": now(), "query": result["query"],
                              "type": result["query_type"], "strategy": result["strategy"],
                              "missing": list(state.missing)})
            learned["gap"] = True
        self.routing.count(result["query_type"], result["strategy"], ok, float(result["latency_ms"].get("total", 0)),
                           float(result.get("cost", 0.0)))
        if teaches or self.asking.trusted(asking_source(), user):   # an untrusted flood counts no keyword
            rule = self.rules.observe(state.query, result.get("classification", {}), (user or PUBLIC).scope())
            if rule:
                learned["rule"] = rule
        if teaches:
            if everyone_may_read(checked):     # the synonym map is shared by every user and has no scope
                self.lexicon.learn_from_answer(checked)
            self.confirm_answer(query_id, checked, user, embedder)
        return learned

    def learn_later(self, query_id: str, state: State, llm: Any) -> None:
        """Queues the LLM side of learning from `state`: its support check, then the write-back if it passed."""
        def job(ctx: Context) -> dict[str, Any]:
            checked = state if state.verdict is not None else \
                state.model_copy(update={"verdict": verdict_of(state, ctx)})
            if not checked.verdict.passed:
                return {"verdict": "failed", "write_back": None}
            item = self.journal.write_back(query_id, checked, ctx)
            return {"verdict": "passed", "write_back": item and summary(item), "fallbacks": ctx.trace.fallbacks()}

        submit(job, name="write_back", query_id=query_id, llm=llm,
               resources=self.kb.resources() if self.kb else {}, seconds=self.config.background_seconds,
               log=self.background)

    def confirm_answer(self, query_id: str, state: State, user: Optional[User],
                       embedder: Any = None) -> Optional[dict[str, Any]]:
        """Returns the confirmation, at the weaker `answer` weight, of the chunks that support a passed answer's
        claims (`skills.check.supporting_hits`) from ≥ max(2, minSources) distinct corpus sources (None below
        that, and for a synthesis answer, whose overview points pad it with what the question did not ask);
        the question's vector is stored with it when the run's `embedder` already embedded the question (the
        next query's learned index then embeds nothing)."""
        if getattr(state, "query_type", None) == SYNTHESIS:
            return None
        support = [h for h in supporting_hits(state) if h.chunk_id and not h.source.startswith(WIKI_PAGES)]
        if len({h.source for h in support}) < max(MIN_SUPPORTING_SOURCES, self.config.min_sources):
            return None
        chunks = [h.chunk_id for h in support]
        question = state.original_query or state.query
        vector = remembered_query_vector(embedder, question) if embedder is not None else None
        return self.confirmations.add("answer", [(question, chunks)], scope=scope_of(user), query_id=query_id,
                                      vectors=None if vector is None else {question: vector})

    def stats(self) -> dict[str, Any]:
        """Returns a summary: the store, queries logged, torn log lines the import of old files skipped, cache size
        and hits, routing stats, learned items, rules, synonyms, gaps."""
        live = [i for i in self.journal.items().values() if not i["reverted"]]
        queries = self.log.records()
        imported = self.store.read(lambda tx: tx.document("imported"))
        return {"store": repr(self.store), "queries": len(queries),
                "torn_log_lines": sum(imported.get("torn", {}).values()), "cache_entries": len(self.cache),
                "cache_hits": sum(1 for r in queries if r.get("from_cache")),
                "learned_items": len(live), "learned_entities": sum(len(i["entities"]) for i in live),
                "learned_relations": sum(len(i["relations"]) for i in live),
                "rules": len(self.rules.rules(everyone=True)), "synonym_terms": len(self.lexicon.synonyms()),
                "confirmed_pairs": len(self.confirmations.pairs()), "pending_votes": len(self.votes.pending()),
                "gaps": len(self.gaps), "routing": self.routing.table()}


def summary(item: Mapping[str, Any]) -> dict[str, Any]:
    """Returns what a write-back added, as reported to the caller: counts and the analysis page."""
    return {"entities": len(item["entities"]), "relations": len(item["relations"]), "analysis": item["analysis"]}


def verdict_of(state: State, ctx: Optional[Context]):
    """Returns citation_check's verdict on a finished run; every field it reads counts as given (possibly empty,
    e.g. no hits when wiki pages alone answered; a record left unset, such as the plan, takes its declared default)."""
    check = build_skill("citation_check", {})
    given = state.model_copy(update={f: value for f in check.reads() if (value := getattr(state, f, None)) is not None})
    return check.run(given, ctx or Context()).verdict


def top_list(hits: Sequence[Any], k: int) -> list[dict[str, Any]]:
    return [{"chunk_id": h.chunk_id, "source": h.source, "section": h.section, "score": round(float(h.score), 6)}
            for h in hits[:k]]


def log_record(query_id: str, result: Mapping[str, Any], state: Optional[State], user: Optional[User],
               ok: bool) -> dict[str, Any]:
    """Returns the query-log record of one query (the observability record of the design)."""
    trace = result.get("trace") or {}
    record = {"query_id": query_id, "time": now(), "query": result["query"],
              "rewritten_query": result["rewritten_query"], "type": result["query_type"],
              "classified_by": result.get("classification", {}).get("stage"), "strategy": result["strategy"],
              "route_reason": result.get("route_reason"),
              "index": result.get("index"), "scope": scope_of(user), "from_cache": bool(result.get("from_cache")),
              "answer": result["answer"], "citations": [c.get("source") for c in result.get("citations", [])],
              **dict(zip(("cited_chunks", "shown_chunks"), shown_chunks(result))),
              "success": ok, "cost": result.get("cost", 0.0), "tokens": trace.get("tokens", 0),
              "latency_ms": result.get("latency_ms", {}), "fallbacks": result.get("fallbacks", [])}
    if state is not None:
        record["variants"] = [{"kind": v.kind, "text": v.text} for v in state.variants]
        record["retrieval"] = {f"{c.retriever}_top10:{c.query}": top_list(c.hits, 10) for c in state.candidates}
        record["rerank_top5"] = top_list(state.hits, 5)
        record["verdict"] = state.verdict.model_dump() if state.verdict else None
    return record
