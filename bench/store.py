"""Benchmark: what recording a query's feedback costs as history grows, per engine — the JSON files of before,
SQLite and PostgreSQL — plus concurrent writers' throughput and what feedback adds to search().

One query's feedback write is what `FeedbackLoop.record` writes for a passed answer: its query-log record, the
routing count, the ``answer`` confirmation of its cited chunks and the cache count. "files" is a reference copy
of the code before the database (JSONL append under a lock with fsync; JSON documents read whole and rewritten
by write-rename), kept here since the product no longer has it. History is N logged queries, each with its
confirmation. Durability differs: files and PostgreSQL fsync every write; SQLite runs WAL with
``synchronous=NORMAL`` (a commit survives the process being killed, not a power cut). PostgreSQL runs on a throwaway local cluster (tests/pg_cluster.py) unless
$LAMBDARAG_TEST_PG_DSN names one.

  python bench/store.py            # writes bench/results/store.json
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import write  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
WRITES = {"files": {1_000: 30, 10_000: 10, 100_000: 5}, "sqlite": 200, "postgres": 200}
WRITERS, WRITER_ROUNDS = 4, 100
SEARCHES = 20
ANSWER = "依照《中华人民共和国船员条例》第四十八条，船长在保障水上人身与财产安全、防治污染方面有独立决定权。" * 3


def log_record(i: int) -> dict[str, Any]:
    """Returns a query-log record of the size a real one has without its retrieval lists (about 1 KB)."""
    return {"query_id": f"q{i:07d}", "time": "2026-12-01T00:00:00.000+00:00", "query": f"问题{i}船长有什么权力？",
            "rewritten_query": f"问题{i}船长有什么权力？", "type": "fact", "strategy": "keyword_search",
            "scope": "|0", "from_cache": False, "answer": ANSWER, "citations": ["船员条例.md", "海上交通安全法.md"],
            "cited_chunks": [f"c{i % 997}", f"c{i % 991}"], "shown_chunks": [f"c{j}" for j in range(12)],
            "success": True, "cost": 0.0, "latency_ms": {"total": 12.0}}


def confirmation(i: int) -> dict[str, Any]:
    return {"id": f"answer-{i:010d}", "origin": "answer", "weight": 0.5, "time": "2026-12-01T00:00:00.000+00:00",
            "scope": "|0", "query_id": f"q{i:07d}", "pairs": [{"query": f"问题{i}船长有什么权力？",
                                                              "chunks": [f"c{i % 997}", f"c{i % 991}"]}],
            "reverted": False}


# -- the files of before (a reference copy of orchestration/feedback/files.py at 340e03c) ---------------------

class FileStores:
    """The old write discipline: JSONL appends under a file lock with fsync, JSON documents rewritten whole."""

    def __init__(self, folder: Path) -> None:
        from filelock import FileLock

        self.folder, self.lock = folder, lambda p: FileLock(str(p) + ".lock", timeout=60)

    def append(self, name: str, record: dict) -> None:
        path = self.folder / name
        with self.lock(path):
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)

    def update(self, name: str, change: Callable[[dict], None]) -> None:
        from lambdarag.skills.store.files import write_replace

        path = self.folder / name
        with self.lock(path):
            data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
            change(data)
            write_replace(path, (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))

    def preload(self, n: int) -> None:
        with (self.folder / "query_log.jsonl").open("w", encoding="utf-8") as f:
            for i in range(n):
                f.write(json.dumps(log_record(i), ensure_ascii=False) + "\n")
        items = {c["id"]: c for c in map(confirmation, range(n))}
        (self.folder / "confirmations.json").write_text(json.dumps({"items": items}, ensure_ascii=False, indent=1),
                                                        encoding="utf-8")

    def feedback_write(self, i: int) -> None:
        self.append("query_log.jsonl", log_record(i))

        def route(data: dict) -> None:
            entry = data.setdefault("types", {}).setdefault("fact", {}).setdefault(
                "keyword_search", {"total": 0, "success": 0, "latency_ms": 0.0, "cost": 0.0})
            entry["total"] += 1
            entry["success"] += 1
            entry["latency_ms"] += 12.0
        self.update("routing_stats.json", route)
        item = confirmation(i)
        self.update("confirmations.json", lambda data: data.setdefault("items", {}).__setitem__(item["id"], item))

        def count(data: dict) -> None:
            counts = data.setdefault("counts", {})
            key = uuid.uuid4().hex[:32]
            counts[key] = counts.pop(key, 0) + 1
            while len(counts) > 10_000:
                counts.pop(next(iter(counts)))
        self.update("query_cache.json", count)


# -- the store ------------------------------------------------------------------------------------------------

class DatabaseStores:
    """The feedback store of one engine, written through the feedback loop's own parts."""

    def __init__(self, folder: Path) -> None:
        from lambdarag.orchestration.config import FeedbackConfig
        from lambdarag.orchestration.feedback import FeedbackLoop

        self.loop = FeedbackLoop(FeedbackConfig(), folder)

    def preload(self, n: int) -> None:
        from lambdarag.orchestration.feedback.store.rows import put_confirmations

        def fill(tx) -> None:
            for i in range(n):
                tx.append("query_log", log_record(i))
            put_confirmations(tx, [confirmation(i) for i in range(n)])
        self.loop.store.write(fill)

    def feedback_write(self, i: int) -> None:
        loop = self.loop
        loop.log.append(log_record(i))
        loop.routing.count("fact", "keyword_search", True, 12.0, 0.0)
        item = confirmation(i)
        loop.confirmations.add("answer", [(p["query"], p["chunks"]) for p in item["pairs"]], query_id=item["query_id"])
        loop.cache.remember(f"问题{i}", None, {"answer": ANSWER}, "v")


@contextmanager
def engine(kind: str, dsn: Optional[str]) -> Iterator[None]:
    """Selects the engine new stores open with (PostgreSQL: a fresh database on `dsn`)."""
    from lambdarag.orchestration.feedback.store import DSN_ENV

    saved = os.environ.pop(DSN_ENV, None)
    name = None
    try:
        if kind == "postgres":
            import psycopg

            name = f"bench_{uuid.uuid4().hex[:10]}"
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute(f"CREATE DATABASE {name}")
            os.environ[DSN_ENV] = psycopg.conninfo.make_conninfo(dsn, dbname=name)
        yield
    finally:
        os.environ.pop(DSN_ENV, None)
        if saved is not None:
            os.environ[DSN_ENV] = saved
        if name:
            import psycopg

            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def stores(kind: str, folder: Path) -> Any:
    return FileStores(folder) if kind == "files" else DatabaseStores(folder)


def write_cost(kind: str, dsn: Optional[str]) -> dict[str, Any]:
    """Returns the p50 (and p90) ms of one query's feedback write after N logged queries, per N.

    The stores of every N are filled first and then written in turn, one write each per round, so the load of a
    shared machine weighs on every N alike: measured one N after the other, PostgreSQL's sub-millisecond writes
    showed ratios from 0.7 to 1.6 between runs of the same code.
    """
    out: dict[str, Any] = {}
    with ExitStack() as stack:
        opened, loaded = {}, {}
        for n in SIZES:
            stack.enter_context(engine(kind, dsn))
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"store-bench-{kind}-")))
            opened[n] = stores(kind, folder)
            start = time.perf_counter()
            opened[n].preload(n)
            loaded[n] = time.perf_counter() - start
        runs = {n: WRITES[kind][n] if isinstance(WRITES[kind], dict) else WRITES[kind] for n in SIZES}
        times: dict[int, list[float]] = {n: [] for n in SIZES}
        for r in range(max(runs.values())):
            for n in SIZES:
                if r < runs[n]:
                    t0 = time.perf_counter()
                    opened[n].feedback_write(n + r)
                    times[n].append((time.perf_counter() - t0) * 1000)
    for n in SIZES:
        ms = sorted(times[n])
        out[str(n)] = {"p50_ms": round(statistics.median(ms), 3), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 3),
                       "writes": runs[n], "preload_s": round(loaded[n], 1)}
    out["ratio_100k_to_1k"] = round(out[str(SIZES[-1])]["p50_ms"] / out[str(SIZES[0])]["p50_ms"], 2)
    return out


def writer(kind: str, folder: str, worker: int, env: dict, start: Any, times: Any) -> None:
    """One writer process: opens the store, waits for the others, writes, and reports when it began and ended."""
    os.environ.update(env)
    s = stores(kind, Path(folder))
    start.wait()
    began = time.time()
    for i in range(WRITER_ROUNDS):
        s.feedback_write(worker * 1_000_000 + i)
    times.put((began, time.time()))


def throughput(kind: str, dsn: Optional[str]) -> dict[str, Any]:
    """Returns feedback writes per second of `WRITERS` processes writing at once into one store (empty at start)."""
    from lambdarag.orchestration.feedback.store import DSN_ENV

    with engine(kind, dsn), tempfile.TemporaryDirectory(prefix=f"store-bench-{kind}-") as folder:
        stores(kind, Path(folder))                         # the schema, before the writers race to it
        env = {DSN_ENV: os.environ[DSN_ENV]} if DSN_ENV in os.environ else {}
        ctx = mp.get_context("spawn")
        start, times = ctx.Barrier(WRITERS), ctx.Queue()
        procs = [ctx.Process(target=writer, args=(kind, folder, w, env, start, times)) for w in range(WRITERS)]
        for p in procs:
            p.start()
        spans = [times.get(timeout=600) for _ in procs]
        for p in procs:
            p.join()
        assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    elapsed = max(end for _, end in spans) - min(began for began, _ in spans)
    return {"writers": WRITERS, "writes": WRITERS * WRITER_ROUNDS, "seconds": round(elapsed, 2),
            "writes_per_s": round(WRITERS * WRITER_ROUNDS / elapsed, 1),
            "note": "from the first writer's start to the last one's end, processes already started"}


def search_overhead(kind: str, dsn: Optional[str], home: Path) -> dict[str, Any]:
    """Returns p50 ms of search() on the demo index (in data home `home`) with feedback off and on, and of its
    recording span; and, counted on the store's connection pool, the store transactions of each feedback-on
    search and the connections opened after the first one (figures that do not move with the machine's load)."""
    import shutil

    from lambdarag.orchestration.feedback import feedback_dir
    from lambdarag.orchestration.feedback.store import open_store
    from lambdarag.orchestration.knowledge import forget
    from lambdarag.orchestration.search_unified import search
    from lambdarag.orchestration.setup import resolve_config

    config = resolve_config(None)
    questions = ["船长有什么权力？", "船员条例由哪个部门主管？", "梳理船员管理法规体系", "海上交通安全法与水污染防治法在船舶管理方面有何异同？"]
    os.environ["LAMBDARAG_HOME"] = str(home)
    shutil.rmtree(feedback_dir("demo"), ignore_errors=True)
    with engine(kind, dsn):
        forget()
        timings: dict[str, list[float]] = {"off": [], "on": [], "recording": []}
        pool, transactions, connects = None, [], 0
        for mode in ("off", "on", "off", "on"):
            os.environ["LAMBDARAG_FEEDBACK"] = mode
            for i in range(SEARCHES // 2):
                before = (pool.transactions, pool.connects) if pool else None
                r = search(f"{questions[i % len(questions)]}（第{i}问）", config=config)   # distinct: no cache hits
                timings[mode].append(r.latency_ms["total"])
                if mode == "on":
                    timings["recording"].append(r.latency_ms["record_feedback"])
                    pool = pool or open_store(feedback_dir("demo")).engine.pool
                    if before:
                        transactions.append(pool.transactions - before[0])
                        connects += pool.connects - before[1]
        forget()
    p50 = {k: round(statistics.median(v[len(v) // 4:]), 2) for k, v in timings.items()}   # the first ones warm up
    return {"searches": SEARCHES, "p50_total_off_ms": p50["off"], "p50_total_on_ms": p50["on"],
            "p50_recording_ms": p50["recording"], "p50_added_ms": round(p50["on"] - p50["off"], 2),
            "store_transactions_per_search": {"median": statistics.median(transactions), "max": max(transactions)},
            "connects_after_first": connects}


def main() -> dict:
    from tests import pg_cluster

    dsn = os.environ.get(pg_cluster.DSN_ENV)
    folder = None
    if not dsn:
        folder = Path(f"/tmp/lambdarag-bench-pg-{os.getpid()}")
        dsn = pg_cluster.start(folder, durable=True)
    os.environ.setdefault("LAMBDARAG_CACHE", str(Path(tempfile.gettempdir()) / "lambdarag-bench-cache"))
    try:
        result: dict[str, Any] = {"sizes": list(SIZES), "write_cost": {}, "throughput": {}, "search": {}}
        for kind in ("files", "sqlite", "postgres"):
            result["write_cost"][kind] = write_cost(kind, dsn)
            result["throughput"][kind] = throughput(kind, dsn)
            print(kind, json.dumps(result["write_cost"][kind]), json.dumps(result["throughput"][kind]),
                  file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="store-bench-home-") as home:
            for kind in ("sqlite", "postgres"):
                result["search"][kind] = search_overhead(kind, dsn, Path(home))
                print(kind, json.dumps(result["search"][kind]), file=sys.stderr)
        result["postgres"] = ("throwaway local cluster, unix socket, fsync on" if folder else "given by "
                              f"${pg_cluster.DSN_ENV}")
        write("store", result)
        return result
    finally:
        if folder:
            pg_cluster.stop(folder)


if __name__ == "__main__":
    json.dump(main(), sys.stdout, indent=1)
    print()
