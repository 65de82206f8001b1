"""The `lambdarag` command line: one small function per subcommand, found through `COMMANDS`.

Exit status: 0 answered; 2 a user error (bad paths, unknown index, bad query
files, bad config), printed as one line without a traceback; 3 a deadline or
provider failure: no answer in time, or an answer degraded because a
configured LLM or endpoint failed (`ask --json` still prints that answer).
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import time
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from lambdarag import __version__
from lambdarag.errors import DeadlineExceeded, LambdaRAGError, ProviderError, ResidentRefused

ASK_COMMANDS = ("ask", "search")
USER_ERRORS = (LambdaRAGError, FileNotFoundError, PermissionError, IsADirectoryError)
SERVICE_ERRORS = (DeadlineExceeded, ProviderError)
EXIT_USER, EXIT_SERVICE = 2, 3


class UsageError(LambdaRAGError):
    """A command was given arguments it cannot use."""


def cmd_index(args: argparse.Namespace) -> int:
    """Builds or updates a named index and prints what it holds."""
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.knowledge import build_with_wiki
    from lambdarag.domains.corpus import read_corpus
    from lambdarag.skills.store.corpus import DEFAULT_EXCLUDE
    from lambdarag.skills.store.index import index_dir

    config = load_config(args.config)   # once: a load imports the plugins and builds every declared pattern
    corpus = read_corpus(args.corpus, progress=True, domain=args.domain or config.retrieval.domain,
                         exclude=(*DEFAULT_EXCLUDE, *args.exclude))
    for path, line, message in corpus.problems:
        print(f"skipped {path}:{line}: {message}", file=sys.stderr)
    for chunk in corpus.chunks:
        if chunk.meta.get("instructions"):
            print(f"flagged {chunk.source}#{chunk.section}: reads like an instruction to the system "
                  f"({', '.join(chunk.meta['instructions'])}); indexed, never quoted, never support", file=sys.stderr)
    if args.strict and corpus.problems:
        raise UsageError(f"--strict: {len(corpus.problems)} file(s) or record(s) failed validation; "
                         f"first: {':'.join(map(str, corpus.problems[0]))}")
    print(restricted_summary(corpus.documents, corpus.problems))
    start = time.perf_counter()
    backend, _ = build_with_wiki(config.retrieval.backend.model_dump(), corpus, args.name, wiki=not args.no_wiki,
                                 vectors_dir=args.vectors, dense=not args.no_dense, progress=True)
    if not args.no_dense:
        from lambdarag.skills.classify import prepare_classifier

        prepare_classifier(corpus.profile, progress=True)
    print(f"index {args.name!r}: {len(backend.documents())} documents, {len(backend.chunks())} chunks, "
          f"domain {corpus.domain}, "
          f"dense={'yes' if backend.has_dense else 'no'}, fingerprint {backend.fingerprint()}, "
          f"{time.perf_counter() - start:.1f}s → {index_dir(args.name)}")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    """Writes the packaged, commented agent-config.yml into DIR (default: the working folder) for the user to edit."""
    from lambdarag.orchestration.config import CONFIG_NAME, DEFAULT_CONFIG

    target = args.dir / CONFIG_NAME
    if target.exists():
        raise UsageError(f"{target} already exists; edit it, or remove it to start again")
    args.dir.mkdir(parents=True, exist_ok=True)
    target.write_text(DEFAULT_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    print(f"wrote {target}: commands run in {args.dir.resolve()} use it (elsewhere: --config or LAMBDARAG_CONFIG); "
          f"plugins, keys and endpoints you add there need `lambdarag trust` once you have edited it")
    return 0


def cmd_where(args: argparse.Namespace) -> int:
    """Prints where LambdaRAG reads its configuration and demo from, and where it writes (the data home)."""
    import os

    from lambdarag.orchestration.config import DEMO_DOCS, WORKING_FOLDER, config_source, load_config
    from lambdarag.orchestration.trust import describe
    from lambdarag.orchestration.folders import feedback_dir, wiki_dir_for
    from lambdarag.skills.store.home import built_indexes, cache_root, data_home, index_dir

    path, found = config_source(args.config)
    config, home = load_config(args.config), data_home()
    print(f"config      {path}  ({found}{', ' + describe(path) if found == WORKING_FOLDER else ''})")
    print(f"data home   {home}  ({'$LAMBDARAG_HOME' if os.environ.get('LAMBDARAG_HOME') else 'user data folder'})")
    print(f"caches      {cache_root()}")
    print(f"demo docs   {DEMO_DOCS}  (read only)")
    for name in built_indexes():
        print(f"index {name:<10} {index_dir(name)}; feedback {feedback_dir(name)}; wiki {wiki_dir_for(config, name)}")
    return 0


def restricted_summary(documents: Sequence[Any], problems: Sequence[tuple[str, int, str]] = ()) -> str:
    """Returns how many documents carry access labels and each label, how many documents each label admits (the
    public; a department at the top level indexed; a level alone), and how many were refused for their labels."""
    from collections import Counter

    from lambdarag import User
    from lambdarag.skills.store.corpus import UNREADABLE

    restricted = [d for d in documents if d.department or d.security_level]
    labels = Counter(label for d in restricted for label in (f"department={d.department}" if d.department else "",
                                                             f"security_level={d.security_level}"
                                                             if d.security_level else "") if label)
    shown = ", ".join(f"{label}: {n}" for label, n in sorted(labels.items()))
    top = max((d.security_level for d in documents), default=0)
    readers = {"public": User()} | {f"department={d}": User(departments=(d,), security_level=top)
                                    for d in sorted({d.department for d in restricted if d.department})} \
        | {f"security_level={n}": User(security_level=n) for n in sorted({d.security_level for d in restricted}) if n}
    admits = ", ".join(f"{name} {sum(user.may_read(d.department, d.security_level) for d in documents)}"
                       for name, user in readers.items())
    refused = sum(message.endswith(UNREADABLE) for _, _, message in problems)
    return (f"restricted: {len(restricted)} of {len(documents)} documents" + (f" ({shown})" if shown else "")
            + f"\nreadable by: {admits}"
            + (f"\nunreadable to everyone: {refused} document(s) whose access labels break the schema (skipped "
               f"above)" if refused else ""))


def read_queries(path: Path) -> list[dict]:
    """Returns the evaluation queries of a JSONL file of {"qid", "query", "relevant": [ids], optional "type"}."""
    from lambdarag.orchestration.config import QUERY_TYPES

    queries = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
            queries.append({"qid": str(q["qid"]), "query": str(q["query"]), "relevant": [str(r) for r in q["relevant"]],
                            **({"type": str(q["type"])} if "type" in q else {})})
        except (ValueError, KeyError, TypeError) as e:
            raise UsageError(f"{path}:{n}: expected {{\"qid\", \"query\", \"relevant\": [ids]}} ({e})") from None
        if queries[-1].get("type", QUERY_TYPES[0]) not in QUERY_TYPES:
            raise UsageError(f"{path}:{n}: type {queries[-1]['type']!r} is not one of {', '.join(QUERY_TYPES)}")
    if not queries:
        raise UsageError(f"{path}: no queries")
    return queries


EVAL_METRICS = ["recall@5", "mrr@5", "recall@10", "recall@100", "mrr@10", "ndcg@10"]


def cmd_eval(args: argparse.Namespace) -> int:
    """Runs every query through one retriever, or the whole routed pipeline (--routed), and prints ranking
    metrics (per question type when the queries carry a `type`), type accuracy (routed) and latency.

    `relevant` holds chunk ids (file#section) or documents: when any id is a chunk id of the index the
    rankings are scored by chunk, else by document file name (a statute filed in two folders is one
    document). What the index learned applies to a retriever unless --no-learned; --routed answers with
    feedback off, so it neither learns from nor applies learning to its own questions.
    """
    import numpy as np

    queries = read_queries(args.queries)
    ranked, routed_as, latency, chunk_level = (routed_rankings if args.routed else retriever_rankings)(args, queries)
    out = scored(queries, ranked, routed_as, chunk_level)
    unlearned = latency.pop("unlearned", None) if isinstance(latency, dict) else None
    latency = latency["learned"] if isinstance(latency, dict) else latency
    out["latency_ms"] = {"p50": round(float(np.percentile(latency, 50)), 2),
                         "p95": round(float(np.percentile(latency, 95)), 2)}
    if unlearned:
        out["latency_ms"]["unlearned"] = {"p50": round(float(np.percentile(unlearned, 50)), 2),
                                          "p95": round(float(np.percentile(unlearned, 95)), 2)}
        out["latency_ms"]["learned_over_unlearned_p50"] = round(out["latency_ms"]["p50"] /
                                                                out["latency_ms"]["unlearned"]["p50"], 3)
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"{'routed' if args.routed else args.retriever} on {args.index!r}, {len(queries)} queries")
    for name, value in out["metrics"].items():
        print(f"  {name:<13} {value:.4f}")
    for kind, m in out.get("per_type", {}).items():
        cells = "  ".join(f"{k} {v:.3f}" for k, v in m.items() if k != "n")
        print(f"  {kind:<10} ({m['n']:>3})  {cells}")
    print(f"  latency p50 {out['latency_ms']['p50']} ms, p95 {out['latency_ms']['p95']} ms")
    if unlearned:
        print(f"  without learning, same run: p50 {out['latency_ms']['unlearned']['p50']} ms "
              f"({out['latency_ms']['learned_over_unlearned_p50']}x)")
    return 0


def retriever_rankings(args: argparse.Namespace, queries: list[dict]):
    """Returns (qid → ranked ids, {}, latencies in ms, chunk level) of one plain retriever; with learning, the
    latencies are {"learned": …, "unlearned": …}: each question also runs without learning, the two runs
    interleaved (which goes first alternates), so the cost of learning is measured in the same run, the
    process's first question included."""
    from lambdarag import Context
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.feedback import feedback_dir
    from lambdarag.orchestration.learning import open_learned, retrieval_term
    from lambdarag.skills.store.index import open_backend
    from lambdarag.skills.store.records import RetrievalPlan
    from lambdarag.skills.store.vectors import default_embedder

    config = load_config(args.config)
    backend = open_backend(config.retrieval.backend.model_dump(), args.index)
    if args.retriever != "bm25" and not backend.has_dense:
        raise UsageError(f"index {args.index!r} has no vectors; --retriever {args.retriever} needs a dense index")
    doc_of = {c.id: c.doc_id for c in backend.chunks()}
    chunk_level = any(r in doc_of for q in queries for r in q["relevant"])
    learned = None if args.no_learned else open_learned(feedback_dir(args.index), backend, default_embedder(),
                                                        config.orchestration.feedback.query_adapter,
                                                        config.orchestration.feedback.agreement_boost)
    term = retrieval_term(args.retriever, learned=learned is not None)
    plan = RetrievalPlan(bm25_top_k=args.k, dense_top_k=args.k, fused_top_k=args.k)
    ctx = Context(resources={"index": backend, **({"learned": learned} if learned else {})})
    plain = (retrieval_term(args.retriever, learned=False), Context(resources={"index": backend})) if learned else None
    ranked, latency, unlearned = {}, [], []
    for n, q in enumerate(queries):
        if plain and n % 2:
            unlearned.append(timed_run(*plain, q["query"], plan)[1])
        state, ms = timed_run(term, ctx, q["query"], plan)
        latency.append(ms)
        if plain and not n % 2:
            unlearned.append(timed_run(*plain, q["query"], plan)[1])
        hits = state.hits if args.retriever == "hybrid" or learned else state.candidates[-1].hits
        ranked[q["qid"]] = [h.chunk_id if chunk_level else Path(doc_of.get(h.chunk_id, h.chunk_id)).name for h in hits]
    return ranked, {}, {"learned": latency, "unlearned": unlearned} if plain else latency, chunk_level


def timed_run(term, ctx, query: str, plan) -> tuple:
    """Returns the state of one retrieval run and its wall milliseconds, its query embedded anew (a kept vector
    would let the second of two runs skip it)."""
    from lambdarag import State
    from lambdarag.skills.store.vectors import forget_query_vectors

    forget_query_vectors()
    start = time.perf_counter()
    state = term.run(State.of(query, plan=plan), ctx)
    return state, (time.perf_counter() - start) * 1000


def routed_rankings(args: argparse.Namespace, queries: list[dict]):
    """Returns (qid → ranked ids, qid → type it was routed as, latencies in ms, chunk level) of search() itself."""
    from lambdarag.orchestration.search_unified import search
    from lambdarag.orchestration.setup import open_index, resolve_config

    config = resolve_config(args.config)
    off = config.orchestration.model_copy(update={"feedback": config.orchestration.feedback.model_copy(
        update={"enabled": False})})
    config = config.model_copy(update={"orchestration": off})
    kb = open_index(config, args.index, progress=True)
    chunk_ids = {c.id for c in kb.index.chunks()}
    chunk_level = any(r in chunk_ids for q in queries for r in q["relevant"])
    patient = config.model_copy(update={"limits": config.limits.model_copy(update={"timeout_seconds": 3600.0})})
    for q in {q.get("type"): q for q in queries}.values():   # the routes' lazy loads (graph, wiki) not under a deadline
        search(q["query"], index=args.index, config=patient)
    ranked, routed_as, latency = {}, {}, []
    for q in queries:
        r = search(q["query"], index=args.index, config=config)
        latency.append(r.latency_ms["total"])
        routed_as[q["qid"]] = r.query_type
        ranked[q["qid"]] = [h.chunk_id if chunk_level else Path(h.source).name for h in r.hits]
    return ranked, routed_as, latency, chunk_level


def scored(queries: list[dict], ranked: dict, routed_as: dict, chunk_level: bool) -> dict:
    """Returns the metrics overall and per question type (when the queries carry one), with type accuracy if routed."""
    from lambdarag.orchestration.metrics import evaluate

    qrels = {q["qid"]: {r if chunk_level else Path(r).name: 1 for r in q["relevant"]} for q in queries}

    def of(group: list[dict]) -> dict:
        m = {k: round(v, 4) for k, v in evaluate({q["qid"]: qrels[q["qid"]] for q in group}, ranked,
                                                  EVAL_METRICS).items()}
        if routed_as and all("type" in q for q in group):
            m["type_accuracy"] = round(sum(routed_as[q["qid"]] == q["type"] for q in group) / len(group), 4)
        return m

    out = {"metrics": of(queries), "n_queries": len(queries), "level": "chunk" if chunk_level else "document"}
    types = dict.fromkeys(q["type"] for q in queries if "type" in q)
    if types:
        out["per_type"] = {t: {**of([q for q in queries if q.get("type") == t]),
                               "n": sum(q.get("type") == t for q in queries)} for t in types}
    return out


def cmd_compile_wiki(args: argparse.Namespace) -> int:
    """Compiles (incrementally) the wiki pages and relations.json of a corpus and prints what changed.

    --llm uses the `llm` section of --config (LAMBDARAG_LLM_* override it), its timeout included.
    """
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.knowledge import compile_index_wiki
    from lambdarag.orchestration.setup import chat

    config = load_config(args.config)
    llm = chat(config) if args.llm else None
    if args.llm and llm is None:
        raise UsageError("compile-wiki --llm: no LLM configured; set llm.baseUrl (and llm.model) in the --config "
                         "file or LAMBDARAG_LLM_BASE_URL")
    start = time.perf_counter()
    r = compile_index_wiki(args.corpus, args.wiki, llm=llm, progress=True, domain=config.retrieval.domain)
    print(f"wiki {args.wiki}: {r.documents} documents ({len(r.added)} added, {len(r.changed)} changed, "
          f"{len(r.removed)} removed), {r.pages_written} pages written, {r.pages_deleted} deleted, "
          f"{r.entities} entities, {r.relations} relations, {time.perf_counter() - start:.1f}s")
    for failure in r.llm_failures:
        print(f"LLM extraction failed, rules kept (retried next run): {failure}", file=sys.stderr)
    return 0


def offline(r) -> str:
    """Returns the fallback line's note that the answer is offline (no LLM configured), or ""."""
    return "".join(f"; {m['reason']}" for m in r.modes if m["term"] == "llm")


def print_result(r, explain: bool, lifecycle: str = "") -> None:
    """Prints a search result for people: tag, strategy, expression, answer, latency (the lifecycle term it ran
    in, plan, flagged hits and trace if asked)."""
    from lambdarag.skills.store.instructions import orders_in

    print(f"[{r.query_type}] strategy: {r.strategy}   (classified by {r.classification.get('stage', '?')})")
    print(f"λq. {r.expression}")
    print(f"effects: {r.effect_signature}")
    print()
    print(r.answer)
    print()
    steps = ", ".join(f"{k} {v:.0f}ms" for k, v in r.latency_ms.items() if k != "total")
    print(f"latency {r.latency_ms['total']:.0f}ms: {steps}")
    named = f" ({', '.join(dict.fromkeys(f['term'] for f in r.fallbacks))}; --explain says why)" if r.fallbacks else ""
    print(f"cost {r.cost:.4f}; fallbacks: {len(r.fallbacks)}{named}{offline(r)}")
    if r.from_cache:
        print("from cache: an earlier answer to this question, same permission scope, pipeline and knowledge")
    if r.degraded:
        print("warning: degraded answer (a failed LLM step, a failed final check or checks skipped past the "
              "deadline; --explain says which)")
    if explain:
        print(f"\nlifecycle: {lifecycle}")
        print(f"domain: {r.domain} (corpus profile of index {r.index!r})")
        print("plan:", json.dumps(r.plan.model_dump(), ensure_ascii=False, default=str))
        for h in r.hits:
            found = h.instructions or orders_in(h.text)
            if found:
                print(f"flagged {h.source}#{h.section}: reads like an instruction to the system "
                      f"({', '.join(found)}); never quoted, never support")
        if r.llm_budget:
            b = r.llm_budget
            print(f"LLM budget: {b['calls']} of {b['max_calls']} calls, {b['spent_s']:.1f}s of {b['seconds']:.0f}s "
                  f"({', '.join(f'{k} {v:.1f}s' for k, v in b['by_class_s'].items()) or 'nothing spent'}), "
                  f"{b['skipped']} skipped")
            for step in b["steps"]:
                print(f"  {step['decision']:<7} {step['term']} [{step['class']}] {step['seconds']:.1f}s "
                      f"of {step['wait_s']:.1f}s{(': ' + step['reason']) if 'reason' in step else ''}")
        for m in r.modes:
            print(f"mode {m['term']}: {m['reason']}")
        for f in r.fallbacks:
            print(f"fallback {f['term']}: {f['reason']}")
        for span in r.trace.spans:
            taken = f"  [{span.notes['path_taken']}]" if span.notes.get("path_taken") else ""
            print(f"  {span.duration_ms:9.2f}ms  {span.kind:<8} {span.path}{taken}")


ONE_SHOT_GC = (100_000, 50, 100)
"""The cyclic collector's thresholds while `ask` runs: Python's (700, 10, 10) suit a long-lived process, whereas a
command that imports some hundred thousand long-lived objects and exits would scan them again and again for
garbage it does not have."""


@contextmanager
def one_shot_collector() -> Iterator[None]:
    """Runs the block with the collector's thresholds at `ONE_SHOT_GC`, then freezes what it left (`gc.freeze`: the
    collection at exit does not scan it again; a long-lived caller keeps what was imported anyway) and puts the
    caller's thresholds back."""
    before = gc.get_threshold()
    gc.set_threshold(*ONE_SHOT_GC)
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(*before)


def one_blas_thread() -> None:
    """Keeps numpy's BLAS to one thread in a process about to load it, unless OPENBLAS_NUM_THREADS says otherwise:
    one question's products are small, and starting a thread per core only costs a one-shot `ask` CPU."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def cmd_ask(args: argparse.Namespace) -> int:
    """Answers one question through search_unified.search and prints it (or its JSON), collecting cyclic garbage
    as a one-shot process should (`one_shot_collector`), with one BLAS thread (`one_blas_thread`).

    Returns 3 when the answer is degraded (a configured LLM failed, or the final check failed the answer); then
    waits, at most
    orchestration.feedback.backgroundSeconds, for the feedback worker to finish learning from it.
    """
    one_blas_thread()
    with one_shot_collector():
        return ask(args)


def ask(args: argparse.Namespace) -> int:
    """Answers `ask`'s question and returns its exit status (`cmd_ask`)."""
    from lambdarag import User
    from lambdarag.orchestration.feedback.worker import drain
    from lambdarag.orchestration.search_unified import check_query, lifecycle_ran, search
    from lambdarag.orchestration.setup import open_index, resolve_config

    config = resolve_config(args.config)
    check_query(" ".join(args.question), config)     # a bad question fails before an index is built
    from lambdarag.skills.classify import prepare_classifier

    prepare_classifier(open_index(config, args.index, progress=True).resources()["profile"], progress=True)
    user = User(id="cli", departments=tuple(args.department or ()), security_level=args.security_level)
    question = " ".join(args.question)
    if args.stream:
        return stream_answer(question, args, user, config)
    result = search(question, index=args.index, user=user, config=config)
    if args.json:
        print(result.model_dump_json(indent=1))
    else:
        print_result(result, args.explain, str(lifecycle_ran(result)) if args.explain else "")
    sys.stdout.flush()
    if not drain(0):
        limit = config.orchestration.feedback.background_seconds
        print(f"learning from this answer in the background (at most {limit:g}s)…", file=sys.stderr)
        drain(limit)
    return ask_exit_code(result)


def ask_exit_code(result) -> int:
    """Returns the exit code `ask` gives for a SearchResult: EXIT_SERVICE when the answer is degraded, else 0."""
    return EXIT_SERVICE if result.degraded else 0


def stream_answer(question: str, args: argparse.Namespace, user, config) -> int:
    """Prints the events of answering `question` as they come: one JSON line each with --json, else for people.

    For people: the route, the evidence, the answer as it is written (a
    retracted attempt is announced and the retry printed afresh), the
    citations and latency at the end.
    """
    from lambdarag.orchestration.events import event_json
    from lambdarag.orchestration.search_unified import search_stream

    final = None
    for event in search_stream(question, index=args.index, user=user, config=config, checked_only=args.checked_only):
        if event.kind == "result":
            final = event.result
        if args.json:
            print(json.dumps(event_json(event), ensure_ascii=False), flush=True)
        elif event.kind == "classified":
            print(f"[{event.query_type}] strategy: {event.strategy}\nλq. {event.expression}\n", flush=True)
        elif event.kind == "hits":
            print(f"evidence ({len(event.hits)}):")
            for h in event.hits[:8]:
                print(f"  {h['source']}#{h['section']}  {h['text'][:60]}")
            print(flush=True)
        elif event.kind == "token":
            print(event.text, end="", flush=True)
        elif event.kind == "retract":
            print(f"\n[attempt {event.attempt} retracted: {event.reason[:120]}]\n", flush=True)
        elif event.kind == "result":
            r = event.result
            print("\n\ncitations:")
            for c in r.citations:
                print(f"  {c.source}" + (f"#{c.section}" if c.section else ""))
            print(f"latency {r.latency_ms['total']:.0f}ms; cost {r.cost:.4f}; fallbacks: {len(r.fallbacks)}{offline(r)}")
    return ask_exit_code(final) if final is not None else 0


DEMO_APP = "lambdarag.qademo.app:create_app"
"""The app `serve` runs unless --app names another, as ``module:factory`` (uvicorn's convention); the factory
takes ``(config, index)`` and returns an ASGI app. A name, not an import: the CLI stays below the apps."""


def app_factory(spec: str) -> Callable[..., Any]:
    """Returns the app factory `spec` (``module:attribute``) names, or fails saying what was expected."""
    import importlib

    module, _, attr = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module), attr or "create_app")
    except (ImportError, AttributeError) as e:
        raise UsageError(f"--app {spec!r}: expected module:factory of an importable web app ({e})") from None
    return factory


def cmd_serve(args: argparse.Namespace) -> int:
    """Serves a web app (default: the qademo demo, see --app) with uvicorn; its API answers once the index, models and
    learned state are loaded (/ready), and answers 503 with Retry-After past server.maxInFlight requests. With
    --socket, answers `ask` from a resident process instead (`orchestration.resident`)."""
    from lambdarag.orchestration.setup import open_index, resolve_config

    if args.socket:
        from lambdarag.orchestration.resident import serve_socket

        return serve_socket(resolve_config(args.config), args.index, ask_argv)
    import uvicorn

    from lambdarag.orchestration.http_limits import trusting
    from lambdarag.orchestration.serving import Gate, warm_in_background

    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port} is not a TCP port (1-65535)")
    config = resolve_config(args.config)
    print(f"opening index {args.index or config.retrieval.index!r}…", file=sys.stderr)
    open_index(config, args.index, progress=True)   # a bad index: exit 2
    print("listening; /ready answers 200 once models and the learned state are loaded", file=sys.stderr)
    create_app = app_factory(args.app)
    gate = Gate(create_app(config, args.index), config.server.max_in_flight, config.server.retry_after_seconds,
                config.server.max_per_source)
    warm_in_background(gate, config, args.index)
    app = trusting(gate, config, args.host)
    # proxy_headers off: uvicorn would otherwise take X-Forwarded-For from any local client as the source address,
    # so one client could pose as many sources and slip past the per-source vote rate limit
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", proxy_headers=False)
    return 0


BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"


def benchmarks() -> dict[str, Path]:
    """Returns the benchmark scripts of the checkout's bench/ folder, by name."""
    return {p.stem: p for p in sorted(BENCH_DIR.glob("*.py")) if not p.stem.startswith("_")}


def cmd_bench(args: argparse.Namespace) -> int:
    """Runs bench/<name>.py exactly as `python bench/<name>.py ARGS` would: its main() runs and its JSON is printed."""
    import runpy

    found = benchmarks()
    if args.name not in found:
        have = ", ".join(found) or f"none ({BENCH_DIR} is missing; run from a source checkout)"
        raise UsageError(f"unknown benchmark {args.name!r}; choose from: {have}")
    saved = sys.argv
    sys.argv = [str(found[args.name]), *args.args]
    try:
        runpy.run_path(str(found[args.name]), run_name="__main__")
    finally:
        sys.argv = saved
    return 0


def cmd_feedback(args: argparse.Namespace) -> int:
    """Inspects and reverts learned items, records confirmations and classification corrections, refits learning."""
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.feedback import FeedbackLoop, feedback_dir

    config = load_config(args.config)
    name = args.index or config.retrieval.index
    loop = FeedbackLoop(config.orchestration.feedback, feedback_dir(name))
    if args.action == "list":
        for item_id, item in loop.confirmations.items().items():
            state = "reverted" if item["reverted"] else "live"
            print(f"{item_id}  {state:<8} {len(item['pairs'])} confirmed pairs, weight {item['weight']}, "
                  f"from {item['query_id'] or item['origin']}")
        for item_id, item in loop.journal.items().items():
            state = "reverted" if item["reverted"] else "live"
            print(f"{item_id}  {state:<8} {len(item['entities'])} entities, {len(item['relations'])} relations, "
                  f"{len(item['sources'])} sources  {item['query']}")
        return 0
    if args.action in ("show", "revert"):
        if not args.id:
            raise UsageError(f"feedback {args.action} needs an item id (see: lambdarag feedback list)")
        if args.id in loop.confirmations:
            item = loop.confirmations.revert(args.id) if args.action == "revert" \
                else loop.confirmations.items()[args.id]
        else:
            item = loop.journal.item(args.id) if args.action == "show" else loop.journal.revert(args.id)
        print(json.dumps(item, ensure_ascii=False, indent=1))
        return 0
    if args.action in ("learn", "confirm", "reject", "fit"):
        return teach(args, loop, name)
    if args.action in ("review", "approve"):
        return review(args, loop)
    if args.action == "correct":
        if not (args.query and args.type):
            raise UsageError("feedback correct needs --query Q and --type T")
        rule = loop.rules.correct(args.query, args.type, args.pattern)
        print(f"rule {rule['pattern']!r} → {rule['type']} saved to {loop.store}")
        return 0
    if args.action == "export":
        from lambdarag.orchestration.feedback.store.jsonfiles import export_folder

        if not args.out:
            raise UsageError("feedback export needs --out DIR (the folder for the JSON/JSONL files)")
        for path in export_folder(loop.store, args.out):
            print(path)
        return 0
    print(json.dumps(loop.stats(), ensure_ascii=False, indent=1))
    return 0


def teach(args: argparse.Namespace, loop, name: str) -> int:
    """Records confirmations (learn --qrels, confirm, reject) or refits the learned retrieval of an index (fit)."""
    from lambdarag.state import ALL_ACCESS
    from lambdarag.orchestration.feedback.votes import Voter
    from lambdarag.orchestration.learning import learn_pairs, refit_learned
    from lambdarag.skills.store.index import open_index
    from lambdarag.skills.store.vectors import default_embedder

    backend, embedder = open_index(name), default_embedder()
    if args.action == "fit":
        report = refit_learned(loop.dir, backend, embedder, loop.config.query_adapter, loop.config.tail_model,
                               loop.config.agreement_boost)
    elif args.action == "learn":
        if not args.qrels:
            raise UsageError("feedback learn needs --qrels FILE (JSONL of {qid, query, relevant: [ids]})")
        pairs = [(q["query"], q["relevant"]) for q in read_queries(args.qrels)]
        item, report = learn_pairs(loop.dir, backend, embedder, "qrels", pairs, adapter=loop.config.query_adapter,
                                   tail_model=loop.config.tail_model, agreement_boost=loop.config.agreement_boost)
        print(f"confirmed {len(item['pairs'])} question pairs as {item['id']} (revert: lambdarag feedback revert "
              f"{item['id']})")
    else:
        if not (args.id and args.chunk):
            raise UsageError(f"feedback {args.action} needs QUERY_ID CHUNK_ID (query ids: lambdarag feedback stats)")
        vote = loop.votes.cast(loop.log, backend, Voter("cli", ALL_ACCESS), args.id, args.chunk, args.action)
        report = None
        print(f"{args.action}ed {args.chunk} for query {args.id} as {vote['confirmation']}")
    if report is not None:
        print(json.dumps(report, ensure_ascii=False))
    return 0


def review(args: argparse.Namespace, loop) -> int:
    """Lists the votes waiting for an operator (review) or applies one of them (approve VOTE_ID)."""
    if args.action == "approve":
        if not args.id:
            raise UsageError("feedback approve needs a VOTE_ID (see: lambdarag feedback review)")
        vote = loop.votes.approve(args.id)
        print(f"approved {vote['id']}: {vote['verdict']} {vote['chunk']} for {vote['question']!r} as "
              f"{vote['confirmation']} (revert: lambdarag feedback revert {vote['confirmation']})")
        return 0
    for vote in loop.votes.pending():
        print(f"{vote['id']}  {vote['verdict']:<7} {vote['chunk']}  from {vote['source']} ({vote['user']}, "
              f"{'trusted' if vote['trusted'] else 'untrusted'}) {vote['time']}  {vote['question']}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Validates a config without running a query: prints the plugins it loaded and each route's λ-form,
    effect signature and cost bound (exit 2 with the first error)."""
    from lambdarag.orchestration.config import config_path, load_config
    from lambdarag.orchestration.router import route_reports

    path = config_path(args.config)
    config = load_config(args.config)  # imports the plugins (if trusted), builds every declared pattern
    print(f"{path}: ok; plugins: {', '.join(config.plugins) or 'none'}")
    declared = [name for name, p in config.patterns.items() if p.expr is not None]
    if declared:
        print(f"declared patterns: {', '.join(declared)}")
    for r in route_reports(config, str(path)):
        print(f"\n{r.query_type}: {r.strategy}\n  λq. {r.form}\n  effects {r.effects}; cost bound {r.cost:.4f}")
        if r.over_budget:
            print(f"  over cost.budgetPerQuery: {r.over_budget}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serves one index to an agent as the MCP tools search and explain over stdio (the mcp extra), answering as the
    user these options describe (never as a caller says: orchestration.bridges.mcp_server)."""
    from lambdarag import User
    from lambdarag.orchestration.setup import open_index, resolve_config

    try:
        from lambdarag.orchestration.bridges.mcp_server import serve_stdio
    except ImportError as e:
        raise UsageError(str(e)) from None
    config = resolve_config(args.config)
    open_index(config, args.index, progress=True)   # a bad index: exit 2, before any client connects
    serve_stdio(args.index, config, User(id="mcp", departments=tuple(args.department or ()),
                                         security_level=args.security_level))
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    """Approves a config found in the working folder (default ./agent-config.yml) so it may import its plugins, read
    its secrets and choose its endpoints, until the file changes; --list shows approvals, --revoke forgets one."""
    from lambdarag.orchestration.config import CONFIG_NAME
    from lambdarag.orchestration.trust import approval_states, approve, revoke

    if args.list:
        for path, state in approval_states():
            print(f"{path}  {state}")
        return 0
    path = (args.file or Path(CONFIG_NAME)).resolve()
    if args.revoke:
        print(f"{'revoked' if revoke(path) else 'was not approved:'} {path}")
        return 0
    if not path.is_file():
        raise UsageError(f"{path} does not exist; name the config to approve")
    print(f"approved {path} (sha256 {approve(path)[:12]}…): its plugins, secrets and endpoints are used until the "
          f"file changes")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"feedback": cmd_feedback, "check": cmd_check,
                                                            "init": cmd_init, "where": cmd_where,
                                                            "index": cmd_index, "eval": cmd_eval,
                                                            "compile-wiki": cmd_compile_wiki,
                                                            "ask": cmd_ask, "search": cmd_ask,
                                                            "serve": cmd_serve, "bench": cmd_bench, "mcp": cmd_mcp,
                                                            "trust": cmd_trust}


def parser() -> argparse.ArgumentParser:
    """Returns the argument parser with one subparser per command."""
    p = argparse.ArgumentParser(prog="lambdarag", description="Retrieval-augmented QA as composable terms.")
    p.add_argument("--config", type=Path, default=None,
                   help="agent-config.yml for every command (its retrieval.backend picks local or milvus)")
    p.add_argument("-v", "--verbose", action="store_true", help="show the log messages of lambdarag and its libraries")
    p.add_argument("--version", action="version", version=f"lambdarag {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    it = sub.add_parser("init", help="write a commented agent-config.yml to edit (found when run from that folder)")
    it.add_argument("dir", nargs="?", type=Path, default=Path("."), help="folder to write it in (default: here)")
    sub.add_parser("where", help="print where the config, the demo, the indexes, feedback, wikis and caches are")
    ix = sub.add_parser("index", help="build or update a named index from a corpus folder or JSONL file")
    ix.add_argument("--corpus", required=True, type=Path,
                    help="a folder of documents (.md, .html, .rst, .txt, .pdf, .jsonl), or one such file")
    ix.add_argument("--name", required=True,
                    help="the index's name: a plain folder name under the data home, used as --index NAME later")
    ix.add_argument("--vectors", type=Path, help="directory of precomputed vectors (vectors.f16.npy, ids.txt)")
    ix.add_argument("--no-dense", action="store_true", help="BM25 only, no embeddings")
    ix.add_argument("--no-wiki", action="store_true", help="skip compiling the entity graph and wiki")
    ix.add_argument("--domain", help="corpus profile: auto, generic, prc_statutes or package.module:Factory of a "
                                     "plugin the config lists (default: retrieval.domain of --config)")
    ix.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                    help="leave out the files whose name or path in the corpus matches GLOB (repeatable; "
                         "README.md and SOURCE.md are always left out)")
    ix.add_argument("--strict", action="store_true",
                    help="fail the run (exit 2) when any file or record fails validation, e.g. a misspelt access key")
    ev = sub.add_parser("eval", help="ranking metrics of a retriever, or of the routed pipeline, on a query file")
    ev.add_argument("--index", required=True, help="the built index to score")
    ev.add_argument("--queries", required=True, type=Path,
                    help='JSONL of {"qid", "query", "relevant": [chunk ids or documents], optional "type"}')
    ev.add_argument("--retriever", choices=["bm25", "dense", "hybrid"], default="hybrid",
                    help="the plain retriever to score (default hybrid)")
    ev.add_argument("--routed", action="store_true",
                    help="score search() itself: classification, routing and the chosen strategy (not --retriever)")
    ev.add_argument("--config", default=argparse.SUPPRESS, type=Path, help="agent-config.yml to use (--routed)")
    ev.add_argument("--k", type=int, default=100, help="ranking depth per retriever (default 100)")
    ev.add_argument("--json", action="store_true", help="print the metrics as JSON")
    ev.add_argument("--no-learned", action="store_true", help="ignore what the index learned from confirmations")
    ask = sub.add_parser("ask", aliases=["search"],
                         help="answer a question: type, strategy, expression, cited answer, latency")
    ask.add_argument("question", nargs="+", help="the question (several words are joined with spaces)")
    ask.add_argument("--index", default=None, help="a built index (default: retrieval.index of the config)")
    ask.add_argument("--config", default=argparse.SUPPRESS, type=Path, help="agent-config.yml to use")
    ask.add_argument("--json", action="store_true", help="print the whole SearchResult as JSON")
    ask.add_argument("--explain", action="store_true", help="also print the plan, the fallbacks and the trace")
    ask.add_argument("--stream", action="store_true",
                     help="print evidence, then the answer as it is written, then citations (--json: one event per line)")
    ask.add_argument("--checked-only", action="store_true",
                     help="with --stream: release the answer claim by claim once its citation is verified")
    ask.add_argument("--department", action="append", help="a department the asking user belongs to")
    ask.add_argument("--security-level", type=int, default=0,
                     help="the asking user's clearance: documents above it are never retrieved (default 0)")
    cw = sub.add_parser("compile-wiki", help="build or update wiki/entities/*.md and relations.json from a corpus")
    cw.add_argument("--corpus", required=True, type=Path, help="the folder of documents to compile")
    cw.add_argument("--wiki", required=True, type=Path, help="folder to write the pages into (an index keeps its "
                    "own in <data home>/<name>/wiki)")
    cw.add_argument("--llm", action="store_true",
                    help="also extract with the LLM of the config's llm section (or LAMBDARAG_LLM_BASE_URL)")
    cw.add_argument("--config", default=argparse.SUPPRESS, type=Path, help="agent-config.yml to use")
    sv = sub.add_parser("serve", help="run the demo web app (question page with trace, citations and subgraph)")
    sv.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    sv.add_argument("--port", type=int, default=8000, help="TCP port to listen on, on 127.0.0.1 (default 8000)")
    sv.add_argument("--app", default=DEMO_APP, help=f"web app factory as module:factory (default {DEMO_APP})")
    sv.add_argument("--index", default=None, help="index searched unless a request names one (default: the config's)")
    sv.add_argument("--socket", action="store_true",
                    help="instead of the web app, answer `lambdarag ask` of this user from a resident process at "
                         "<data home>/ask.sock (mode 600), so a warm ask skips the imports")
    sv.add_argument("--config", default=argparse.SUPPRESS, type=Path, help="agent-config.yml to use")
    mc = sub.add_parser("mcp", help="serve an index to an agent as MCP tools (search, explain) over stdio",
                        description="Serves the tools search and explain with the official MCP SDK (pip install "
                                    "'lambdarag[mcp]'); every call is answered as the user the options below describe.")
    mc.add_argument("--index", default=None, help="the index searched (default: retrieval.index of the config)")
    mc.add_argument("--config", default=argparse.SUPPRESS, type=Path, help="agent-config.yml to use")
    mc.add_argument("--department", action="append", help="a department the served user belongs to (repeatable)")
    mc.add_argument("--security-level", type=int, default=0, help="the served user's security level (default 0)")
    bn = sub.add_parser("bench", help="run a benchmark script of bench/ by name and print its JSON",
                        description="Runs bench/NAME.py (runner, retrieval, graph, routing, ...); "
                                    "arguments after NAME go to the script.")
    bn.add_argument("name", help="benchmark name: the stem of a bench/*.py file")
    bn.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the benchmark script")
    ck = sub.add_parser("check", help="validate a config: plugins, declared patterns, each route's λ-form and cost")
    ck.add_argument("--config", default=argparse.SUPPRESS, type=Path, help="agent-config.yml to check")
    tr = sub.add_parser("trust", help="approve a config found in the working folder to import plugins, read secrets "
                                      "and choose endpoints (until it changes)")
    tr.add_argument("file", nargs="?", type=Path, help="the config to approve (default: ./agent-config.yml)")
    tr.add_argument("--list", action="store_true", help="show the approved configs and whether each still matches")
    tr.add_argument("--revoke", action="store_true", help="forget the approval of FILE")
    fb = sub.add_parser("feedback", help="inspect, revert and teach what the feedback loop learned")
    fb.add_argument("action", choices=["list", "show", "revert", "learn", "confirm", "reject", "review", "approve",
                                       "fit", "correct", "stats", "export"],
                    help="list/show/revert what was learned; learn from qrels; confirm/reject an answer; review/approve "
                         "votes; fit the learned gate; correct a question's type; stats; export the state as JSON")
    fb.add_argument("id", nargs="?", help="learned item or confirmation id for show / revert; QUERY_ID for "
                                          "confirm / reject; VOTE_ID for approve")
    fb.add_argument("chunk", nargs="?", help="confirm / reject: the CHUNK_ID the answer of QUERY_ID cited")
    fb.add_argument("--index", default=None, help="whose feedback (default: retrieval.index of the config)")
    fb.add_argument("--config", default=None, type=Path, help="agent-config.yml to use")
    fb.add_argument("--qrels", type=Path, help="learn: JSONL of {qid, query, relevant: [chunk or document ids]}")
    fb.add_argument("--query", help="correct: the misclassified question")
    fb.add_argument("--type", choices=["fact", "compare", "relation", "synthesis", "temporal"],
                    help="correct: its right type")
    fb.add_argument("--pattern", help="correct: regex for the learned rule (default: the question itself)")
    fb.add_argument("--out", type=Path, help="export: the folder to write the old JSON/JSONL files into")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line; returns the exit status. `ask` (without --stream) is answered by the resident
    answerer when the user started one (`serve --socket`), else in-process."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(name)s: %(message)s")
    if args.command in ASK_COMMANDS and not args.stream:
        with one_shot_collector():      # what it imports is kept to the end: no use scanning it
            from lambdarag.orchestration.resident import ask_resident

            code = ask_resident(argv)
        if code is not None:
            return code
    return run_command(args, COMMANDS[args.command])


def ask_argv(argv: list[str]) -> int:
    """Answers `lambdarag *argv` in this process, for the resident answerer (`resident.serve_socket`), or raises
    `ResidentRefused` unless it is an `ask` without --stream."""
    try:
        args = parser().parse_args(argv)
    except SystemExit:
        raise ResidentRefused(f"bad arguments: {argv}") from None
    if args.command not in ASK_COMMANDS or args.stream:
        raise ResidentRefused("it answers `ask` without --stream only")
    logging.getLogger().setLevel(logging.INFO if args.verbose else logging.WARNING)
    return run_command(args, ask)


def run_command(args: argparse.Namespace, command: Callable[[argparse.Namespace], int]) -> int:
    """Runs one command and returns its exit status, a failure reported in one line (`EXIT_USER`, `EXIT_SERVICE`)."""
    try:
        return command(args)
    except SERVICE_ERRORS as e:
        print(f"lambdarag {args.command}: {e}", file=sys.stderr)
        return EXIT_SERVICE
    except USER_ERRORS as e:
        if getattr(e, "internal", False):
            return internal_fault(args, e)
        message = str(e) if isinstance(e, LambdaRAGError) else f"{e.strerror}: {e.filename}"
        print(f"lambdarag {args.command}: {message}", file=sys.stderr)
        return EXIT_USER
    except Exception as e:  # a fault outside any term
        return internal_fault(args, e)


def internal_fault(args: argparse.Namespace, e: BaseException) -> int:
    """Reports a fault in the code (not in the input) in one line, with the traceback under -v; returns EXIT_SERVICE."""
    if args.verbose:
        traceback.print_exception(e)
    print(f"lambdarag {args.command}: internal error (a bug, not your input; -v shows the traceback): "
          f"{e if isinstance(e, LambdaRAGError) else f'{type(e).__name__}: {e}'}", file=sys.stderr)
    return EXIT_SERVICE


if __name__ == "__main__":
    sys.exit(main())
