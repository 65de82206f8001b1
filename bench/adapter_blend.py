"""Query adapter settings on STARD: which blend and cosine floor spare the questions never confirmed.

For each split (0: question order, 1-3: `bench/feedback.py --partition` seeds; 3 is the fresh split) and each
of its five folds, the learned hybrid is rebuilt with the params that split's committed result stored for that
fold (bench/results/feedback.json, feedback-partition-SEED.json), the query adapter is fitted on the same
learning folds, and the held-out fold is ranked by plain hybrid, the learned hybrid and the learned hybrid with
the adapter under each of `SETTINGS`, in the same run. MRR@10, R@100 and nDCG@10, overall and for the seen and
unseen questions (as bench/feedback.py splits them), and p50 latency. Writes bench/results/feedback-adapter-blend.json
(the splits not named keep their entries).

With `--fitted`, the adapter's blend is not set but fitted per fold, as the product's fit does
(`orchestration.learning.choose_blend`: 0 or one of `ADAPTER_BLENDS`, by out-of-fold nDCG@10 under the unseen bound
in the learning folds' inner cross-validation), and the held-out fold is ranked by plain hybrid, the learned hybrid
and the learned hybrid with the fitted adapter ("fitted"); writes bench/results/feedback-adapter-fitted.json, with
each fold's blend and its inner report.

With `--tail-model`, each fold's committed params get a tail model fitted on that fold's learning questions, as
`lambdarag feedback fit` fits it (`orchestration.learning.choose_tail_model` over the fit's inner folds,
`fit_rows`), and the held-out fold is ranked by plain hybrid, the learned hybrid and the learned hybrid with the
tail model ("hybrid+learned+tail"); writes bench/results/feedback-tail-model.json, with each fold's choice.

With `--fitted-boost`, each fold's learning questions are fitted again as `lambdarag feedback fit` fits them with
``agreementBoost: null`` (`fit_rows`, then `choose`: the head weights, gate and agreement boost jointly), and the
held-out fold is ranked by plain hybrid, the committed learned hybrid and the refitted one ("hybrid+learned+boost");
writes bench/results/feedback-boost-fitted.json, with each fold's refitted params and report.

With `--settings` and no name, only plain and learned hybrid are ranked: the committed fits under this tree's
retrieval code (a change to what the learned stage does, measured without refitting). `--tag TAG` writes
<name>-TAG.json instead, a new file beside the committed one; `--folds` ranks only those held-out folds.

Usage: python bench/adapter_blend.py [--splits 0 1 2 3] [--settings [NAME ...]]
                                     [--fitted | --tail-model | --fitted-boost] [--folds 0 ...] [--tag TAG]
                                     [--tag TAG]
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.feedback import EMBEDDED, FOLDS, open_stard, timed  # noqa: E402
from bench.machine import facts as machine_facts, results_dir, write  # noqa: E402
from lambdarag.orchestration.learning import ADAPTER_BLENDS  # noqa: E402
from lambdarag.skills.store.adapter import FLOOR  # noqa: E402
COMMITTED = ROOT / "bench" / "results"

SETTINGS = {"blend 0.5, floor 0.7": (0.5, 0.7), "blend 0.35, floor 0.7": (0.35, 0.7),
            "blend 0.25, floor 0.7": (0.25, 0.7), "blend 0.5, floor 0.9": (0.5, 0.9),
            "blend 0.35, floor 0.9": (0.35, 0.9)}
"""(blend, floor) of the adapter measured; the first is the one round 18 measured in bench/feedback.py."""


def stored_fits(split: int) -> list[dict]:
    """Returns the five folds' fitted params of `split` as its committed result file stored them."""
    if split == 0:
        return json.loads((COMMITTED / "feedback.json").read_text(encoding="utf-8"))["stard"]["fits"]
    return json.loads((COMMITTED / f"feedback-partition-{split}.json").read_text(encoding="utf-8"))["fits"]


def split_folds(split: int) -> tuple:
    """Returns STARD's index, embedder, `CorpusView`, train questions and their relevant chunks (`open_stard`), the
    questions' vectors and rows, each question's fold on `split` and each fold's committed learned params."""
    import numpy as np

    from lambdarag.orchestration.feedback.confirmations import embed_batches

    backend, embedder, view, queries, chunks = open_stard(0)
    if 0 not in EMBEDDED:
        EMBEDDED[0] = embed_batches(embedder, [q["query"] for q in queries])
    row = {q["qid"]: i for i, q in enumerate(queries)}
    place = np.random.default_rng(split).permutation(len(queries)) if split else range(len(queries))
    fold_of = {q["qid"]: int(n) % FOLDS for q, n in zip(queries, place)}
    fits = {f["fold"]: f for f in stored_fits(split) if f["system"] == "hybrid+learned"}
    return backend, embedder, view, queries, chunks, EMBEDDED[0], row, fold_of, fits


FITTED = "fitted"
"""The `--fitted` system: the adapter at the blend `choose_blend` fits on each fold's learning folds."""
TAILED = "hybrid+learned+tail"
"""The `--tail-model` system: the committed params with the tail model `choose_tail_model` fits on each fold's
learning questions."""
BOOSTED = "hybrid+learned+boost"
"""The `--fitted-boost` system: params refitted on each fold's learning questions with the agreement boost fitted."""


def split_result(split: int, settings: dict, folds: Sequence[int] = range(FOLDS), tail_model: bool = False,
                 boost: bool = False) -> dict:
    """Returns the metrics and p50s of plain, learned and adapted hybrid (under each of `settings`; a blend of None
    is fitted per fold, `FITTED`), with `tail_model` the learned hybrid with a fitted tail model (`TAILED`) and with
    `boost` the one refitted with the agreement boost (`BOOSTED`), on `split`'s held-out `folds`."""
    from dataclasses import replace

    import numpy as np
    from ranx import Qrels, Run, evaluate

    from lambdarag import Context
    from lambdarag.orchestration.learning import (base_ranking, build_learned, choose, choose_blend,
                                                  choose_tail_model, fit_query_adapter, fit_rows, learned_ranking,
                                                  retrieval_term)
    from lambdarag.skills.store.adapter import QueryAdapter
    from lambdarag.skills.store.learned import LearnedParams, Pair
    from lambdarag.skills.store.records import RetrievalPlan

    backend, embedder, view, queries, chunks, vectors, row, fold_of, fits = split_folds(split)
    plan = RetrievalPlan(bm25_top_k=100, dense_top_k=100, fused_top_k=100)
    names = ["hybrid", "hybrid+learned", *settings, *([TAILED] if tail_model else []), *([BOOSTED] if boost else [])]
    runs, latency, seen, chosen = {n: {} for n in names}, {n: [] for n in names}, {}, []
    unlearned, ranking = functools.lru_cache(maxsize=None)(base_ranking(backend, embedder)), learned_ranking(
        backend, embedder)
    for fold in folds:
        learn = [q for q in queries if fold_of[q["qid"]] != fold]
        pairs = [Pair(q["query"], chunks[q["qid"]]) for q in learn]
        pair_vectors = vectors[[row[q["qid"]] for q in learn]]
        learned = build_learned(view, pairs, pair_vectors, LearnedParams.from_dict(fits[fold]))
        matrix = fit_query_adapter(view, pairs, pair_vectors)
        contexts = {"hybrid": Context(embedder=embedder, resources={"index": backend}),
                    "hybrid+learned": Context(embedder=embedder, resources={"index": backend, "learned": learned})}
        for name, (blend, floor) in settings.items():
            if blend is None:
                blend, report = choose_blend(view, pairs, pair_vectors, learned.params, unlearned, ranking)
                chosen.append({"fold": fold, **report})
                print(json.dumps(chosen[-1]), file=sys.stderr, flush=True)
            contexts[name] = Context(embedder=embedder, resources={"index": backend, "learned": build_learned(
                view, pairs, pair_vectors, learned.params, learned.term_map,
                QueryAdapter(matrix, blend, floor) if blend else None)})
        if tail_model:
            model, report = choose_tail_model(fit_rows(view, pairs, pair_vectors, unlearned), learned.params)
            chosen.append({"fold": fold, **report, **({"model": model.to_dict()} if model else {})})
            print(json.dumps(report), file=sys.stderr, flush=True)
            contexts[TAILED] = Context(embedder=embedder, resources={"index": backend, "learned": build_learned(
                view, pairs, pair_vectors, replace(learned.params, tail_model=model), learned.term_map)})
        if boost:
            refitted, report = choose(fit_rows(view, pairs, pair_vectors, unlearned))
            chosen.append({"fold": fold, "params": refitted.to_dict(), "report": report})
            print(json.dumps(chosen[-1]), file=sys.stderr, flush=True)
            contexts[BOOSTED] = Context(embedder=embedder, resources={"index": backend, "learned": build_learned(
                view, pairs, pair_vectors, refitted, learned.term_map)})
        terms = {n: retrieval_term("hybrid", learned=n != "hybrid") for n in names}
        taught = {c for q in learn for c in chunks[q["qid"]]}
        for q in (q for q in queries if fold_of[q["qid"]] == fold):
            seen[q["qid"]] = bool(set(chunks[q["qid"]]) & taught)
            for name in names:
                state, wall, _ = timed(terms[name], q["query"], plan, contexts[name])
                latency[name].append(wall)
                runs[name][q["qid"]] = {h.chunk_id: float(100 - i) for i, h in enumerate(state.hits)} or {"-": 0.0}
        print(f"split {split} fold {fold} done", file=sys.stderr, flush=True)
    qrels = {q["qid"]: {c: 1 for c in chunks[q["qid"]]} for q in queries if fold_of[q["qid"]] in folds}
    out = {"folds": list(folds),
           **({"refits" if boost else "tail_models" if tail_model else "blends": chosen} if chosen else {}),
           "p50_ms": {n: round(float(np.percentile(v, 50)), 2) for n, v in latency.items()}}
    for subset, keep in (("all", lambda q: True), ("seen", lambda q: seen[q]), ("unseen", lambda q: not seen[q])):
        ids = [q for q in qrels if keep(q)]
        out[subset] = {"n": len(ids)}
        for name, run in runs.items():
            scores = evaluate(Qrels({q: qrels[q] for q in ids}), Run({q: run[q] for q in ids}),
                              ["mrr@10", "recall@100", "ndcg@10"])
            out[subset][name] = {k: round(float(v), 4) for k, v in scores.items()}
    return out


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splits", type=int, nargs="+", default=[0, 1, 2, 3])
    p.add_argument("--settings", nargs="*", choices=SETTINGS, default=list(SETTINGS),
                   help="the adapter settings measured (a loaded machine can afford the chosen one alone; none: "
                        "plain and learned hybrid only)")
    p.add_argument("--folds", type=int, nargs="+", default=list(range(FOLDS)),
                   help="the held-out folds ranked (a loaded machine can afford one)")
    p.add_argument("--tag", default="", help="write bench/results/<name>-TAG.json, keeping the committed file")
    p.add_argument("--fitted", action="store_true",
                   help="fit the blend per fold instead; writes bench/results/feedback-adapter-fitted.json")
    p.add_argument("--tail-model", action="store_true",
                   help="fit a tail model per fold instead; writes bench/results/feedback-tail-model.json")
    p.add_argument("--fitted-boost", action="store_true",
                   help="refit each fold with the agreement boost instead; writes "
                        "bench/results/feedback-boost-fitted.json")
    args = p.parse_args()
    name = "feedback-boost-fitted" if args.fitted_boost else "feedback-tail-model" if args.tail_model else \
        "feedback-adapter-fitted" if args.fitted else "feedback-adapter-blend"
    name += f"-{args.tag}" if args.tag else ""
    kept = results_dir() / f"{name}.json"
    result = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {"splits": {}}
    settings = {FITTED: (None, FLOOR)} if args.fitted else {n: SETTINGS[n] for n in args.settings}
    result["settings"] = {"blends": [0.0, *ADAPTER_BLENDS], "floor": FLOOR} if args.fitted else \
        {n: list(SETTINGS[n]) for n in args.settings}
    for split in args.splits:
        result["splits"][str(split)] = {"machine_before": machine_facts(),
                                        **split_result(split, settings, args.folds, args.tail_model,
                                                       args.fitted_boost)}
        write(name, result)
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout, ensure_ascii=False, indent=1)
    print()
