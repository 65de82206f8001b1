"""Gate by neighbour agreement on STARD (issue 45): does trusting learned boosts only where a question's nearest
confirmed questions agree spare the questions whose answers were never confirmed?

Round 21 found that the nearest cosine cannot separate seen from unseen questions. Here a question's k nearest
confirmed questions vote: their agreement (`skills.store.learned.agreement`) is the closeness-weighted share of
their pairs whose confirmed chunks (or, "families", the statutes of those chunks) overlap. For one split (0: question
order, 1-3: `bench/feedback.py --partition` seeds, 4 and up: a fresh partition whose result file
feedback-partition-SEED.json must exist) each fold's learned hybrid is rebuilt from the params that split's committed
result stored (as bench/adapter_blend.py does) and every held-out question is cached once
(`$LAMBDARAG_HOME/cache/agreement-<split>.pkl`, by bench/learned_rerank.py's `build_cache`): its unlearned list and
the learned `score_matrix` with every signal,
the shipped gate's decision, whether the tail acts, and its 20 nearest confirmed questions (cosines, chunks,
families). Gates are then re-ranked from the cache with `arrange`, as a query is ranked, in seconds:

- "shipped": the committed params' own gate (reproduces the split's committed result);
- "agreement": the shipped gate and, besides, the agreement of `AGREEMENT_GRID`'s (k, measure) at least a
  threshold; (k, measure, threshold) chosen per held-out fold on the other folds' questions only, as the product's
  fit chooses its gate: best mean nDCG@10 among the settings whose never-confirmed questions lose at most
  `UNSEEN_LOSS` nDCG@10 against plain retrieval (plus `LOSS_CONFIDENCE` standard errors);
- "boost": the shipped gate, and where it opens and the agreement reaches a threshold, a head that weighs the
  neighbour signal `BOOSTS` more than the fitted params do (the signal that lifts seen questions most and costs unseen
  ones most); (k, measure, boost, threshold) chosen likewise. Both may keep the shipped gate, and a setting is allowed
  when its unseen upper loss is within the bound or no more than the shipped gate's own (as the tail model's fit
  allows, `orchestration.learning.choose_tail_model`);
- "boost fixed": the boost at `FIXED`, as the product applies it with ``agreementBoost: 2``, read off split 1's cache
  in sample (a setting of high MRR@10 whose unseen mean loss there stayed within 0.005) before splits 2-4 were
  cached: how much of that gain holds elsewhere;
- round 26's `LEVERS`, each chosen per held-out fold on the other folds' questions under the same bound (`levers`):
  "boost fitted" (the fit's rule with ``agreementBoost: null``: `FIXED`'s setting and floor, a boost of
  `AGREEMENT_BOOSTS`, here with the committed head weights rather than refitted with them), "families" (the family
  weight raised instead), "scaled" (the neighbour weight raised by a scale × the agreement, no floor) and
  "logistic" (the neighbour boost where a logistic of agreement and nearest cosine, fitted on those folds, says
  seen at least a threshold).

Also the separation of seen from unseen questions among those the shipped gate opens for (`separation`): the
nearest cosine's and each agreement's.

A learning question's cached ranking came from its own fold's learned hybrid, which learned from the held-out
fold's pairs too, so the threshold is not strictly blind to that fold (bench/learned_rerank.py's caveat). Writes
bench/results/feedback-agreement[-TAG].json (splits not named keep their entries).

Usage: python bench/agreement_gate.py [--splits 1 2 3 0] [--tag TAG]
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Iterable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.feedback import FOLDS  # noqa: E402
from bench.learned_rerank import every_signal, load_cache as cached  # noqa: E402
from bench.machine import facts as machine_facts, results_dir, write  # noqa: E402
from lambdarag.orchestration.learning import (AGREEMENT_BOOSTS, GATE_QUANTILES, LOSS_CONFIDENCE,  # noqa: E402
                                              UNSEEN_LOSS)
from lambdarag.orchestration.metrics import score  # noqa: E402
from lambdarag.skills.store.learned import (AGREEMENT_FLOOR, AGREEMENT_NEIGHBOURS, LearnedParams,  # noqa: E402
                                            agreement, arrange)

NEAR = 20
"""Nearest confirmed questions cached per question (the largest k of `AGREEMENT_GRID`)."""
AGREEMENT_GRID = tuple(itertools.product((3, 5, 10, 20), ("chunks", "families")))
"""(k nearest confirmed questions, what their agreement compares) tried by the fitted gates."""
BOOSTS = tuple(b for b in AGREEMENT_BOOSTS if b)
LEVERS = ("boost fitted", "families", "scaled", "logistic")
"""Round 26's levers (`levers`), each fitted per held-out fold on the other folds' questions."""
"""Neighbour weight added to the fitted head where the agreement gate of "boost" opens."""
SCALES = (1.0, 2.0, 4.0, 8.0)
"""Neighbour weight per unit of agreement added to the fitted head by "scaled" (round 26's lever: no floor)."""
FIXED = ((AGREEMENT_NEIGHBOURS, "chunks"), AGREEMENT_FLOOR, 2.0)
"""(setting, threshold, boost) of "boost fixed": the product's agreement boost (`LearnedIndex.head_params`) with
``orchestration.feedback.agreementBoost: 2``."""


def cache_path(split: int) -> Path:
    home = Path(os.environ.get("LAMBDARAG_HOME") or Path.home() / ".lambdarag")
    return home / "cache" / f"agreement-{split}.pkl"


def question_entry(learned, backend, view, query: str, vector: np.ndarray, unlearned, relevant: set) -> dict:
    """Returns one question's cached ranking inputs: its `relevant` chunks and fold params, the unlearned list, the
    `score_matrix` of every learned signal (with the learned candidates where the product adds them), the shipped
    gate's facts and its near questions."""
    from lambdarag.skills.learned import with_candidates
    from lambdarag.skills.store.learned import GATE_SIGNALS, gate_features, score_matrix

    base = unlearned.fused
    fused, near, may_read, signals = every_signal(learned, backend, view, query, vector, unlearned)
    tailed = learned.tailed(near)
    if learned.opened(near) and tailed:
        signals = with_candidates(signals, learned.candidate_scores(vector, near, fused, may_read))
    ids, matrix = score_matrix(base, signals)
    admitted = learned.opened(near)
    if admitted and learned.params.gate_weights:
        gated = score_matrix(base, {n: signals.get(n, {}) for n in GATE_SIGNALS})[1]
        admitted = learned.admits(gate_features(near, signals["neighbours"], base, learned.pairs[near.rows[0]].chunks,
                                                gated))
    wide = learned.nearest(vector, NEAR)
    return {"relevant": relevant, "params": learned.params.to_dict(), "base": base, "ids": ids,
            "matrix": matrix.astype(np.float32), "opened": bool(admitted), "tailed": bool(tailed), "sims": wide.sims,
            "chunks": [learned.pairs[i].chunks for i in wide.rows],
            "families": [tuple(learned.families.get(c, c) for c in learned.pairs[i].chunks) for i in wide.rows]}


def load_cache(split: int) -> dict:
    """Returns the cache of `split` (`question_entry` per question), built when missing."""
    return cached(split, question_entry, cache_path(split))


def order(entry: dict, params: LearnedParams, opened: bool, boost: float = 0.0, signal: str = "neighbours"
          ) -> list[str]:
    """Returns the learned order of a cached question as `learned_boost` ranks it, the head's `signal` weight
    raised by `boost`."""
    if boost:
        weights = {**params.weights, signal: params.weights.get(signal, 0.0) + boost}
        params = replace(params, weights=weights)
    params = params if entry["tailed"] else replace(params, tail={})
    return [c for c, _ in arrange(entry["base"], entry["ids"], entry["matrix"].astype(np.float64), params,
                                  opened)][:100]


def metrics(ranking: list, relevant: set) -> np.ndarray:
    """Returns MRR@10, recall@100 and binary nDCG@10 of one ranking (`orchestration.metrics`)."""
    judged = dict.fromkeys(relevant, 1.0)
    return np.array([score(m, ranking, judged) for m in ("mrr@10", "recall@100", "ndcg@10")])


def agreements(entry: dict) -> dict:
    """Returns each `AGREEMENT_GRID` setting's agreement of a cached question's near questions."""
    sharp = float(entry["params"].get("sharpness", 10.0))
    return {(k, m): agreement(entry["sims"][:k], entry[m][:k], sharp) for k, m in AGREEMENT_GRID}


def evaluated(entries: dict) -> dict:
    """Returns per question: plain, shipped and closed metrics, the heads' metrics with the neighbour weight
    raised by each of `BOOSTS` ("boost"), the family weight so raised ("families") and the neighbour weight raised
    by each of `SCALES` times its `FIXED` agreement ("scaled"), with its agreements (what the gates choose among)."""
    out = {}
    for qid, e in entries.items():
        params = LearnedParams.from_dict(e["params"])
        agree = agreements(e)
        lifted = {(name, b): metrics(order(e, params, True, b * (agree[FIXED[0]] if name == "scaled" else 1.0),
                                           "families" if name == "families" else "neighbours"), e["relevant"])
                  for name, grid in (("boost", BOOSTS), ("families", BOOSTS), ("scaled", SCALES)) for b in grid} \
            if e["opened"] else {}
        out[qid] = {"plain": metrics([c for c, _ in e["base"]][:100], e["relevant"]),
                    "open": metrics(order(e, params, e["opened"]), e["relevant"]),
                    "closed": metrics(order(e, params, False), e["relevant"]),
                    "boost": {b: lifted[name, b] for name, b in lifted if name == "boost"},
                    "lifted": lifted,
                    "agree": agree, "seen": e["seen"], "fold": e["fold"], "opened": e["opened"],
                    "nearest": float(e["sims"][0]) if len(e["sims"]) else -1.0}
    return out


def upper_loss(losses: np.ndarray, confidence: float = LOSS_CONFIDENCE) -> float:
    """Returns the mean of `losses` plus `confidence` standard errors of it (the fit's `upper_loss`, one column)."""
    return float(losses.mean() + confidence * losses.std() / np.sqrt(len(losses))) if len(losses) else 0.0


def gated(rows: list, kind: str, setting, threshold: float, boost: float = 0.0) -> np.ndarray:
    """Returns each row's metrics under a `kind` gate ("agreement": closed below the threshold; "boost": the head
    boosted by `boost` at or above it) of agreement `setting` and `threshold` (None: the shipped gate)."""
    if setting is None:
        return np.array([r["open"] for r in rows])
    if kind == "agreement":
        return np.array([r["open"] if r["agree"][setting] >= threshold else r["closed"] for r in rows])
    return np.array([r["boost"][boost] if r["opened"] and r["agree"][setting] >= threshold else r["open"]
                     for r in rows])


def best_of(rows: list, options: Iterable[tuple], confidence: float = LOSS_CONFIDENCE):
    """Returns the key of the (key, each row's metrics) `options` of best mean nDCG@10 over `rows` whose unseen
    upper loss against plain retrieval is within `UNSEEN_LOSS` or no more than the shipped gate's; the first
    option is the shipped gate, kept when none beats it."""
    unseen = np.array([not r["seen"] for r in rows])
    plain = np.array([r["plain"][2] for r in rows])
    options = iter(options)
    best, shipped = next(options)
    bound, top = max(UNSEEN_LOSS, upper_loss(plain[unseen] - shipped[unseen, 2], confidence)), shipped[:, 2].mean()
    for key, m in options:
        if upper_loss(plain[unseen] - m[unseen, 2], confidence) <= bound and m[:, 2].mean() > top:
            best, top = key, m[:, 2].mean()
    return best


def choose(rows: list, kind: str, confidence: float = LOSS_CONFIDENCE) -> tuple:
    """Returns the (setting, threshold, boost) of best mean nDCG@10 over `rows` whose unseen upper loss against
    plain retrieval is within `UNSEEN_LOSS` or no more than the shipped gate's (None, 0.0, 0.0: the shipped gate)."""
    def settings():
        for s in AGREEMENT_GRID:
            values = np.array([r["agree"][s] for r in rows])
            for t in sorted(set(np.round(np.quantile(values, GATE_QUANTILES), 4))):
                yield from ((s, float(t), b) for b in (BOOSTS if kind == "boost" else (0.0,)))
    return best_of(rows, itertools.chain([((None, 0.0, 0.0), gated(rows, kind, None, 0.0))],
                                         ((key, gated(rows, kind, *key)) for key in settings())), confidence)


def lifted(rows: list, name: str, lift: float, acts: Iterable[bool]) -> np.ndarray:
    """Returns each row's metrics with its head lifted by `name` ("boost", "families", "scaled", `evaluated`) at
    `lift` where it `acts` and the shipped gate opened, else as shipped."""
    return np.array([r["lifted"][name, lift] if a and r["opened"] and lift else r["open"] for r, a in zip(rows, acts)])


def seen_model(rows: list) -> np.ndarray:
    """Returns the weights of a logistic model of whether a question the shipped gate opened for was seen, from its
    `FIXED` agreement and nearest cosine (`seen_odds`; Newton steps, lightly ridged)."""
    opened = [r for r in rows if r["opened"]]
    x = np.array([seen_features(r) for r in opened])
    y = np.array([float(r["seen"]) for r in opened])
    w = np.zeros(x.shape[1])
    for _ in range(25):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        hessian = (x * (p * (1 - p))[:, None]).T @ x + 1e-3 * np.eye(len(w))
        w -= np.linalg.solve(hessian, x.T @ (p - y) + 1e-3 * w)
    return w


def seen_features(r: dict) -> np.ndarray:
    """Returns the logistic's features of a cached row: its `FIXED` agreement, its nearest cosine and 1."""
    return np.array([r["agree"][FIXED[0]], r["nearest"], 1.0])


def seen_odds(rows: list, w: np.ndarray) -> np.ndarray:
    """Returns each row's probability of being seen under the `seen_model` weights `w`."""
    return 1.0 / (1.0 + np.exp(-np.array([seen_features(r) for r in rows]) @ w))


def levers(rows: list, confidence: float = LOSS_CONFIDENCE) -> dict:
    """Returns round 26's levers fitted on `rows` (learning folds), each a function of rows → their metrics:
    "boost fitted" (the product's fit: the `FIXED` setting and floor, a boost of `BOOSTS` or none), "families"
    (the family weight raised where the product's boost would act), "scaled" (the neighbour weight raised by a
    scale × the agreement wherever the gate opens) and "logistic" (the neighbour weight raised where a logistic of
    agreement and nearest cosine says seen at least a threshold)."""
    agree = [r["agree"][FIXED[0]] >= FIXED[1] for r in rows]
    out = {}
    for name, grid in (("boost fitted", BOOSTS), ("families", BOOSTS), ("scaled", SCALES)):
        kind = "boost" if name == "boost fitted" else name
        acts = agree if name != "scaled" else [True] * len(rows)
        b = best_of(rows, [(0.0, lifted(rows, kind, 0.0, acts))] + [(b, lifted(rows, kind, b, acts)) for b in grid],
                    confidence)
        out[name] = (b, lambda test, kind=kind, b=b, name=name: lifted(
            test, kind, b, [name == "scaled" or r["agree"][FIXED[0]] >= FIXED[1] for r in test]))
    w = seen_model(rows)
    odds = seen_odds(rows, w)
    floors = sorted(set(np.round(np.quantile(odds[[r["opened"] for r in rows]], GATE_QUANTILES), 4)))
    b, t = best_of(rows, [((0.0, 1.0), lifted(rows, "boost", 0.0, agree))] + [
        ((b, float(t)), lifted(rows, "boost", b, odds >= t)) for b in BOOSTS for t in floors], confidence)
    out["logistic"] = ((b, t, np.round(w, 3).tolist()),
                       lambda test, b=b, t=t: lifted(test, "boost", b, seen_odds(test, w) >= t))
    return out


def separation(values: list, seen: list) -> float:
    """Returns the probability that a seen question's value exceeds an unseen one's (ROC AUC; ties count half)."""
    from scipy.stats import rankdata

    ranks, seen = rankdata(values), np.asarray(seen, dtype=bool)
    n, m = int(seen.sum()), int((~seen).sum())
    return float((ranks[seen].sum() - n * (n + 1) / 2) / (n * m)) if n and m else 0.5


def moved(rows: dict) -> dict:
    """Returns, for seen and unseen questions, how many the gate opens for, how many "boost fixed" boosts and how
    many of those it moves up and down in nDCG@10 against the shipped gate."""
    out = {}
    for subset in ("seen", "unseen"):
        mine = [r for r in rows.values() if r["seen"] == (subset == "seen") and r["opened"]]
        boosted = [r for r in mine if r["agree"][FIXED[0]] >= FIXED[1]]
        change = [gated([r], "boost", *FIXED)[0][2] - r["open"][2] for r in boosted]
        out[subset] = {"opened": len(mine), "boosted": len(boosted), "up": int(sum(c > 0 for c in change)),
                       "down": int(sum(c < 0 for c in change))}
    return out


def split_report(split: int, confidence: float = LOSS_CONFIDENCE) -> dict:
    """Returns plain, shipped and the fitted agreement gates' metrics on `split` (overall, seen, unseen) and each
    held-out fold's choice."""
    rows = evaluated(load_cache(split))
    held = {name: {} for name in ("hybrid", "shipped", "agreement", "boost", "boost fixed", *LEVERS)}
    chosen = []
    for fold in range(FOLDS):
        learning = [r for r in rows.values() if r["fold"] != fold]
        test = {q: r for q, r in rows.items() if r["fold"] == fold}
        pick = {kind: choose(learning, kind, confidence) for kind in ("agreement", "boost")}
        fitted = levers(learning, confidence)
        chosen.append({"fold": fold, **{k: {"setting": list(s) if s else None, "threshold": t, "boost": b}
                                        for k, (s, t, b) in pick.items()},
                       **{name: key for name, (key, _) in fitted.items()}})
        for name, (_, apply) in fitted.items():
            held[name].update(zip(test, apply(list(test.values()))))
        for q, r in test.items():
            held["hybrid"][q] = r["plain"]
            held["shipped"][q] = r["open"]
            for kind, (s, t, b) in pick.items():
                held[kind][q] = gated([r], kind, s, t, b)[0]
            held["boost fixed"][q] = gated([r], "boost", *FIXED)[0]
    out = {"questions": len(rows), "confidence": confidence, "chosen": chosen}
    for subset, keep in (("all", lambda r: True), ("seen", lambda r: r["seen"]), ("unseen", lambda r: not r["seen"])):
        ids = [q for q, r in rows.items() if keep(r)]
        out[subset] = {"n": len(ids), **{name: dict(zip(("mrr@10", "recall@100", "ndcg@10"), np.round(
            np.mean([m[q] for q in ids], axis=0), 4).tolist())) for name, m in held.items()}}
    out["boost_fixed_moved"] = moved(rows)
    opened = [r for r in rows.values() if r["opened"]]
    seen = [r["seen"] for r in opened]
    out["seen_vs_unseen_auc"] = {"nearest": round(separation([r["nearest"] for r in opened], seen), 3), **{
        f"{k} {m}": round(separation([r["agree"][k, m] for r in opened], seen), 3) for k, m in AGREEMENT_GRID}}
    out["agreement_medians"] = {f"{k} {m}": {subset: round(float(np.median(
        [r["agree"][k, m] for r in rows.values() if r["opened"] and r["seen"] == (subset == "seen")])), 3)
        for subset in ("seen", "unseen")} for k, m in AGREEMENT_GRID}
    return out


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splits", type=int, nargs="+", default=[1, 2, 3, 0])
    p.add_argument("--tag", default="", help="write bench/results/feedback-agreement-TAG.json")
    p.add_argument("--confidence", type=float, default=LOSS_CONFIDENCE,
                   help="standard errors added to the unseen loss before the bound (the fit's: 3)")
    args = p.parse_args()
    name = "feedback-agreement" + (f"-{args.tag}" if args.tag else "")
    kept = results_dir() / f"{name}.json"
    result = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {"splits": {}}
    result["grid"] = [list(s) for s in AGREEMENT_GRID]
    for split in args.splits:
        result["splits"][str(split)] = {"machine_before": machine_facts(), **split_report(split, args.confidence)}
        write(name, result)
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout, ensure_ascii=False, indent=1)
    print()
