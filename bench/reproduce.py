"""Reruns the quality benchmarks on a tree and compares their quality fields with reference result files.

Issue 39 is a refactor: every committed quality figure must come out the same. Each group below names the
bench command that wrote its committed file(s) of bench/results (the commands of the scripts' docstrings and of
docs/benchmarks.md). The tree is copied (without .git) to a work folder beside a link to the tree's ../shared,
every command runs there exactly as documented, with PYTHONPATH on the copy and LAMBDARAG_HOME on --home, and the
file it writes is copied to --out. Then every field of the fresh file is compared with the same file in --against,
except timings, dates, load and machine facts (`TIMING`, `MACHINE`): a figure, a per-question outcome or an answer's text
that differs in the last decimal or character is a difference. Exit 1 on any difference or failed run.

  PYTHONPATH=/work/wt8-x LAMBDARAG_HOME=/work/home8-x python bench/reproduce.py --only routing,answers \\
      --out /work/figs/x --against /work/figs/main
See bench/REPRODUCE.md for what each group needs and how long it takes.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMING = re.compile(r"latency|_ms$|^ms$|_s$|seconds|^p50$|^p95$|_mb$|bytes|speedup")
"""Keys whose values are timings or sizes on disk: never compared."""
MACHINE = frozenset({"machine", "machine_before", "machine_after", "measured", "date", "loadavg", "load_average",
                     "note", "cli_check"})
"""Keys of machine facts and dates, never compared; `cli_check` is a cold `lambdarag ask` process, which times out
on a loaded machine, so its exit code is a timing (the groups run with --cli-check 0)."""
QUERY_ID = re.compile(r"\bq\d{14}-[0-9a-f]{8}\b")
"""A query-log id (its time and a random part) inside a text, as the learning bench's examples cite it: not compared."""


@dataclass(frozen=True)
class Run:
    """One bench command, the result file it writes under bench/results, and the indexes it opens."""

    result: str
    argv: tuple[str, ...]
    indexes: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    """Top-level keys compared when the command rewrites only part of its file (default: every key)."""


DEBIAN = ("reference-en", "reference-zh-cn", "faq-zh-cn", "handbook-en", "valgrind-en", "maint-guide-en")   # each from a Debian package (bench/debian_docs.py)
ANSWERED = {"reference-en": "domain-reference-en", "reference-zh-cn": "domain-reference-zh-cn",
            "handbook-en": "domain-handbook-en", "maritime": "maritime"}
GROUPS: dict[str, tuple[Run, ...]] = {
    "routing": (Run("routing.json", ("bench/routing.py",), ("laws",)),
                Run("routing-maritime.json", ("bench/routing.py", "--questions", "maritime"), ("maritime",))),
    "domains": tuple(Run(f"domain-{c}.json", ("bench/domain_bench.py", "--corpora", c), (f"domain-{c}", f"corpora/{c}"))
                     for c in DEBIAN),
    "eval-routed": (Run("eval-routed.json", ("bench/eval_routed.py",), ("laws",)),),
    "learning": (Run("feedback.json", ("bench/feedback.py",), ("maritime", "stard")),
                 Run("feedback-partition-1.json", ("bench/feedback.py", "--partition", "1"), ("stard",)),
                 Run("feedback-partition-2.json", ("bench/feedback.py", "--partition", "2"), ("stard",))),
    "answers": tuple(Run(f"answers-{c}.json", ("bench/answers.py", "--corpora", c, "--cli-check", "0"), (index,))
                     for c, index in ANSWERED.items()),
    "graph": (Run("graph.json", ("bench/graph.py",)),),
    "injections": (Run("injections.json", ("bench/injections.py",),
                       ("domain-reference-en", "domain-faq-zh-cn", "domain-reference-zh-cn")),),
    "names": (Run("statute-names.json", ("bench/statute_names.py",), ("laws",)),),
    "retrieval": (Run("retrieval.json", ("bench/retrieval.py",)),),
}
QUICK: dict[str, tuple[Run, ...]] = {
    "routing": (Run("routing.json", ("bench/routing.py", "--halves", "test"), ("laws",), keys=("index", "test")),
                Run("routing-maritime.json", ("bench/routing.py", "--questions", "maritime", "--halves", "test"),
                    ("maritime",), keys=("index", "test"))),
    "domains": tuple(Run(r.result, (*r.argv, "--halves", "test"), r.indexes, keys=("corpus", "index", "test"))
                     for r in GROUPS["domains"]),
    "answers": tuple(Run(r.result, (*r.argv, "--halves", "test"), r.indexes, keys=("corpus", "index", "test"))
                     for r in GROUPS["answers"]),
    "learning": (Run("feedback.json", ("bench/feedback.py", "--skip-stard"), ("maritime",), keys=("maritime",)),),
}
"""Groups cut to the frozen test halves (every route and type) or, for learning, its maritime part (--quick);
the parts a quick run writes equal a full run's, so they compare with the full reference files."""


def compare(fresh, reference, path: str = "") -> list[str]:
    """Returns one line per differing quality leaf of two result trees: 'path: reference → fresh'."""
    if isinstance(fresh, dict) and isinstance(reference, dict):
        out = []
        for key in list(reference) + [k for k in fresh if k not in reference]:
            if key in MACHINE or TIMING.search(key):
                continue
            where = f"{path}.{key}" if path else key
            if key not in fresh:
                out.append(f"{where}: {short(reference[key])} → (missing)")
            elif key not in reference:
                out.append(f"{where}: (missing) → {short(fresh[key])}")
            else:
                out += compare(fresh[key], reference[key], where)
        return out
    if isinstance(fresh, list) and isinstance(reference, list):
        out = [line for i, (a, b) in enumerate(zip(fresh, reference)) for line in compare(a, b, f"{path}[{i}]")]
        if len(fresh) != len(reference):
            out.append(f"{path}: {len(reference)} items → {len(fresh)}")
        return out
    if isinstance(fresh, str) and isinstance(reference, str):
        fresh, reference = QUERY_ID.sub("q<id>", fresh), QUERY_ID.sub("q<id>", reference)
    return [] if fresh == reference and type(fresh) is type(reference) else [f"{path}: {short(reference)} → {short(fresh)}"]


def short(value, width: int = 160) -> str:
    """Returns a value as one JSON line cut to `width` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width] + "…"


def tree_of_pythonpath() -> Path:
    """Returns the tree whose `lambdarag` package imports (PYTHONPATH first, else the installed one)."""
    spec = importlib.util.find_spec("lambdarag")
    if spec is None or spec.origin is None:
        raise SystemExit("no lambdarag package on the path: set PYTHONPATH to the tree to measure, or pass --tree")
    return Path(spec.origin).resolve().parents[1]


def copy_tree(tree: Path, work: Path) -> Path:
    """Copies `tree` (no .git, caches or venvs) to work/tree beside a link work/shared → tree's ../shared."""
    copy = work / "tree"
    shutil.copytree(tree, copy, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", ".venv", "site"))
    (work / "shared").symlink_to((tree.parent / "shared").resolve())
    return copy


def missing_indexes(runs: tuple[Run, ...], home: Path) -> list[str]:
    """Returns the indexes (and converted corpora) the runs need that `home` lacks."""
    return sorted({i for r in runs for i in r.indexes if not (home / i).exists()})


def run(r: Run, tree: Path, copy: Path, home: Path, out: Path, log) -> tuple[Path | None, float]:
    """Runs one bench command in `copy` of `tree`; returns the result file copied to `out` (None when it failed)
    and the wall seconds."""
    target = copy / "bench" / "results" / r.result
    before = target.stat().st_mtime if target.exists() else 0.0
    env = {**os.environ, "PYTHONPATH": str(copy), "LAMBDARAG_HOME": str(home)}
    env.pop("LAMBDARAG_BENCH_RESULTS", None)
    start = time.perf_counter()
    log.write(f"$ {' '.join(r.argv)}\n")
    log.flush()
    done = subprocess.run([sys.executable, *r.argv], cwd=copy, env=env, stdout=log, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    if done.returncode or not target.exists() or target.stat().st_mtime == before:
        return None, seconds
    text = target.read_text(encoding="utf-8")  # paths into the copy read as paths into the tree
    (out / r.result).write_text(text.replace(str(copy), str(tree)).replace(str(copy.parent), str(tree.parent)),
                                encoding="utf-8")
    return out / r.result, seconds


def report(r: Run, fresh: Path, against: Path, limit: int) -> int:
    """Prints the differences of one fresh result file from its reference and returns how many there are."""
    reference = against / r.result
    if not reference.is_file():
        print(f"  {r.result}: no reference in {against}")
        return 1
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (fresh, reference))
    if r.keys:
        a, b = ({k: d.get(k) for k in r.keys} for d in (a, b))
    lines = compare(a, b)
    print(f"  {r.result}: {'identical' if not lines else f'{len(lines)} differ'}"
          + (f" (compared: {', '.join(r.keys)})" if r.keys else ""))
    for line in lines[:limit]:
        print(f"    {line}")
    if len(lines) > limit:
        print(f"    … {len(lines) - limit} more (--max-diffs)")
    return len(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(GROUPS), help=f"comma-separated groups of {','.join(GROUPS)}")
    ap.add_argument("--quick", action="store_true", help=f"the cut-down runs of {','.join(QUICK)}")
    ap.add_argument("--tree", type=Path, default=None, help="tree to measure (default: the lambdarag on PYTHONPATH)")
    ap.add_argument("--home", type=Path, default=os.environ.get("LAMBDARAG_HOME"),
                    help="data home holding the prebuilt indexes (default $LAMBDARAG_HOME)")
    ap.add_argument("--out", type=Path, default=None, help="folder for the fresh result files (default a temp folder)")
    ap.add_argument("--against", type=Path, default=ROOT / "bench" / "results",
                    help="reference result files (default this tree's bench/results)")
    ap.add_argument("--jobs", type=int, default=1, choices=(1,), help="runs at a time (one: the machine is shared)")
    ap.add_argument("--compare-only", action="store_true", help="compare the files already in --out; run nothing")
    ap.add_argument("--max-diffs", type=int, default=40, help="difference lines printed per file")
    args = ap.parse_args(argv)
    groups = args.only.split(",")
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise SystemExit(f"--only: unknown group(s) {unknown}; valid: {', '.join(GROUPS)}")
    if args.home is None:
        raise SystemExit("--home or LAMBDARAG_HOME: the data home holding the prebuilt indexes")
    plan = {g: (QUICK.get(g, GROUPS[g]) if args.quick else GROUPS[g]) for g in groups}
    out = args.out or Path(tempfile.mkdtemp(prefix="reproduce-"))
    out.mkdir(parents=True, exist_ok=True)
    work = None
    if not args.compare_only:
        lacking = {g: missing_indexes(runs, args.home) for g, runs in plan.items()}
        if any(lacking.values()):
            raise SystemExit(f"{args.home} lacks {', '.join(f'{g}: {m}' for g, m in lacking.items() if m)} "
                             f"(see bench/REPRODUCE.md)")
        tree = (args.tree or tree_of_pythonpath()).resolve()
        work = Path(tempfile.mkdtemp(prefix="reproduce-tree-", dir=out))
        copy = copy_tree(tree, work)
        print(f"tree {tree} → {copy}; home {args.home}; out {out}; against {args.against}", flush=True)
    failed, differing, times = [], 0, {}
    with open(out / "reproduce.log", "a", encoding="utf-8") as log:
        for group, runs in plan.items():
            print(f"{group}:", flush=True)
            spent = 0.0
            for r in runs:
                if args.compare_only:
                    fresh = out / r.result if (out / r.result).is_file() else None
                else:
                    fresh, seconds = run(r, tree, copy, args.home, out, log)
                    spent += seconds
                if fresh is None:
                    failed.append(r.result)
                    print(f"  {r.result}: run failed or wrote nothing (see {out / 'reproduce.log'})", flush=True)
                    continue
                differing += bool(report(r, fresh, args.against, args.max_diffs))
                sys.stdout.flush()
            times[group] = round(spent)
    if work is not None:
        shutil.rmtree(work)
    if not args.compare_only:
        recorded = out / "times.json"
        earlier = json.loads(recorded.read_text(encoding="utf-8")) if recorded.is_file() else {}
        recorded.write_text(json.dumps({**earlier, **times}, indent=1) + "\n", encoding="utf-8")
    files = sum(len(runs) for runs in plan.values())
    print(f"summary: {files - differing - len(failed)} identical, {differing} differ, {len(failed)} failed"
          + (f"; wall seconds per group {times}" if not args.compare_only else ""))
    return 1 if differing or failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
