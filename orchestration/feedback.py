"""The feedback loop: what each answered question teaches the system, stored so it can be traced and undone.

Stores (``knowledge/<index>/feedback/``, relocated with LAMBDARAG_HOME; see
`orchestration.stores` for the write discipline):

- ``query_log.jsonl``: one record per query (rewrite, type, strategy, per-retriever
  top lists, rerank top, answer, citations, verdict, tokens, cost, latency per step,
  fallbacks, whether it came from the cache).
- ``query_cache.json``: answers of hot queries. A key is the normalised query,
  the asker's permission scope (departments + security level, never the user id)
  and the knowledge version (index fingerprint + relations.json + learned rules and
  synonyms), so a write-back, a re-index or a new rule makes old entries unreachable,
  and a user never gets an answer cached for a different scope. An answer is cached
  once its key has been answered ``cacheAfter`` times; at most ``cacheSize`` entries,
  least recently used dropped first.
- ``routing_stats.json``: per query type × strategy: total, successes (the answer
  cites and passes citation_check), summed latency and cost.
- ``synonym_map.json``: term → {synonym: evidence count}, learned from labelled
  query–document pairs (`SynonymLearner`, ``lambdarag feedback learn --qrels``) and
  from query variants whose retrieval found a chunk a passed answer cites (the words
  the variant swapped). `query_expand` reads it as ``ctx.resources["synonyms"]``;
  `skills.lexical.expand_tokens` appends it to BM25 query tokens inside `bm25_search`.
- ``classification_rules.json``: learned ``{pattern, type}`` rules from corrections
  and from agreeing LLM classifications; the classify skill tries them first.
- ``learned.json``: every write-back (entities, relations, pages, analysis) keyed by
  query id with its provenance, so ``lambdarag feedback revert <id>`` can undo it.
- ``gaps.jsonl``: questions retrieval found nothing for — the wiki's to-do list.

Write-back (`write_back`) needs a passed citation check over ``minSources``
distinct cited corpus documents (cited wiki pages do not count); it adds only
facts the graph lacks, through `EntityGraph.add_entity/add_relation` with
``origin="feedback"``, re-renders the touched entity pages and writes
``wiki/analyses/<hash>.md``, all under one lock per wiki. `revert` removes by
provenance and re-renders, which restores relations.json and the pages byte for
byte when nothing else changed them meanwhile.

Adaptive routing. Candidates of a type are its configured strategy (a fan-out when
several patterns are listed) and, for a fan-out, each pattern alone
(`router.candidates`). With ``u`` = a hash of (seed, query, type) mapped to [0, 1):
if ``u < explore`` the least-tried candidate runs ("explore"); otherwise, once every
candidate has ``minSamples`` runs, the best score wins, where
``score = 0.7·success_rate + 0.2·(fastest mean latency / mean latency)
+ 0.1·(cheapest mean cost / mean cost)`` (a cost term of 1 when costs are 0);
otherwise the configured strategy runs. The same query always routes the same way
for the same statistics, so tests are reproducible.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import unicodedata
import uuid
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from lambdarag import Context, State, User
from lambdarag.errors import LambdaRAGError
from skills import build as build_skill
from skills.generate import REFUSAL
from skills.graph import EntityGraph, EntityRecord, Label, RelationRecord
from skills.sentences import keywords
from skills.wiki import WikiStore, page_file, render_page, write_atomic_text

from .config import QUERY_TYPES, AgentConfig, FeedbackConfig
from .knowledge import KnowledgeBase
from .router import candidates
from .stores import JsonlLog, JsonStore, lock_for

EXTRACTOR_CONFIDENCE = {"rule": 0.6, "llm": 0.5}
"""Confidence of a learned relation by extractor: below compiled facts (1.0), so graph walks prefer those."""
WEIGHTS = (0.7, 0.2, 0.1)   # success, speed, cost in the routing score (see the module docstring)
SYNONYMS_PER_TERM = 3
RULE_AGREEMENT = 0.9        # share of LLM classifications of a keyword that must agree before it becomes a rule
OFF = ("0", "off", "false", "no")
WIKI_PAGES = ("entities/", "analyses/")     # citation sources that are wiki pages, not corpus documents
LAW_TITLE = re.compile(r"(?:法|条例|规定|办法|细则|公约|解释|决定)$")
FUNCTION_WORDS = frozenset("由 都 对 在 将 被 和 与 及 规定 应当 负责 依照 根据 依法 实施".split())


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def normalise(query: str) -> str:
    """Returns the cache form of a query: NFKC, lower case, single spaces, no trailing punctuation."""
    text = unicodedata.normalize("NFKC", query).lower()
    return re.sub(r"\s+", " ", text).strip().rstrip("?？。.!！ ")


def scope_of(user: Optional[User]) -> str:
    """Returns the permission scope of a user: what they may read decides which answers they may share."""
    user = user or User()
    return f"{','.join(sorted(user.departments))}|{user.security_level}"


def unit_hash(*parts: str) -> float:
    """Returns a number in [0, 1) fixed by `parts` (deterministic exploration)."""
    digest = hashlib.sha1("\0".join(parts).encode("utf-8")).hexdigest()
    return int(digest[:12], 16) / float(16 ** 12)


def cited_sources(state: State) -> tuple[str, ...]:
    """Returns the corpus documents an answer cites; cited wiki pages are compiled from them and do not count."""
    return tuple(dict.fromkeys(c.source for c in state.citations if c.source and not c.source.startswith(WIKI_PAGES)))


def succeeded(state: State) -> bool:
    """Returns whether a run answered: it cites, does not refuse, and its citation check passed."""
    return bool(state.citations) and REFUSAL not in state.answer and state.verdict is not None \
        and state.verdict.passed


def disabled_by_env() -> bool:
    """Returns whether LAMBDARAG_FEEDBACK switches learning off for this process (e.g. a test run)."""
    return os.environ.get("LAMBDARAG_FEEDBACK", "").strip().lower() in OFF


def feedback_dir(kb_name: str) -> Path:
    from skills.index import knowledge_root

    return knowledge_root() / kb_name / "feedback"


def open_feedback(config: AgentConfig, kb: KnowledgeBase) -> Optional["FeedbackLoop"]:
    """Returns the loop of a knowledge base, or None when feedback is off (config or LAMBDARAG_FEEDBACK)."""
    if not config.orchestration.feedback.enabled or disabled_by_env():
        return None
    return FeedbackLoop(config.orchestration.feedback, feedback_dir(kb.name), kb)


class FeedbackLoop:
    """The learning stores of one knowledge base and the steps that read and update them."""

    def __init__(self, config: FeedbackConfig, directory: Path, kb: Optional[KnowledgeBase] = None,
                 seed: str = "lambdarag") -> None:
        self.config, self.dir, self.kb, self.seed = config, Path(directory), kb, seed
        self.log = JsonlLog(self.dir / "query_log.jsonl")
        self.gaps = JsonlLog(self.dir / "gaps.jsonl")
        self.cache = JsonStore(self.dir / "query_cache.json")
        self.routing = JsonStore(self.dir / "routing_stats.json")
        self.synonym_store = JsonStore(self.dir / "synonym_map.json")
        self.rule_store = JsonStore(self.dir / "classification_rules.json")
        self.learned = JsonStore(self.dir / "learned.json")

    # -- cache ------------------------------------------------------------------
    def version(self) -> str:
        """Returns the knowledge version cache keys carry: index + graph (from the KB) + learned rules and synonyms."""
        learned = json.dumps([self.classification_rules(), self.synonyms()], sort_keys=True, ensure_ascii=False)
        return f"{self.kb.version() if self.kb else '-'}:{hashlib.sha1(learned.encode()).hexdigest()[:12]}"

    def key(self, query: str, user: Optional[User], version: Optional[str] = None) -> str:
        raw = "\0".join((normalise(query), scope_of(user), version or self.version()))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]

    def cached(self, query: str, user: Optional[User], version: Optional[str] = None) -> Optional[dict[str, Any]]:
        """Returns the cached result for this query, scope and version, or None (a hit refreshes its recency)."""
        key = self.key(query, user, version)
        entry = self.cache.read().get("entries", {}).get(key)
        if entry is None:
            return None

        def touch(data: dict) -> None:
            if key in data.get("entries", {}):
                data["entries"][key]["used"] = now()
                data["entries"][key]["hits"] = data["entries"][key].get("hits", 0) + 1
        self.cache.update(touch)
        return entry["result"]

    def remember(self, query: str, user: Optional[User], result: Mapping[str, Any],
                 version: Optional[str] = None) -> bool:
        """Counts one answer of this key and caches `result` once the count reaches cacheAfter; returns whether cached."""
        key, version = self.key(query, user, version), version or self.version()
        size, after = self.config.cache_size, self.config.cache_after
        stored = {"value": False}

        def change(data: dict) -> None:
            counts = OrderedDict(data.get("counts", {}))
            counts[key] = counts.pop(key, 0) + 1
            while len(counts) > 10 * size:
                counts.popitem(last=False)
            entries = {k: e for k, e in data.get("entries", {}).items() if e.get("version") == version}
            if counts[key] >= after:
                entries[key] = {"query": normalise(query), "scope": scope_of(user), "version": version,
                                "used": now(), "hits": 0, "result": dict(result)}
                stored["value"] = True
            order = sorted(entries, key=lambda k: entries[k]["used"])
            for k in order[:max(0, len(entries) - size)]:
                del entries[k]
            data["counts"], data["entries"] = dict(counts), entries
        self.cache.update(change)
        return stored["value"]

    # -- learned resources ----------------------------------------------------------
    def synonyms(self, min_count: int = 1) -> dict[str, list[str]]:
        """Returns the learned synonym map term → [synonyms], strongest first (what `query_expand` reads)."""
        terms = self.synonym_store.read().get("terms", {})
        out = {}
        for term, alts in terms.items():
            kept = [a for a, n in sorted(alts.items(), key=lambda x: (-x[1], x[0])) if n >= min_count]
            if kept:
                out[term] = kept[:SYNONYMS_PER_TERM]
        return out

    def classification_rules(self) -> list[dict[str, str]]:
        """Returns the learned classification rules as the classify skill takes them: [{pattern, type}]."""
        return [{"pattern": r["pattern"], "type": r["type"]} for r in self.rule_store.read().get("rules", [])]

    def add_synonyms(self, pairs: Mapping[str, Mapping[str, int]], origin: str) -> int:
        """Adds evidence counts term → {synonym: n}; returns how many (term, synonym) pairs changed."""
        changed = {"n": 0}

        def change(data: dict) -> None:
            terms = data.setdefault("terms", {})
            for term, alts in pairs.items():
                for alt, n in alts.items():
                    if alt != term and n > 0:
                        bucket = terms.setdefault(term, {})
                        bucket[alt] = bucket.get(alt, 0) + int(n)
                        changed["n"] += 1
            data.setdefault("origins", {})[origin] = data.get("origins", {}).get(origin, 0) + changed["n"]
            data["updated"] = now()
        self.synonym_store.update(change)
        return changed["n"]

    def classification_exemplars(self) -> list[dict[str, str]]:
        """Returns the corrected questions as labelled exemplars for the learned classifier: [{query, type}]."""
        return [{"query": r["query"], "type": r["type"]} for r in self.rule_store.read().get("rules", [])
                if r.get("origin") == "correction"]

    def correct(self, query: str, query_type: str, pattern: Optional[str] = None) -> dict[str, str]:
        """Returns the rule learned from a correction: `pattern` (default: the query itself) → `query_type`.

        The corrected question also becomes an exemplar of the learned classifier, so similar questions follow it.
        """
        from skills.classify import learned_rule

        rule = {"pattern": pattern or re.escape(query.strip().rstrip("?？。!！ ")), "type": query_type}
        learned_rule(rule)   # fails on a bad type or regex before anything is stored
        self._add_rule({**rule, "origin": "correction", "query": query, "time": now()})
        return rule

    def _add_rule(self, rule: dict[str, Any]) -> None:
        def change(data: dict) -> None:
            rules = [r for r in data.get("rules", []) if r["pattern"] != rule["pattern"]]
            data["rules"] = [rule] + rules     # newest first: a later correction overrides an earlier one
        self.rule_store.update(change)

    def observe_classification(self, query: str, classification: Mapping[str, Any]) -> Optional[dict[str, str]]:
        """Counts an LLM classification per query keyword; returns the rule learned once one keyword agrees enough."""
        if classification.get("stage") != "llm":
            return None
        kind, words = classification.get("type"), keywords(query)
        learned: dict[str, Optional[dict]] = {"rule": None}
        need = self.config.min_samples

        def change(data: dict) -> None:
            seen = data.setdefault("observations", {})
            have = {r["pattern"] for r in data.get("rules", [])}
            for w in words:
                counts = seen.setdefault(w, {})
                counts[kind] = counts.get(kind, 0) + 1
                total, top = sum(counts.values()), counts[kind]
                pattern = re.escape(w)
                if top >= need and top / total >= RULE_AGREEMENT and pattern not in have and learned["rule"] is None:
                    rule = {"pattern": pattern, "type": kind, "origin": "llm", "query": query, "time": now(),
                            "evidence": top}
                    data["rules"] = data.get("rules", []) + [rule]
                    learned["rule"] = rule
        self.rule_store.update(change)
        return learned["rule"]

    # -- routing ---------------------------------------------------------------------
    def route_picks(self, config: AgentConfig, query: str) -> dict[str, tuple[tuple[str, ...], str]]:
        """Returns, per query type with several candidates, the strategies to run for `query` and why."""
        if not config.orchestration.routing.adaptive:
            return {}
        stats = self.routing.read().get("types", {})
        picks = {}
        for query_type in QUERY_TYPES:
            options = candidates(config, query_type)
            if len(options) > 1:
                picks[query_type] = self.pick(query_type, options, stats.get(query_type, {}), query)
        return picks

    def pick(self, query_type: str, options: Sequence[tuple[str, ...]], stats: Mapping[str, Mapping[str, float]],
             query: str) -> tuple[tuple[str, ...], str]:
        """Returns (strategy, reason) for one type by the rule in the module docstring."""
        runs = {o: stats.get("+".join(o), {}) for o in options}
        if unit_hash(self.seed, query, query_type) < self.config.explore:
            least = min(options, key=lambda o: runs[o].get("total", 0))
            return least, f"adaptive: explore ({runs[least].get('total', 0)} runs so far)"
        if any(runs[o].get("total", 0) < self.config.min_samples for o in options):
            return options[0], f"configured: fewer than minSamples={self.config.min_samples} runs of some candidate"
        scores = routing_scores(runs)
        best = max(options, key=lambda o: (scores[o], -options.index(o)))
        return best, "adaptive: " + ", ".join(f"{'+'.join(o)}={scores[o]:.3f}" for o in options)

    def _count_route(self, query_type: str, strategy: str, ok: bool, latency: float, cost: float) -> None:
        def change(data: dict) -> None:
            entry = data.setdefault("types", {}).setdefault(query_type, {}).setdefault(
                strategy, {"total": 0, "success": 0, "latency_ms": 0.0, "cost": 0.0})
            entry["total"] += 1
            entry["success"] += int(ok)
            entry["latency_ms"] += latency
            entry["cost"] += cost
            data["updated"] = now()
        self.routing.update(change)

    # -- recording ---------------------------------------------------------------------
    def record(self, result: Mapping[str, Any], state: Optional[State], ctx: Optional[Context],
               user: Optional[User] = None) -> dict[str, Any]:
        """Returns what was learned from one answered query after logging it and updating every store.

        `result` is the SearchResult as a dict (it gets a ``query_id``); `state`
        and `ctx` are the run's final state and context (None for a cache hit).
        """
        query_id = result.get("query_id") or f"q{dt.datetime.now(dt.timezone.utc):%Y%m%d%H%M%S}-{uuid.uuid4().hex[:8]}"
        learned: dict[str, Any] = {"query_id": query_id}
        if state is not None and state.verdict is None and state.answer:
            state = state.model_copy(update={"verdict": verdict_of(state, ctx)})
        ok = state is not None and succeeded(state)
        self.log.append(log_record(query_id, result, state, user, ok))
        if state is None:
            return learned
        if not state.hits:
            self.gaps.append({"query_id": query_id, "time": now(), "query": result["query"],
                              "type": result["query_type"], "strategy": result["strategy"],
                              "missing": list(state.missing)})
            learned["gap"] = True
        self._count_route(result["query_type"], result["strategy"], ok, float(result["latency_ms"].get("total", 0)),
                          float(result.get("cost", 0.0)))
        rule = self.observe_classification(state.query, result.get("classification", {}))
        if rule:
            learned["rule"] = rule
        if ok:
            self._learn_from_answer(state)
            item = self.write_back(query_id, state, ctx)
            if item:
                learned["write_back"] = {"entities": len(item["entities"]), "relations": len(item["relations"]),
                                         "analysis": item["analysis"]}
        cacheable = {k: v for k, v in result.items() if k not in ("trace", "from_cache")}
        if self.remember(result["rewritten_query"], user, {**cacheable, "query_id": query_id}):
            learned["cached"] = True
        return learned

    def _learn_from_answer(self, state: State) -> None:
        """Learns synonyms from the query variants whose retrieval found a chunk the (passed) answer cites."""
        cited = {c.chunk_id for c in state.citations}
        original = state.original_query or state.query
        pairs: dict[str, dict[str, int]] = {}
        for ranked in state.candidates:
            if ranked.query != original and cited & {h.chunk_id for h in ranked.hits}:
                for term, alts in variant_pairs(original, ranked.query).items():
                    pairs.setdefault(term, {}).update(alts)
        if pairs:
            self.add_synonyms(pairs, "answers")

    # -- write-back -------------------------------------------------------------------
    def write_back(self, query_id: str, state: State, ctx: Optional[Context]) -> Optional[dict[str, Any]]:
        """Returns the learned item after writing an answer's new facts into the graph and wiki, or None.

        Runs only for a passed citation check over at least ``minSources`` distinct
        cited sources; every entity and relation carries the provenance
        (query id, cited sources, time, extractor, confidence).
        """
        kb = self.kb
        sources = cited_sources(state)
        if kb is None or kb.graph is None or kb.wiki_dir is None or len(sources) < self.config.min_sources \
                or state.verdict is None or not state.verdict.passed:
            return None
        facts = build_skill("fact_extract", {}).run(state, ctx or Context(resources=kb.resources())).facts
        wiki_dir: Path = kb.wiki_dir
        analysis = wiki_dir / "analyses" / f"{hashlib.sha1(normalise(state.query).encode()).hexdigest()[:12]}.md"
        labels = {h.source: Label(department=h.department, security_level=h.security_level) for h in state.hits}
        prov = {"query_id": query_id, "query": state.original_query or state.query, "sources": list(sources),
                "time": now(), "extractor": f"fact_extract/{facts.origin}",
                "confidence": EXTRACTOR_CONFIDENCE.get(facts.origin, 0.5)}
        with lock_for(wiki_dir / "feedback"):
            graph = kb.graph
            entities, relations = self._add_facts(graph, facts, prov, labels)
            created = not analysis.exists()
            if not (entities or relations or created):
                return None
            if entities or relations:     # an unchanged graph keeps its file, so cache keys stay valid
                graph.save(wiki_dir / "relations.json")
            pages = sorted({*entities, *(e for r in relations for e in (r["head"], r["tail"]))})
            for name in pages:
                render_into(graph, wiki_dir, name)
            if created:
                write_atomic_text(analysis, analysis_page(state, prov, labels, relations))
            kb.wiki = WikiStore(wiki_dir)
        item = {"id": query_id, "query": prov["query"], "time": prov["time"], "sources": list(sources),
                "extractor": prov["extractor"], "confidence": prov["confidence"], "entities": entities,
                "relations": relations, "pages": [page_file(n) for n in pages],
                "analysis": analysis.relative_to(wiki_dir).as_posix() if created else None,
                "wiki_dir": str(wiki_dir), "reverted": False}
        self.learned.update(lambda data: data.setdefault("items", {}).__setitem__(query_id, item))
        return item

    @staticmethod
    def _add_facts(graph: EntityGraph, facts: Any, prov: dict[str, Any],
                   labels: Mapping[str, Label]) -> tuple[list[str], list[dict[str, Any]]]:
        """Adds the facts the graph does not hold yet; returns the new entity names and relation records."""
        def entity(name: str, sources: Iterable[str]) -> Optional[str]:
            if graph.resolve(name) is not None or noisy(graph, name):
                return None
            graph.add_entity(EntityRecord(name=name, origin="feedback", provenance=prov, wiki_page=page_file(name),
                                          sources={s: labels.get(s, Label()) for s in sources}))
            return name

        entities = [n for n in (entity(e, prov["sources"]) for e in facts.entities) if n]
        relations = []
        for r in facts.relations:
            if r.source not in prov["sources"]:      # learned only from cited corpus documents, never from wiki pages
                continue
            head, tail = (graph.resolve(x) or x for x in (r.head, r.tail))
            if head == tail or any(x.relation == r.relation and x.tail == tail for x in graph.neighbors(head)):
                continue
            entities += [n for n in (entity(x, [r.source]) for x in (head, tail)) if n]
            label = labels.get(r.source, Label())
            rec = graph.add_relation(RelationRecord(
                head=head, relation=r.relation, tail=tail, source=r.source, section=r.section,
                description=r.description, origin="feedback", confidence=min(r.confidence, prov["confidence"]),
                provenance=prov, department=label.department, security_level=label.security_level))
            relations.append(rec.model_dump())
        return list(dict.fromkeys(entities)), relations

    # -- inspecting and reverting --------------------------------------------------------
    def items(self) -> dict[str, dict[str, Any]]:
        """Returns every learned item by id (reverted ones included, marked)."""
        return self.learned.read().get("items", {})

    def item(self, item_id: str) -> dict[str, Any]:
        items = self.items()
        if item_id not in items:
            raise LambdaRAGError(f"feedback: no learned item {item_id!r}; known: {', '.join(sorted(items)) or 'none'}")
        return items[item_id]

    def revert(self, item_id: str) -> dict[str, Any]:
        """Returns the reverted item after removing its facts from the graph and its pages from the wiki."""
        item = self.item(item_id)
        if item["reverted"]:
            raise LambdaRAGError(f"feedback revert: item {item_id!r} was already reverted")
        wiki_dir = Path(item["wiki_dir"])
        with lock_for(wiki_dir / "feedback"):
            graph = self.kb.graph if self.kb and self.kb.wiki_dir == wiki_dir and self.kb.graph is not None \
                else EntityGraph.load(wiki_dir / "relations.json")
            removed = graph.remove_by_provenance(query_id=item_id)
            graph.save(wiki_dir / "relations.json")
            for name in {*item["entities"], *(e for r in item["relations"] for e in (r["head"], r["tail"]))}:
                render_into(graph, wiki_dir, name)
            if item["analysis"] and (wiki_dir / item["analysis"]).exists():
                (wiki_dir / item["analysis"]).unlink()
            if self.kb is not None and self.kb.wiki_dir == wiki_dir:
                self.kb.wiki = WikiStore(wiki_dir)
        self.learned.update(lambda data: data["items"][item_id].update(reverted=True, reverted_at=now(),
                                                                        removed=removed))
        return self.item(item_id)

    def stats(self) -> dict[str, Any]:
        """Returns a summary: queries logged, cache size and hits, routing stats, learned items, rules, synonyms, gaps."""
        cache = self.cache.read()
        items = self.items()
        live = [i for i in items.values() if not i["reverted"]]
        return {"queries": sum(1 for _ in self.log), "cache_entries": len(cache.get("entries", {})),
                "cache_hits": sum(1 for r in self.log if r.get("from_cache")),
                "learned_items": len(live), "learned_entities": sum(len(i["entities"]) for i in live),
                "learned_relations": sum(len(i["relations"]) for i in live),
                "rules": len(self.classification_rules()), "synonym_terms": len(self.synonyms()),
                "gaps": sum(1 for _ in self.gaps), "routing": self.routing.read().get("types", {})}


def routing_scores(runs: Mapping[tuple[str, ...], Mapping[str, float]]) -> dict[tuple[str, ...], float]:
    """Returns the routing score of each candidate (weights in `WEIGHTS`; see the module docstring)."""
    mean = {o: (r["latency_ms"] / r["total"], r["cost"] / r["total"], r["success"] / r["total"]) for o, r in runs.items()}
    fastest = min(m[0] for m in mean.values())
    cheapest = min(m[1] for m in mean.values())
    w_ok, w_fast, w_cheap = WEIGHTS
    return {o: w_ok * ok + w_fast * (fastest / lat if lat > 0 else 1.0) + w_cheap * (cheapest / cost if cost > 0 else 1.0)
            for o, (lat, cost, ok) in mean.items()}


def variant_pairs(original: str, variant: str, most: int = 2) -> dict[str, dict[str, int]]:
    """Returns original word → {variant word: 1} when a variant swapped at most `most` words for others.

    Variants that add or drop words without replacing any (expansions,
    step-back queries) teach nothing about synonyms and give {}.
    """
    before, after = keywords(original), keywords(variant)
    dropped = [w for w in before if w not in after]
    added = [w for w in after if w not in before]
    if not (1 <= len(dropped) <= most and 1 <= len(added) <= most):
        return {}
    return {w: {a: 1 for a in added} for w in dropped}


class SynonymLearner:
    """Learns a layperson-word → statute-word map from labelled query–document pairs (PMI-style association).

    For a query word q and a document word d, the evidence is how often d occurs
    in the relevant documents of questions containing q, against how common d is
    in the corpus: ``lift = P(d | q's relevant docs) / P(d in corpus)``. A pair is
    kept when q occurs in at least `min_queries` questions, d in at least
    `min_share` of their relevant documents, and lift ≥ `min_lift`. A query word
    that the relevant documents themselves use that often needs no synonym and
    is skipped, as are words the question already uses.
    """

    def __init__(self, doc_freq: Mapping[str, int], n_docs: int, min_queries: int = 3, min_share: float = 0.3,
                 min_lift: float = 20.0, per_term: int = 2) -> None:
        self.df, self.n = doc_freq, max(n_docs, 1)
        self.min_queries, self.min_share, self.min_lift, self.per_term = min_queries, min_share, min_lift, per_term

    def learn(self, pairs: Iterable[tuple[Sequence[str], Sequence[Sequence[str]]]]) -> dict[str, dict[str, int]]:
        """Returns term → {synonym: evidence} from (query tokens, [relevant document tokens]) pairs."""
        q_count: Counter[str] = Counter()
        own: Counter[str] = Counter()          # questions whose relevant documents use the query word itself
        co: dict[str, Counter[str]] = {}
        for q_tokens, docs in pairs:
            q_set = set(q_tokens)
            d_set: Counter[str] = Counter()
            for tokens in docs:
                d_set.update(set(tokens))
            for q in q_set:
                q_count[q] += 1
                own[q] += q in d_set
                co.setdefault(q, Counter()).update({d: 1 for d in d_set if d not in q_set})
        out: dict[str, dict[str, int]] = {}
        for q, n in q_count.items():
            if n < self.min_queries or own[q] / n >= self.min_share:
                continue
            ranked = []
            for d, c in co[q].items():
                share = c / n
                lift = share / (self.df.get(d, 0) / self.n or 1.0 / self.n)
                if share >= self.min_share and lift >= self.min_lift and d != q:
                    ranked.append((math.log(lift) * share, d, c))
            ranked.sort(reverse=True)
            if ranked:
                out[q] = {d: c for _, d, c in ranked[:self.per_term]}
        return out


def verdict_of(state: State, ctx: Optional[Context]):
    """Returns citation_check's verdict on a finished run; every field it reads counts as given (possibly empty,
    e.g. no hits when wiki pages alone answered)."""
    check = build_skill("citation_check", {})
    given = state.model_copy(update={f: getattr(state, f) for f in check.reads()})
    return check.run(given, ctx or Context()).verdict


def noisy(graph: EntityGraph, name: str) -> bool:
    """Returns whether a new name is a phrase rather than a name: a known entity with words glued in front, or
    (unless it is titled like a law) a span holding function words (都由海事管理机构, 条例规定国务院…部门)."""
    import jieba

    spans = graph.spans(name)
    if spans and spans[-1][1] == len(name) and spans[-1][0] > 0:
        return True
    return not LAW_TITLE.search(name) and bool(FUNCTION_WORDS & set(jieba.lcut(name)))


def render_into(graph: EntityGraph, wiki_dir: Path, name: str) -> None:
    """Re-renders the wiki page of `name` from the graph, or deletes it when the entity is gone."""
    path = wiki_dir / page_file(name)
    if name in graph.g:
        write_atomic_text(path, render_page(graph, name))
    elif path.exists():
        path.unlink()


def analysis_page(state: State, prov: Mapping[str, Any], labels: Mapping[str, Label],
                  relations: Sequence[Mapping[str, Any]]) -> str:
    """Returns the markdown of a cross-document analysis: the question, the cited answer, what it taught."""
    head = {"analysis": prov["query_id"], "query": prov["query"], "provenance": dict(prov),
            "sources": {s: labels.get(s, Label()).model_dump() for s in prov["sources"]}}
    lines = [f"<!-- wiki {json.dumps(head, ensure_ascii=False)} -->", f"# {prov['query']}", "",
             f"查询 {prov['query_id']}，{prov['time']}，抽取器 {prov['extractor']}，综合 {len(prov['sources'])} 个来源。",
             "", "## 综合回答", "", state.answer.strip(), "", "## 引用"]
    lines += [f"- {c.source}{'#' + c.section if c.section else ''} [来源: {c.source}]" for c in state.citations]
    if relations:
        lines += ["", "## 新发现的关系"]
        lines += [f"- [[{r['head']}]] --{r['relation']}--> [[{r['tail']}]] [来源: {r['source']}#{r['section']}]"
                  for r in relations]
    return "\n".join(lines) + "\n"


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
              "success": ok, "cost": result.get("cost", 0.0), "tokens": trace.get("tokens", 0),
              "latency_ms": result.get("latency_ms", {}), "fallbacks": result.get("fallbacks", [])}
    if state is not None:
        record["variants"] = [{"kind": v.kind, "text": v.text} for v in state.variants]
        record["retrieval"] = {f"{c.retriever}_top10:{c.query}": top_list(c.hits, 10) for c in state.candidates}
        record["rerank_top5"] = top_list(state.hits, 5)
        record["verdict"] = state.verdict.model_dump() if state.verdict else None
    return record


def qrels_pairs(backend: Any, queries: Iterable[tuple[str, Sequence[str]]]) -> list[tuple[list[str], list[list[str]]]]:
    """Returns (query tokens, [relevant chunk tokens]) per labelled query; ids may name chunks or documents.

    Chunk tokens come from the BM25 index itself, so what is learned matches
    what BM25 matches on.
    """
    lex = backend.lexical
    terms = [""] * len(lex.vocab)
    for t, j in lex.vocab.items():
        terms[j] = t
    rows: dict[str, list[int]] = {}
    for i, c in enumerate(backend.chunks()):
        rows.setdefault(c.id, []).append(i)
        rows.setdefault(c.doc_id, []).append(i)
    out = []
    for query, relevant in queries:
        docs = [[terms[j] for j in lex.tf[i].indices] for r in relevant for i in rows.get(r, ())]
        if docs:
            out.append((backend.tokenizer(query), docs))
    return out


def synonym_learner(backend: Any, **params: Any) -> SynonymLearner:
    """Returns a learner whose document frequencies are those of the index's BM25."""
    import numpy as np

    lex = backend.lexical
    df = np.diff(lex.tf.tocsc().indptr)
    return SynonymLearner({t: int(df[j]) for t, j in lex.vocab.items() if j < len(df)}, lex.size, **params)


def learn_qrels(loop: FeedbackLoop, backend: Any, queries: Iterable[tuple[str, Sequence[str]]]) -> int:
    """Learns synonyms from labelled query–document pairs into the loop's map; returns the pairs added."""
    learned = synonym_learner(backend).learn(qrels_pairs(backend, queries))
    return loop.add_synonyms(learned, "qrels")
