"""Neighbour feedback expansion on STARD (issue 45, round 27): can the confirmed chunks of a question's nearest
confirmed questions bring relevant chunks from outside the learned hybrid's 100 into it?

Recall@100 is the learned hybrid's binding gap. For one split's cached questions (bench/agreement_gate.py's cache:
each fold's learned hybrid rebuilt from the params the split's committed result stored) each question's 20 nearest
confirmed questions (of its learning folds) expand it, each weighted exp(sharpness × (cos − 1)) as the neighbour
signal weighs them:

- "dense": a Rocchio step on the query vector, q + β × the weighted mean of the neighbours' confirmed chunks'
  indexed vectors, searched over every chunk;
- "families": every article of the neighbours' documents (statutes), by the documents' weighted share × cosine;
- "terms": the query's tokens and the `TERMS` most distinctive words (tf × idf) of the neighbours' confirmed chunks,
  searched by BM25;
- "adapter": the query adapter (`skills.store.adapter`, issue 45 point 2) fitted on the learning folds' confirmed
  pairs, the query moved by each of `BLENDS`, searched over every chunk (dense alone, as a list of its own);
- `CONTROLS`, "plain dense" and "plain bm25": the query's own vector and tokens searched as deep, no neighbours.

Each source's list joins only the shipped order's tail (`merged`), so the shipped top 10 stays exactly as it is and
MRR@10 and nDCG@10 (seen and unseen) cannot move: "rrf", chunks 11-100 are the reciprocal-rank fusion of the
shipped tail and the expansion's list at weight λ; "slots", the shipped order keeps its first 100 − m and the
expansion's first chunks it lacks take the last m places. The (source, β, merge) of each held-out fold is chosen on
the other folds' questions: the best recall@100 among the settings whose never-confirmed questions lose at most
`UNSEEN_RECALL_LOSS` of recall@100 against the shipped order (plus one standard error), or none.

Writes bench/results/feedback-expansion[-TAG].json (splits not named keep their entries).

Usage: python bench/learned_expansion.py [--splits 4] [--tag TAG]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.adapter_blend import split_folds  # noqa: E402
from bench.agreement_gate import cache_path, metrics as measures, order, question_entry  # noqa: E402
from bench.feedback import FOLDS  # noqa: E402
from bench.learned_rerank import load_cache  # noqa: E402
from bench.machine import facts as machine_facts, results_dir, write  # noqa: E402
from lambdarag.skills.store.learned import HEAD, LearnedParams  # noqa: E402
from lambdarag.state import PUBLIC  # noqa: E402

DEPTH = 100
"""Chunks of each expansion list fused into the tail."""
TERMS = 10
BETAS = (0.5, 1.0, 2.0)
"""Rocchio weights of the neighbours' centroid ("dense")."""
MERGES = (("rrf", 0.5), ("rrf", 1.0), ("slots", 10), ("slots", 20), ("slots", 30))
"""How an expansion list joins the tail: reciprocal-rank fusion at weight λ (0.25 moved nothing and 2 lost recall
on split 4's first replay), or the last m of the 100 places."""
RRF_K = 60
UNSEEN_RECALL_LOSS = 0.005
BLENDS = (0.5, 1.0)
"""Query adapter blends ("adapter"): the product's default and the mapped vector alone."""
SOURCES = ("dense", "families", "terms", "adapter")
CONTROLS = ("plain dense", "plain bm25")
"""The same searches without the neighbours (the query's own vector, its own tokens, `DEPTH` deep): how much of a
source's gain is only a deeper list of plain retrieval."""


def merged(shipped: list, expansion: list, merge: str, amount: float) -> list:
    """Returns the shipped order with its first `HEAD` kept and its tail joined by `expansion` (chunks of the head
    left out): "rrf", the reciprocal-rank fusion of the tail and `expansion` at weight `amount`; "slots", the first
    100 − `amount` kept and the last `amount` places given to `expansion`'s first chunks not among them."""
    head = shipped[:HEAD]
    if merge == "slots":
        kept = shipped[:DEPTH - int(amount)]
        taken = set(kept)
        return kept + [c for c in expansion if c not in taken][:DEPTH - len(kept)]
    taken = set(head)
    fused: dict = {}
    for i, c in enumerate(shipped[HEAD:]):
        fused[c] = fused.get(c, 0.0) + 1.0 / (RRF_K + i)
    for i, c in enumerate(x for x in expansion if x not in taken):
        fused[c] = fused.get(c, 0.0) + amount / (RRF_K + i)
    return head + sorted(fused, key=lambda c: -fused[c])[:DEPTH - HEAD]


def expansions(entries: dict, split: int) -> dict:
    """Returns qid → source setting → its expansion list (best first, `DEPTH` chunks)."""
    from lambdarag.skills.store.adapter import QueryAdapter, fit_adapter

    backend, _, view, queries, relevant, vectors, row, fold_of, _ = split_folds(split)
    passages = np.asarray(backend.vectors, dtype=np.float32)
    prow = {c: i for i, c in enumerate(view.ids)}
    adapters = {}
    for fold in {e["fold"] for e in entries.values()}:
        taken = [(row[q["qid"]], prow[c]) for q in queries if fold_of[q["qid"]] != fold
                 for c in relevant[q["qid"]] if c in prow]
        qs, ps = (np.array(x) for x in zip(*taken))
        adapters[fold] = fit_adapter(vectors[qs], passages[ps], np.ones(len(qs)))
    members: dict = {}
    for c, f in view.family.items():
        members.setdefault(f, []).append(c)
    tf, terms, df = view.lexicon()
    idf = {t: np.log(tf.shape[0] / (1 + n)) for t, n in df.items()}
    out = {}
    for q in queries:
        e = entries.get(q["qid"])
        if e is None:
            continue
        sharp = float(e["params"].get("sharpness", 10.0))
        w = np.exp(sharp * (np.asarray(e["sims"], dtype=np.float64) - 1.0))
        vector = vectors[row[q["qid"]]]
        s_q = passages @ vector
        centroid = np.zeros_like(vector)
        share: dict = {}
        words: dict = {}
        for wi, chunks in zip(w, e["chunks"]):
            rows = [prow[c] for c in chunks if c in prow]
            if not rows:
                continue
            centroid += wi * passages[rows].mean(axis=0)
            for f in {view.family.get(c, c) for c in chunks}:
                share[f] = share.get(f, 0.0) + wi
            for r in rows:
                for j, n in zip(tf.indices[tf.indptr[r]:tf.indptr[r + 1]], tf.data[tf.indptr[r]:tf.indptr[r + 1]]):
                    words[terms[j]] = words.get(terms[j], 0.0) + wi * n * idf.get(terms[j], 0.0) / len(rows)
        total = w.sum() or 1.0
        lists = {}
        s_c = passages @ (centroid / total)
        for beta in BETAS:
            s = s_q + beta * s_c
            top = np.argpartition(-s, DEPTH)[:DEPTH]
            lists["dense", beta] = [view.ids[i] for i in top[np.argsort(-s[top], kind="stable")]]
        for blend in BLENDS:
            moved = QueryAdapter(adapters[e["fold"]], blend, -1.0).apply(vector, 1.0)
            s = passages @ moved
            top = np.argpartition(-s, DEPTH)[:DEPTH]
            lists["adapter", blend] = [view.ids[i] for i in top[np.argsort(-s[top], kind="stable")]]
        fam = [(c, share[f] / total * float(s_q[prow[c]])) for f in share for c in members.get(f, ()) if c in prow]
        lists["families", 0.0] = [c for c, _ in sorted(fam, key=lambda x: -x[1])[:DEPTH]]
        tokens = backend.tokenizer(q["query"])
        extra = [t for t, _ in sorted(words.items(), key=lambda x: -x[1]) if t not in tokens][:TERMS]
        lists["terms", 0.0] = [h.id for h, _ in backend.bm25(tokens + extra, DEPTH, user=PUBLIC)]
        lists["plain bm25", 0.0] = [h.id for h, _ in backend.bm25(tokens, DEPTH, user=PUBLIC)]
        top = np.argpartition(-s_q, DEPTH)[:DEPTH]
        lists["plain dense", 0.0] = [view.ids[i] for i in top[np.argsort(-s_q[top], kind="stable")]]
        out[q["qid"]] = lists
    return out


def evaluated(entries: dict, lists: dict) -> dict:
    """Returns per question: fold, seen, plain and shipped metrics and each (source, β, merge, amount) setting's."""
    out = {}
    for qid, e in entries.items():
        shipped = order(e, LearnedParams.from_dict(e["params"]), e["opened"])
        rel = e["relevant"]
        settings = {(src, beta, *m): measures(merged(shipped, lst, *m), rel)
                    for (src, beta), lst in lists[qid].items() for m in MERGES} if e["tailed"] else {}
        out[qid] = {"fold": e["fold"], "seen": e["seen"], "plain": measures([c for c, _ in e["base"]][:100], rel),
                    "shipped": measures(shipped, rel), "settings": settings}
    return out


def value(r: dict, setting) -> np.ndarray:
    return r["settings"].get(setting, r["shipped"]) if setting else r["shipped"]


def choose(rows: list, settings: list):
    """Returns the setting of best recall@100 on `rows` whose unseen recall@100 loss against the shipped order is
    at most `UNSEEN_RECALL_LOSS` plus one standard error, or None."""
    unseen = [r for r in rows if not r["seen"]]
    best, best_recall = None, np.mean([r["shipped"][1] for r in rows])
    for s in settings:
        loss = np.array([r["shipped"][1] - value(r, s)[1] for r in unseen])
        if len(loss) and loss.mean() + loss.std(ddof=1) / np.sqrt(len(loss)) > UNSEEN_RECALL_LOSS:
            continue
        recall = np.mean([value(r, s)[1] for r in rows])
        if recall > best_recall + 1e-9:
            best, best_recall = s, recall
    return best


def cached(split: int, folds) -> dict:
    """Returns bench/agreement_gate.py's cache of `split`'s held-out `folds`, one file per fold (built when missing,
    so a run stopped part-way keeps the folds it finished)."""
    entries = {}
    for fold in folds:
        path = cache_path(split).with_name(f"agreement-{split}-fold{fold}.pkl")
        entries.update(load_cache(split, question_entry, path, [fold]))
    return entries


def split_report(split: int, folds=range(FOLDS), expand: bool = True) -> dict:
    """Returns plain, shipped and (with `expand`) expanded (chosen per held-out fold on the other `folds`, and each
    source alone) metrics on `split`'s held-out `folds`."""
    entries = cached(split, folds)
    rows = evaluated(entries, expansions(entries, split) if expand else dict.fromkeys(entries, {}))
    every = sorted({s for r in rows.values() for s in r["settings"]})
    held = {name: {} for name in ("hybrid", "shipped", *(("expanded", *SOURCES, *CONTROLS) if expand else ()))}
    chosen = []
    for fold in folds:
        learning = [r for r in rows.values() if r["fold"] != fold]
        picks = {"expanded": choose(learning, [s for s in every if s[0] in SOURCES]),
                 **{src: choose(learning, [s for s in every if s[0] == src]) for src in (*SOURCES, *CONTROLS)}
                 } if expand else {}
        chosen.append({"fold": fold, **{k: list(v) if v else None for k, v in picks.items()}})
        for q, r in rows.items():
            if r["fold"] == fold:
                held["hybrid"][q], held["shipped"][q] = r["plain"], r["shipped"]
                for name, s in picks.items():
                    held[name][q] = value(r, s)
    out = {"questions": len(rows), "chosen": chosen}
    for subset, keep in (("all", lambda r: True), ("seen", lambda r: r["seen"]), ("unseen", lambda r: not r["seen"])):
        ids = [q for q, r in rows.items() if keep(r)]
        out[subset] = {"n": len(ids), **{name: dict(zip(("mrr@10", "recall@100", "ndcg@10"), np.round(
            np.mean([m[q] for q in ids], axis=0), 4).tolist())) for name, m in held.items()}}
    out["in_sample"] = {" ".join(map(str, s)): round(float(np.mean([value(r, s)[1] for r in rows.values()])), 4)
                        for s in every}
    return out


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splits", type=int, nargs="+", default=[4])
    p.add_argument("--folds", type=int, nargs="+", default=list(range(FOLDS)))
    p.add_argument("--cache-only", action="store_true", help="build the folds' caches and stop")
    p.add_argument("--before", action="store_true", help="plain and shipped only (no expansion)")
    p.add_argument("--tag", default="", help="write bench/results/feedback-expansion-TAG.json")
    args = p.parse_args()
    name = "feedback-expansion" + (f"-{args.tag}" if args.tag else "")
    kept = results_dir() / f"{name}.json"
    result = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {"splits": {}}
    result["settings"] = {"depth": DEPTH, "terms": TERMS, "betas": list(BETAS), "merges": [list(m) for m in MERGES],
                          "unseen_recall_loss": UNSEEN_RECALL_LOSS}
    if args.cache_only:
        for split in args.splits:
            cached(split, args.folds)
        return {}
    for split in args.splits:
        result["splits"][str(split)] = {"machine_before": machine_facts(), **split_report(split, args.folds, not args.before)}
        write(name, result)
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout, ensure_ascii=False, indent=1)
    print()
