"""Dev-only variants of the statute pack's kind prior and survey rules (issue 33): what each one does per question type.

Runs bench/routing.py on the halves that may be tuned on (maritime dev and dev2; laws dev and dev2), never on a test
half.
Each variant sets constants or functions of the pack (domains/prc_statutes) in this process. It writes routed recall@5
and nDCG@5 per type, compare all-named, temporal right-version-first and the recall@5 of every fact question routed as
a survey (what a misclassified fact gets) to bench/results/routing-statute-variants.json.
The shipped values are the `shipped` variant.
  python bench/statute_variants.py [--variants shipped,lead=inf,...] [--out bench/results/routing-statute-variants.json]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import routing  # noqa: E402
from machine import facts as machine  # noqa: E402

import lambdarag.domains.prc_statutes.cues as cues  # noqa: E402
import lambdarag.domains.prc_statutes.kinds as kinds  # noqa: E402
import lambdarag.domains.prc_statutes.ranks as ranks  # noqa: E402
from lambdarag.orchestration.metrics import score  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HALVES = {"maritime": ("dev", "dev2"), "laws": ("dev", "dev2")}
BEHIND_ALL = 10 ** 6
"""A `STAND_BACK` that puts every lower kind behind every law of its round (math.inf would make 0 · inf = nan)."""
OLD_SURVEY = {(cues, "asks_for_survey"): lambda query: True, (ranks, "SURVEY_LEAD"): math.inf,
              (kinds, "STAND_BACK"): BEHIND_ALL}
"""The survey of round 5: any question may be called a survey, and one naming no kind lists laws first outright."""
VARIANTS = {
    "shipped": {},
    "lead=inf": {(kinds, "LEAD"): math.inf},
    "lead=2": {(kinds, "LEAD"): 2.0},
    "lead=0": {(kinds, "LEAD"): 0.0},
    "tie=0": {(kinds, "NEAR_TIE"): 0.0},
    "tie=0.5": {(kinds, "NEAR_TIE"): 0.5},
    "tie=1": {(kinds, "NEAR_TIE"): 1.0},
    "tie=1.5": {(kinds, "NEAR_TIE"): 1.5},
    "tie=3": {(kinds, "NEAR_TIE"): 3.0},
    "hub=0": {(ranks, "HUB_POWER"): 0.0},
    "hub=0.5": {(ranks, "HUB_POWER"): 0.5},
    "hub=1": {(ranks, "HUB_POWER"): 1.0},
    "areas=off": {(ranks, "area_first"): lambda documents, found, areas: tuple(documents)},
    "place=2": {(kinds, "BEST_PLACE"): 2},
    "place=inf": {(kinds, "BEST_PLACE"): math.inf},
    "survey_lead=0": {(ranks, "SURVEY_LEAD"): 0.0},
    "survey_lead=2": {(ranks, "SURVEY_LEAD"): 2.0},
    "survey_lead=3": {(ranks, "SURVEY_LEAD"): 3.0},
    "survey_lead=inf": {(ranks, "SURVEY_LEAD"): math.inf},
    "stand_back=2": {(kinds, "STAND_BACK"): 2},
    "stand_back=5": {(kinds, "STAND_BACK"): 5},
    "stand_back=all": {(kinds, "STAND_BACK"): BEHIND_ALL},
    "survey_words=off": {(cues, "asks_for_survey"): lambda query: True},
    "survey_words=off+survey_lead=0": {(cues, "asks_for_survey"): lambda query: True, (ranks, "SURVEY_LEAD"): 0.0},
    "survey_words=off+survey_lead=2": {(cues, "asks_for_survey"): lambda query: True, (ranks, "SURVEY_LEAD"): 2.0},
    "survey_words=off+stand_back=5": {(cues, "asks_for_survey"): lambda query: True, (kinds, "STAND_BACK"): 5},
    "old_survey": OLD_SURVEY,
}
"""Name → {(module, attribute): value}; what each changes against the shipped pack."""
WHAT = {
    "shipped": "the pack as committed: LEAD 4, NEAR_TIE 2, BEST_PLACE 3, HUB_POWER 0.25, area_first on surveys "
               "asking for a kind, SURVEY_LEAD 1 and STAND_BACK 3 on surveys naming none, survey words required",
    "tie=0": "the best match keeps first place unless a better prior ties it exactly",
    "tie=0.5": "a better prior takes first place within 0.5 points", "tie=1": "… within 1 point",
    "tie=1.5": "… within 1.5 points",
    "tie=3": "… within 3 points",
    "lead=inf": "documents of a better prior go first behind the best match whatever their score (the old sort)",
    "lead=2": "a better prior is worth 2 points of fused score", "lead=0": "no prior behind the best match",
    "hub=0": "no hub penalty", "hub=0.5": "specificity to the power 0.5", "hub=1": "specificity to the power 1",
    "areas=off": "no listed area's document first",
    "place=2": "a fact's best match, displaced by a near-tie, stands second", "place=inf": "… anywhere LEAD puts it",
    "survey_lead=0": "a survey naming no kind gives laws no lead", "survey_lead=2": "… a lead of 2 z-points",
    "survey_lead=3": "… 3 z-points", "survey_lead=inf": "… ranks laws first outright",
    "stand_back=2": "a lower kind stands 2 places back in a survey's round", "stand_back=5": "… 5 places",
    "stand_back=all": "… behind every law (the old sort)",
    "survey_words=off": "the learned classifier may call any question a survey (as in round 5)",
    "survey_words=off+survey_lead=0": "that, and no lead", "survey_words=off+survey_lead=2": "that, and a lead of 2",
    "survey_words=off+stand_back=5": "that, and 5 places back",
    "old_survey": "round 5's survey: any question a survey, laws first outright in documents and in each round",
}


def facts_as_surveys(questions: str, halves: tuple[str, ...]) -> dict:
    """Returns recall@5 of the fact questions of `halves` when every one is routed as a survey: what the survey route
    gives a question the classifier gets wrong (dev2's 赔偿分别包括哪些 was one), per half."""
    import lambdarag.skills.classify as classify

    qs = routing.SETS[questions]
    own = classify.rule_classify

    def survey(query: str, extra=(), profile=None):
        found = own(query, extra, profile) or classify.Classification(type="fact")
        return found.model_copy(update={"type": "synthesis", "stage": "rules"})

    classify.rule_classify = survey
    try:
        out = {}
        for half in halves:
            facts = [q for q in routing.load(half, qs.folder) if q["type"] == "fact"]
            found = [score(f"recall@{routing.K}", routing.top_documents(routing.search(q["query"], index=qs.index).hits),
                           routing.judged(q["relevant"])) for q in facts]
            out[half] = {"recall@5": routing.mean(found), "n": len(facts)}
        return out
    finally:
        classify.rule_classify = own


def run(variant: str) -> dict:
    """Returns routed figures per set and half with `variant` set, the pack restored after."""
    saved = {key: getattr(*key) for key in VARIANTS[variant]}
    for (module, name), value in VARIANTS[variant].items():
        setattr(module, name, value)
    try:
        out = {}
        for questions, halves in HALVES.items():
            result = routing.main(None, None, halves, questions)
            for half in halves:
                h = result[half]
                out[f"{questions}:{half}"] = {
                    "per_type": {t: m["recall@5"] for t, m in h["routed"]["per_type"].items()},
                    "overall": h["routed"]["overall"]["recall@5"],
                    "ndcg_per_type": {t: m["ndcg@5"] for t, m in h["routed"]["per_type"].items()},
                    "compare_all_named_in_top5": h["compare_all_named_in_top5"]["routed"],
                    "temporal_right_version_first": h["temporal_right_version_first"]["routed"],
                    "misses": {m["qid"]: round(m["recall@5"], 3) for m in h["routed_misses"]}}
            for half, facts in facts_as_surveys(questions, halves).items():
                out[f"{questions}:{half}"]["facts_routed_as_surveys"] = facts
        return out
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated (default all)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "routing-statute-variants.json")
    args = ap.parse_args()
    results = {}
    for name in args.variants.split(","):
        results[name] = run(name)
        print(name, {k: v["overall"] for k, v in results[name].items()}, flush=True)
    halves = {k: list(v) for k, v in HALVES.items()}
    args.out.write_text(json.dumps({"what": WHAT, "machine": machine(), "halves": halves, "results": results},
                                   ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
