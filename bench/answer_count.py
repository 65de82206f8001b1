"""How many units a fact or temporal answer quotes (issue 40, round 26): rules replayed on the dumped units.

Reads the candidate units bench/evidence_units.py dumped for every open dev question (never a test half; not the
statute pack's, which has no learned weights) and replays the choice of a second unit beside the first: the first
is the learned order's (scripts/fit_evidence.py's weights fitted with the question's book left out, the hand rules
over them as `evidence.ranked` has them), the second the next unit by that order that passes the rule, does not
refer back (unless a pair) and keeps the answer within `evidence.QUOTED` sentences. The rules: the mix's bar
(`SECOND` of the first's mix score, before round 26), and the learned share's (`Scored.share` at least R of the
first's, and a mix score at least F of the first's: `evidence.close`). The mix score is rebuilt from the dumped
features (`evidence.WEIGHTS`, `RANK_PRIOR`, `ASKED_BONUS`). R and F are chosen per book on the other books,
maximising evidence rate − `COST` × mean quoted sentences beyond the first.
  python bench/answer_count.py [--units bench/results/evidence-units-r25dev-before.json.gz] [--tag r26dev]
      → bench/results/answers-count-<tag>.json
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_evidence  # noqa: E402
from evidence_units import read_units  # noqa: E402
from machine import write as write_result  # noqa: E402

from lambdarag.domains.generic import EVIDENCE_WEIGHTS  # noqa: E402
from lambdarag.skills.evidence import ASKED_BONUS, MIX_FLOOR, QUOTED, RANK_PRIOR, SECOND, SHARE, WEIGHTS  # noqa: E402
from lambdarag.skills.unit_features import load_weights  # noqa: E402

TYPES = ("fact", "temporal")
"""The types whose second unit `evidence.close` admits (a relation quotes every unit naming both ends by the mix)."""
MIXED = ("maritime",)
"""Books whose profile has no learned weights (the statute pack): `close` reads the mix's bar there."""
COST = 0.1
"""What one more quoted sentence per answer costs, in evidence rate: one answer in ten more holding its evidence
is worth it."""
SHARES = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
FLOORS = (0.0, 0.6, 0.7, 0.8)


def replayed(data: dict, penalty: float) -> list[dict]:
    """Returns, per question of `TYPES` with candidates, its units' labels, learned order (the book left out),
    shares, rebuilt mix scores, sentence counts and whether each refers back."""
    shipped = load_weights(EVIDENCE_WEIGHTS)
    questions = fit_evidence.questions_of(data, shipped.features)
    column = {n: i for i, n in enumerate(shipped.features)}
    weights = {book: fit_evidence.fit([q for q in questions if q["book"] != book], penalty)
               for book in dict.fromkeys(q["book"] for q in questions)}
    out = []
    for q in questions:
        if q["type"] not in TYPES or q["book"] in MIXED or not len(q["y"]):
            continue
        X, w = q["X"], weights[q["book"]]
        feature = {n: X[:, i] for n, i in column.items()}
        rules = np.column_stack([feature[n] for n in fit_evidence.OVERRIDES])
        bonuses = np.column_stack([feature[n] for n in fit_evidence.BONUSES])
        z = X @ w
        share = np.exp(z - z.max())
        mix = sum(WEIGHTS[n] * feature[n] for n in WEIGHTS) + RANK_PRIOR * feature["prior"] + \
            ASKED_BONUS * bonuses.sum(axis=1)
        out.append({"book": q["book"], "corpus": q["corpus"], "type": q["type"], "y": q["y"],
                    "order": fit_evidence.overridden(q, w, rules, bonuses), "share": share / share.sum(), "mix": mix,
                    "sentences": np.rint(feature["sentences"] * 3).astype(int) + 1, "back": feature["refers_back"],
                    "pair": np.array([k == "pair" for k in q["kinds"]])})
    return out


def quoted(q: dict, near) -> list[int]:
    """Returns the units `evidence.fact` quotes when `near(q, first, unit)` says which may join the first."""
    first, *rest = q["order"]
    joining = [j for j in rest if near(q, first, j)]
    alone = [j for j in joining if q["pair"][j] or not q["back"][j]] or joining
    return [first] + [j for j in alone[:1] if q["sentences"][first] + q["sentences"][j] <= QUOTED]


def mix_bar(q: dict, first: int, j: int) -> bool:
    return q["mix"][j] >= SECOND * q["mix"][first]


def share_bar(r: float, f: float):
    """Returns the rule: a learned share at least `r` of the first's and a mix score at least `f` of the first's."""
    return lambda q, first, j: q["share"][j] >= r * q["share"][first] and q["mix"][j] >= f * q["mix"][first]


def rates(questions: list[dict], near) -> dict:
    """Returns n, the evidence rate, mean quoted sentences and the share of answers quoting two units."""
    picks = [quoted(q, near) for q in questions]
    n = len(questions) or 1
    return {"n": len(questions), "evidence": round(sum(bool(q["y"][p].any()) for q, p in zip(questions, picks)) / n, 3),
            "sentences": round(sum(int(q["sentences"][p].sum()) for q, p in zip(questions, picks)) / n, 3),
            "two": round(sum(len(p) > 1 for p in picks) / n, 3)}


def objective(r: dict) -> float:
    return r["evidence"] - COST * (r["sentences"] - 1)


def main(units: Path) -> dict:
    questions = replayed(read_units(units), penalty=0.01)
    grid = {(r, f): share_bar(r, f) for r in SHARES for f in FLOORS}
    books, chosen, left_out = list(dict.fromkeys(q["book"] for q in questions)), {}, []
    for book in books:
        others = [q for q in questions if q["book"] != book]
        chosen[book] = max(grid, key=lambda k: objective(rates(others, grid[k])))
        left_out += [(q, grid[chosen[book]]) for q in questions if q["book"] == book]

    def pooled(pick) -> dict:
        return {"today": rates(pick, mix_bar), "shipped": rates(pick, share_bar(SHARE, MIX_FLOOR)),
                "first only": rates(pick, lambda *_: False), "always two": rates(pick, lambda *_: True)}

    lobo = {"n": len(left_out),
            "evidence": round(sum(bool(q["y"][quoted(q, near)].any()) for q, near in left_out) / len(left_out), 3),
            "sentences": round(sum(int(q["sentences"][quoted(q, near)].sum()) for q, near in left_out) / len(left_out),
                               3)}
    return {"half": "dev (dev2, dev3)", "units": str(units.relative_to(ROOT)), "types": list(TYPES), "cost": COST,
            "shipped": {"share": SHARE, "floor": MIX_FLOOR},
            "chosen per book (left out)": {b: list(k) for b, k in chosen.items()},
            "pooled": pooled(questions) | {"book left out": lobo},
            "per type": {t: pooled([q for q in questions if q["type"] == t]) for t in TYPES},
            "corpora": {c: pooled([q for q in questions if q["corpus"] == c])
                        for c in dict.fromkeys(q["corpus"] for q in questions)},
            "grid (all books)": {f"share {r} floor {f}": rates(questions, g) for (r, f), g in grid.items()}}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", default=str(fit_evidence.UNITS))
    ap.add_argument("--tag", default="r26dev")
    args = ap.parse_args()
    result = main(Path(args.units).resolve())
    print({k: result["pooled"][k] for k in result["pooled"]}, result["chosen per book (left out)"])
    print(write_result(f"answers-count-{args.tag}", result))
