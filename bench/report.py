"""Generates the benchmark table of docs/benchmarks.md from bench/results/*.json: python bench/report.py [--check].

Each row reads one result file; a missing file or key shows as "not measured: run …", so the
the documentation never states a number the files do not hold. --check exits 1 when the page differs.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"


def load(name: str) -> Optional[dict]:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def runner(r: dict) -> str:
    return (f"{r['overhead_us_per_term']} µs per term over calling the {r['terms']} functions directly "
            f"({r['runner_us_per_term']} vs {r['direct_us_per_term']} µs)")


def bm25_speed(r: dict) -> str:
    b = r["bm25_vs_rank_bm25"]
    return (f"p50 {b['ours_p50_ms']} ms vs {b['rank_bm25_p50_ms']} ms ({b['speedup_p50']}×), "
            f"equal top-10 scores on {b['top10_scores_equal']} queries")


def stard_quality(r: dict) -> str:
    names = [("BM25", "bm25"), ("dense", "dense"), ("equal RRF", "rrf_equal_weights"),
             ("hybrid z-score (5-fold CV weight)", "hybrid_zscore_cv")]
    ndcg = ", ".join(f"{label} {r[key]['ndcg@10']:.3f}" for label, key in names)
    mrr = " / ".join(f"{r[key]['mrr@10']:.3f}" for _, key in names)
    hybrid = (f"hybrid_search (as search() runs it) {r['hybrid_search_latency_ms']['p50']} ms"
              if "hybrid_search_latency_ms" in r else "hybrid_search not timed yet: rerun `bench/retrieval.py`")
    return (f"{r['n_queries']} questions; nDCG@10: {ndcg}; MRR@10 {mrr}; p50 BM25 {r['bm25_vs_rank_bm25']['ours_p50_ms']} ms, "
            f"dense (with query embedding) {r['dense_latency_ms']['p50']} ms, {hybrid}")


def build(r: dict) -> str:
    return f"{r['build']['seconds']} s for {r['build']['chunks']} chunks with imported vectors, peak RSS {r['build']['peak_rss_mb']} MB"


def graph(r: dict) -> str:
    return (f"{r['documents']} documents in {r['compile_s']} s (unchanged recompile {r['recompile_unchanged_s']} s), "
            f"{r['entities']} entities, {r['relations']} relations; entity match ≤ {max(r['find_entities_ms'].values())} ms; "
            f"2-hop walk ≤ {max(r['walk_2hop_20nodes_ms'].values())} ms")


def routing_half(half: str) -> Callable[[dict], str]:
    """Returns the formatter of one half (dev, dev2: tuned on; test: frozen) of the laws-folder routing benchmark."""
    def fmt(r: dict) -> str:
        h = r[half]
        recall = {k: h[k]["overall"]["recall@5"] for k in ("routed", "bm25", "dense", "hybrid")}
        return (f"{h['questions']} questions: type accuracy {h['type_accuracy']['overall']:.3f}; doc recall@5 routed "
                f"{recall['routed']:.3f} vs BM25 {recall['bm25']:.3f}, dense {recall['dense']:.3f}, hybrid "
                f"{recall['hybrid']:.3f}; temporal right version first routed "
                f"{h['temporal_right_version_first']['routed']:.2f}; compare both statutes in top 5 routed "
                f"{h['compare_all_named_in_top5']['routed']:.2f}")
    return fmt


def domain_half(half: str) -> Callable[[dict], str]:
    """Returns the formatter of one half (dev, dev2: tuned on; test: frozen) of a non-statute corpus
    (bench/domain_bench.py); a run with recall@10 (issue 41) adds it, the survey type's figures and relation's type
    accuracy, each where the half has questions of that type."""
    def fmt(r: dict) -> str:
        h = r[half]
        cells = {label: h[s]["overall"] for s, label in (("routed", "routed"), ("hybrid", "hybrid"), ("bm25", "BM25"))}
        wide = "recall@10" in cells["routed"]
        keys = ("recall@5", "recall@10", "mrr@5") if wide else ("recall@5", "mrr@5")
        ranks = ", ".join(f"{s} " + " / ".join(f"{m[k]:.3f}" for k in keys) for s, m in cells.items())
        survey = ""
        if wide:
            if "synthesis" in h["routed"]["per_type"]:
                per = {s: h[s]["per_type"]["synthesis"] for s in ("routed", "hybrid", "bm25")}
                survey = ("; synthesis recall@5 / @10 routed {:.3f} / {:.3f}, hybrid {:.3f} / {:.3f}, "
                          "BM25 {:.3f} / {:.3f}").format(*(per[s][k] for s in per for k in ("recall@5", "recall@10")))
            if "relation" in h["type_accuracy"]:
                survey += f"; relation type accuracy {h['type_accuracy']['relation']:.3f}"
            types = h["routed"]["per_type"]
            survey += "; per type recall@5 / MRR@5 routed vs hybrid: " + ", ".join(
                "{} {:.2f} / {:.2f} vs {:.2f} / {:.2f}".format(t, types[t]["recall@5"], types[t]["mrr@5"],
                                                             h["hybrid"]["per_type"][t]["recall@5"],
                                                             h["hybrid"]["per_type"][t]["mrr@5"]) for t in types)
        if "routed_keeps" in h:
            keeps = h["routed_keeps"]["overall"]
            survey += (f"; routed's first five hold hybrid's first document {keeps['hybrid_first']:.2f} and the "
                       f"relevant files of hybrid's first five {keeps['hybrid_relevant']:.2f}")
        return (f"{r['corpus']['package']} {r['corpus']['version']}, {h['questions']} questions: type accuracy "
                f"{h['type_accuracy']['overall']:.3f}; doc {' / '.join(k.replace('mrr', 'MRR') for k in keys)} "
                f"{ranks}{survey}; answers cite a right file routed "
                f"{cells['routed']['cites_answer']:.2f} (hybrid {cells['hybrid']['cites_answer']:.2f}), in the "
                f"question's language {cells['routed']['answer_language']:.2f}; crashes routed {h['routed']['crashes']}, "
                f"hybrid {h['hybrid']['crashes']}, BM25 {h['bm25']['crashes']}")
    return fmt


def domain_rows() -> list[tuple[str, str, str, Callable[[dict], str]]]:
    """Returns the rows of the non-statute corpora: before the domain work (both halves), before issue 41's routes
    (frozen test) and now (frozen test); the Valgrind manual and the New Maintainers' Guide (corpora issue 41 added):
    before their round's survey changes and now, both halves; the dev2 halves (round 15) before its cues and now;
    the dev3 halves (round 15) before whole chapters and now; round 16's held-out corpora, before and after the round;
    rounds 18's to 27's, before their round and on its merged tree."""
    rows = []
    for corpus in ("reference-en", "reference-zh-cn", "faq-zh-cn", "handbook-en"):
        script = f"bench/domain_bench.py --corpora {corpus}"
        if corpus != "handbook-en":  # its questions were written after the domain profiles
            rows += [(f"non-statute corpus {corpus}, frozen TEST half, before the domain profiles",
                      f"domain-{corpus}-before", f"{script} --tag before", domain_half("test")),
                     (f"non-statute corpus {corpus}, DEV half, before the domain profiles", f"domain-{corpus}-before",
                      f"{script} --tag before", domain_half("dev"))]
        rows += [(f"non-statute corpus {corpus}, frozen TEST half, before issue 41's routes",
                  f"domain-{corpus}-routes-before", f"{script} --tag routes-before", domain_half("test")),
                 (f"non-statute corpus {corpus}, frozen TEST half", f"domain-{corpus}", script, domain_half("test"))]
    for corpus, before in (("valgrind-en", "the covering survey"), ("maint-guide-en", "its surveys' whole-text mentions")):
        script = f"bench/domain_bench.py --corpora {corpus}"
        for half, label in (("test", "frozen TEST half"), ("dev", "DEV half")):
            rows += [(f"non-statute corpus {corpus}, {label}, before {before}", f"domain-{corpus}-before",
                      f"{script} --tag before", domain_half(half)),
                     (f"non-statute corpus {corpus}, {label}", f"domain-{corpus}", script, domain_half(half))]
    for corpus in ("maint-guide-en", "faq-zh-cn", "handbook-en", "reference-zh-cn"):
        script = f"bench/domain_bench.py --corpora {corpus} --halves dev2"
        rows += [(f"non-statute corpus {corpus}, DEV2 half (new surveys or relations), before round 15's cues",
                  f"domain-{corpus}-dev2-before", f"{script} --tag dev2-before", domain_half("dev2")),
                 (f"non-statute corpus {corpus}, DEV2 half (new surveys or relations)", f"domain-{corpus}-dev2",
                  f"{script} --tag dev2", domain_half("dev2"))]
    for corpus in ("maint-guide-en", "faq-zh-cn", "handbook-en"):
        script = f"bench/domain_bench.py --corpora {corpus} --halves dev3"
        rows += [(f"non-statute corpus {corpus}, DEV3 half (overviews of a whole chapter or topic), before whole "
                  "chapters", f"domain-{corpus}-dev3-before", f"{script} --tag dev3-before", domain_half("dev3")),
                 (f"non-statute corpus {corpus}, DEV3 half (overviews of a whole chapter or topic)",
                  f"domain-{corpus}-dev3", f"{script} --tag dev3", domain_half("dev3"))]
    for corpus in ("developers-reference-en", "install-guide-zh-cn"):
        script = f"bench/domain_bench.py --corpora {corpus}"
        for half, label in (("test", "TEST half"), ("dev", "DEV half")):
            rows += [(f"HELD-OUT corpus {corpus} (round 16, written blind, never tuned on), {label}, before round 16",
                      f"domain-{corpus}-before", f"{script} --tag before", domain_half(half)),
                     (f"HELD-OUT corpus {corpus} (round 16, written blind; its DEV half tuned on in round 17), {label}, "
                      "after round 17", f"domain-{corpus}", script, domain_half(half))]
    for round_, corpora in ((18, ("edu-en", "edu-zh-cn")), (19, ("policy-en", "handbook-zh-cn")),
                            (20, ("harden-en", "kicad-pcb-zh-cn")),
                            (21, ("kernel-handbook-en", "calc-guide-zh-cn")),
                            (22, ("bash-ref-en", "writer-guide-zh-cn")),
                            (23, ("wireshark-guide-en", "kicad-tools-zh-cn")),
                            (24, ("mutt-manual-en", "impress-draw-guide-zh-cn")),
                            (25, ("bind-arm-en", "office-guide-zh-cn")),
                            (26, ("r-intro-en", "chart-help-zh-cn")),
                            (27, ("postgres-sql-en", "wizards-zh-cn"))):
        for corpus in corpora:
            script = f"bench/domain_bench.py --corpora {corpus}"
            rows += [(f"HELD-OUT corpus {corpus} (round {round_}, written blind, never tuned on), {label}, {when} round "
                      f"{round_}", f"domain-{corpus}{suffix}", script + flag, domain_half(half))
                     for suffix, flag, when in (("-before", " --tag before", "before"), ("", "", "after"))
                     for half, label in (("test", "TEST half"), ("dev", "DEV half"))]
    return rows


def classify_types(r: dict) -> str:
    """Returns the offline classifier's type accuracy, overall and relation's own where a half has relation
    questions, per set and half (bench/classify_types.py)."""
    def cell(h: dict) -> str:
        acc = h["type_accuracy"]
        return f"{acc['overall']:.3f}" + (f" (relation {acc['relation']:.2f})" if "relation" in acc else "")
    return "; ".join(f"{name} " + ", ".join(f"{half} {cell(h)}" for half, h in halves.items())
                     for name, halves in r["sets"].items())


def classify_lobo(r: dict) -> str:
    """Returns the leave-one-book-out type accuracy: the dev halves pooled, then per corpus and open half, each
    classified with exemplars that hold no question of its book (bench/classify_types.py --lobo)."""
    p = r["pooled_dev"]
    return (f"dev halves pooled, {p['questions']} questions: {p['overall']:.3f} (relation {p['relation']:.2f} of "
            f"{p['relation_questions']}); " + classify_types(r))


def answers_half(half: str) -> Callable[[dict], str]:
    """Returns the formatter of one half (dev: tuned on; test: frozen) of the offline answer benchmark (bench/answers.py)."""
    def fmt(r: dict) -> str:
        h, types = r[half], r[half]["per_type"]
        o = h["overall"]
        evidence = ", ".join(f"{t} {m['evidence']:.2f}" for t, m in types.items())
        quoted = max(m["sentences"]["max"] for t, m in types.items() if t != "synthesis")
        return (f"{h['questions']} questions: answer holds an evidence sentence {o['evidence']:.2f} ({evidence}), "
                f"in the top 5 hits {o['evidence_in_top5']:.2f}; compare, every side quoted and cited "
                f"{types['compare']['compare_all_sides']:.2f}; false refusals {o['false_refusal']:.2f}; quoted "
                f"sentences ≤ {quoted} (synthesis ≤ {types['synthesis']['points']['max']} points); exit 0 "
                f"{o['exit_0']:.2f}, degraded {h['degraded']}, with fallbacks {h['with_fallbacks']}")
    return fmt


def answers_rows() -> list[tuple[str, str, str, Callable[[dict], str]]]:
    """Returns the rows of the answer benchmark: before issue 40 (both halves) and now (both halves), then its
    scores on the routing sets' dev halves (bench/domain_answers.py), before this round's side fixes and now."""
    rows = []
    for corpus in ("reference-en", "reference-zh-cn", "handbook-en", "maritime"):
        script = f"bench/answers.py --corpora {corpus}"
        rows += [(f"offline answers, {corpus}, frozen TEST half, before issue 40", f"answers-{corpus}-before",
                  f"{script} --tag before", answers_half("test")),
                 (f"offline answers, {corpus}, DEV half, before issue 40", f"answers-{corpus}-before",
                  f"{script} --tag before", answers_half("dev")),
                 (f"offline answers, {corpus}, frozen TEST half", f"answers-{corpus}", script, answers_half("test")),
                 (f"offline answers, {corpus}, DEV half (tuned on)", f"answers-{corpus}", script, answers_half("dev"))]
    script = "bench/domain_answers.py"
    return rows + [("offline answers on the routing sets' DEV halves, before issue 40's side fixes",
                    "answers-domain-dev-before", f"{script} --tag before", domain_answers),
                   ("offline answers on the routing sets' DEV halves (tuned on)", "answers-domain-dev", script,
                    domain_answers),
                   ("offline answers, fresh compare DEV set (round 13, pairs no other set asks about), before",
                    "answers-fresh-dev-before", "bench/fresh_answers.py --tag before", fresh_answers),
                   ("offline answers, fresh DEV set (round 13: compare, fact, relation; tuned on)", "answers-fresh-dev",
                    "bench/fresh_answers.py", fresh_answers),
                   ("offline answers, second fresh DEV set (round 15: fact, relation, temporal, synthesis), before",
                    "answers-fresh15-dev-before", "bench/fresh_answers.py --set fresh15 --tag before", fresh_answers),
                   ("offline answers, second fresh DEV set (round 15; tuned on)", "answers-fresh15-dev",
                    "bench/fresh_answers.py --set fresh15", fresh_answers),
                   *held_out_answers_rows()]


def held_out_answers_rows() -> list[tuple[str, str, str, Callable[[dict], str]]]:
    """Returns the rows of the offline answers on round 16's held-out corpora (written blind, never tuned on), per half,
    before the round and after it; then round 17's, whose dev halves were tuned on (before: the dev halves alone);
    then round 16's both halves as tuned on in round 18; then rounds 18's to 27's held-out corpora, before their round and
    on its merged tree; then round 19's dev halves as tuned on in round 20."""
    corpora = "bench/domain_answers.py --corpora developers-reference-en,install-guide-zh-cn"
    return [*blind_answers_rows(16, corpora),
            ("offline answers, held-out corpora, DEV half (tuned on in round 17), before round 17",
             "answers-held-out17-dev-before", f"{corpora} --halves dev --name answers-held-out17-dev-before",
             domain_answers),
            *((f"offline answers, held-out corpora, {label}, after round 17", "answers-held-out17",
               f"{corpora} --halves dev,test --name answers-held-out17", lambda r, half=half: domain_answers(r, half))
              for half, label in (("test", "frozen TEST half"), ("dev", "DEV half (tuned on)"))),
            *((f"offline answers, held-out corpora, {label} (tuned on in round 18), {when} round 18", name,
               f"{corpora} --halves dev,test --name answers-r18-dev" + (" --tag before" if when == "before" else ""),
               lambda r, half=half: domain_answers(r, half))
              for when, name in (("before", "answers-r18-dev-before"), ("after", "answers-r18-dev"))
              for half, label in (("test", "TEST half"), ("dev", "DEV half"))),
            *blind_answers_rows(18, "bench/domain_answers.py --corpora edu-en,edu-zh-cn"),
            *blind_answers_rows(19, "bench/domain_answers.py --corpora policy-en,handbook-zh-cn"),
            *blind_answers_rows(20, "bench/domain_answers.py --corpora harden-en,kicad-pcb-zh-cn"),
            *blind_answers_rows(21, "bench/domain_answers.py --corpora kernel-handbook-en,calc-guide-zh-cn"),
            *blind_answers_rows(22, "bench/domain_answers.py --corpora bash-ref-en,writer-guide-zh-cn --config bench/timeout600.yml"),
            *blind_answers_rows(23, "bench/domain_answers.py --corpora wireshark-guide-en,kicad-tools-zh-cn --config "
                                    "bench/timeout600.yml"),
            *blind_answers_rows(24, "bench/domain_answers.py --corpora mutt-manual-en,impress-draw-guide-zh-cn --config "
                                    "bench/timeout600.yml"),
            *blind_answers_rows(25, "bench/domain_answers.py --corpora bind-arm-en,office-guide-zh-cn --config "
                                    "bench/timeout600.yml"),
            *blind_answers_rows(26, "bench/domain_answers.py --corpora r-intro-en,chart-help-zh-cn --config "
                                    "bench/timeout600.yml"),
            *blind_answers_rows(27, "bench/domain_answers.py --corpora postgres-sql-en,wizards-zh-cn --config "
                                    "bench/timeout600.yml"),
            *((f"offline answers, round 19's held-out corpora, DEV half (tuned on in round 20), {when} round 20", name,
               "bench/domain_answers.py --corpora policy-en,handbook-zh-cn --halves dev --name answers-held-out19-dev20"
               + (" --tag before" if when == "before" else ""), domain_answers)
              for when, name in (("before", "answers-held-out19-dev20-before"), ("after", "answers-held-out19-dev20")))]


def blind_answers_rows(round_: int, corpora: str) -> list[tuple[str, str, str, Callable[[dict], str]]]:
    """Returns the rows of the offline answers on a round's held-out corpora (written blind), per half, before the
    round and after it (answers-held-out<round>[-before])."""
    script = f"{corpora} --halves dev,test --name answers-held-out{round_}"
    return [(f"offline answers, HELD-OUT corpora (round {round_}, written blind), {label} half, {when} round {round_}",
             name, script + (" --tag before" if when == "before" else ""), lambda r, half=half: domain_answers(r, half))
            for when, name in (("before", f"answers-held-out{round_}-before"), ("after", f"answers-held-out{round_}"))
            for half, label in (("test", "TEST"), ("dev", "DEV"))]


def fresh_answers(r: dict) -> str:
    """Returns the fresh dev set's scores (bench/fresh_answers.py): per type evidence, compare every side cited,
    false refusals, exit 0, then per corpus."""
    o, types = r["overall"], r.get("per_type") or {"compare": r["overall"]}  # the before file: compare alone
    evidence = ", ".join(f"{t} {m['evidence']:.2f} ({m['n']})" for t, m in types.items())
    sides = (f"compare, every side quoted and cited {types['compare']['compare_all_sides']:.2f}; "
             if "compare" in types else "")
    return (f"{o['n']} questions: answer holds an evidence sentence {o['evidence']:.2f} ({evidence}); {sides}false "
            f"refusals {o['false_refusal']:.2f}; exit 0 {o['exit_0']:.2f}; per corpus: " + domain_answers(r))


def domain_answers(r: dict, half: str = "dev") -> str:
    """Returns per corpus the wider answer scores of one half (bench/domain_answers.py): evidence, compare every side
    cited, false refusals, exit 0."""
    def cell(corpus: str, h: dict) -> str:
        o, compare = h["overall"], h["per_type"].get("compare")
        sides = f", compare every side cited {compare['compare_all_sides']:.2f}" if compare else ""
        return (f"{corpus} ({h['questions']}) evidence {o['evidence']:.2f}{sides}, false refusals "
                f"{o['false_refusal']:.2f}, exit 0 {o['exit_0']:.2f}")
    return "; ".join(cell(corpus, c[half]) for corpus, c in r["corpora"].items())


def routing_per_type(half: str) -> Callable[[dict], str]:
    """Returns the formatter of one half with routed recall@5 against BM25-only and hybrid-only per question type."""
    overall = routing_half(half)

    def fmt(r: dict) -> str:
        h = r[half]
        cells = "; ".join(f"{t} {m['recall@5']:.3f} vs {h['bm25']['per_type'][t]['recall@5']:.3f} / "
                          f"{h['hybrid']['per_type'][t]['recall@5']:.3f}" for t, m in h["routed"]["per_type"].items())
        return f"{overall(r)}; per type, routed vs BM25 / hybrid: {cells}"
    return fmt


def statute_names(r: dict) -> str:
    worst = min(r["per_form"], key=lambda form: r["per_form"][form]["right"])
    return (f"{r['questions']} synthetic compare questions over {r['statutes']} statutes: both named statutes and "
            f"no other resolved {r['right']:.3f} (weakest form, {worst}: {r['per_form'][worst]['right']:.3f})")


def route_latency(r: dict) -> str:
    cells = ", ".join(f"{t} {r['baseline'][t]['route_median_ms']} → {r['current'][t]['route_median_ms']} ms "
                      f"({r['ratio'][t]}×)" for t in r["ratio"])
    where = f"every question sent to {r['route']}" if r.get("route") else "each type on its own route"
    return (f"{r['questions']} questions, {r['rounds']} alternating rounds, baseline {r['baseline_commit']} → this tree, "
            f"{where}: {cells}")


def ranking_cells(m: dict) -> str:
    return f"MRR@10 {m['mrr@10']:.3f}, R@100 {m['recall@100']:.3f}, nDCG@10 {m['ndcg@10']:.3f}"


def feedback(r: dict) -> str:
    s = r["stard"]

    def row(part: str, system: str) -> str:
        return ranking_cells(s[part][system])
    return (f"{s['all']['n']} questions, hybrid → learned (as shipped): {row('all', 'hybrid')} → "
            f"{row('all', 'hybrid+learned')}; seen {s['seen']['n']}: nDCG@10 {s['seen']['hybrid']['ndcg@10']:.3f} → "
            f"{s['seen']['hybrid+learned']['ndcg@10']:.3f}; unseen {s['unseen']['n']}: nDCG@10 "
            f"{s['unseen']['hybrid']['ndcg@10']:.3f} → {s['unseen']['hybrid+learned']['ndcg@10']:.3f}, R@100 "
            f"{s['unseen']['hybrid']['recall@100']:.3f} → {s['unseen']['hybrid+learned']['recall@100']:.3f}; top 10 "
            f"learned for {s['all']['gate_open']['hybrid+learned']} (unseen "
            f"{s['unseen']['gate_open']['hybrid+learned']}), the other questions' learning only below rank 10; p50 "
            f"{s['latency_ms']['hybrid']['p50']} → {s['latency_ms']['hybrid+learned']['p50']} ms" + candidates(s)
            + adapted(s))


def candidates(s: dict) -> str:
    """Returns how many nearest confirmed questions lent learned candidates per fold, as fitted ('' for a result
    measured before learned candidates), and, for a fit under the unseen recall bound, the tail's cosine floor."""
    fits = [f for f in s.get("fits", ()) if f["system"] == "hybrid+learned"]
    counts = [f.get("candidates") for f in fits]
    if not counts or None in counts:
        return ""
    floors = ", ".join(format(f.get("tail_gate", -1.0), ".3f") for f in fits)
    bounded = f"; the tail past cosine {floors}" if all("tail_gate" in f for f in fits) else ""
    return f"; learned candidates from the nearest {', '.join(map(str, counts))} confirmed questions per fold " \
        f"(0: none){bounded}"


def adapted(s: dict) -> str:
    """Returns what the learned system with the query adapter scored in the same run ('' before it was measured)."""
    name = "hybrid+learned+adapter"
    if name not in s["all"]:
        return ""
    return (f"; with the query adapter: {ranking_cells(s['all'][name])}, unseen nDCG@10 "
            f"{s['unseen'][name]['ndcg@10']:.3f}" + (f", p50 {s['latency_ms'][name]['p50']} ms"
                                                      if name in s.get("latency_ms", {}) else ""))


def feedback_partition(r: dict) -> str:
    unseen = r["unseen"]
    return (f"folds from seed {r['partition_seed']}'s shuffle: hybrid → learned: {ranking_cells(r['all']['hybrid'])} → "
            f"{ranking_cells(r['all']['hybrid+learned'])}; unseen {unseen['n']}: nDCG@10 "
            f"{unseen['hybrid']['ndcg@10']:.3f} → {unseen['hybrid+learned']['ndcg@10']:.3f}, R@100 "
            f"{unseen['hybrid']['recall@100']:.3f} → {unseen['hybrid+learned']['recall@100']:.3f}" + candidates(r)
            + adapted(r))


def feedback_debian(r: dict) -> str:
    def cells(corpus: dict, level: str) -> str:
        m = corpus[level]["test"]
        adapter = m.get("hybrid+learned+adapter")
        return (f"{level}s MRR@10 {m['hybrid']['mrr@10']:.3f} → {m['hybrid+learned']['mrr@10']:.3f}, nDCG@10 "
                f"{m['hybrid']['ndcg@10']:.3f} → {m['hybrid+learned']['ndcg@10']:.3f}"
                + (f" (query adapter on: MRR@10 {adapter['mrr@10']:.3f}, nDCG@10 {adapter['ndcg@10']:.3f})"
                   if adapter else ""))
    return "; ".join(f"{name} ({r[name]['chunk']['test']['n']} test): {cells(r[name], 'document')}, "
                     f"{cells(r[name], 'chunk')}" for name in r if isinstance(r[name], dict) and "chunk" in r[name]) \
        + " (hybrid → learned from the dev half)"


def feedback_self(r: dict) -> str:
    def cells(corpus: dict) -> str:
        out = []
        for rule in ("shipped", "one_document"):
            m = corpus[rule]
            out.append(f"{rule.replace('_', ' ')}: {m['confirmed_questions']}/{corpus['asked']} confirmed, test chunks "
                       f"MRR@10 {m['chunk_test']['hybrid']['mrr@10']:.3f} → {m['chunk_test']['hybrid+learned']['mrr@10']:.3f}"
                       f", documents nDCG@10 {m['document_test']['hybrid']['ndcg@10']:.3f} → "
                       f"{m['document_test']['hybrid+learned']['ndcg@10']:.3f}")
        return "; ".join(out)
    return "; ".join(f"{name}: {cells(r[name])}" for name in r if isinstance(r[name], dict) and "shipped" in r[name]) \
        + " (hybrid → after answering the dev half)"


def feedback_eval(r: dict) -> str:
    lat = r["latency_ms"]
    return (f"{r['n_queries']} fold-0 questions, new process, learned from folds 1-4: p50 unlearned "
            f"{lat['unlearned']['p50']} ms, learned {lat['p50']} ms ({lat['learned_over_unlearned_p50']}×), first "
            f"question included; MRR@10 {r['metrics']['mrr@10']:.3f}")


def feedback_adapter(r: dict) -> str:
    best = max(r["adapted"], key=lambda ridge: r["adapted"][ridge]["all"])
    a, p = r["adapted"][best], r["plain"]
    out = (f"dense MRR@10, query vector adapted (ridge {best}) vs plain: all {p['all']:.3f} → {a['all']:.3f}, seen "
           f"{r['seen']} {p['seen']:.3f} → {a['seen']:.3f}, unseen {r['unseen']} {p['unseen']:.3f} → "
           f"{a['unseen']:.3f}")
    g = r.get("gated")
    if not g:
        return out + " (not in the product: it would need the gate)"
    if g["ridge"] is None:
        return out + "; gated by the nearest confirmed question: no setting kept unseen questions safe on splits 0-2"
    fresh = g["splits"]["3"]

    def cells(name: str) -> str:
        return "/".join(f"{fresh[name][part]:.3f}" for part in ("all", "seen", "unseen"))
    return (out + f"; gated (ridge {g['ridge']}, blend {g['blend']}, cosine ≥ {g['cosine_floor']}, chosen on splits "
            f"0-2), fresh split 3 all/seen/unseen: plain {cells('plain')}, blend without the gate {cells('ungated')}, with it "
            f"{cells('gated')} (the probe; the product's adapter inside hybrid retrieval is in the learned-retrieval rows)")


def adapter_cells(split: str, s: dict, names) -> str:
    """One split of bench/adapter_blend.py: plain and learned hybrid, then each adapted system of `names` it ran."""
    plain, learned, p50 = s["all"]["hybrid"], s["all"]["hybrid+learned"], s["p50_ms"]
    settings = "; ".join(
        f"{name}: MRR@10 {s['all'][name]['mrr@10']:.3f}, R@100 {s['all'][name]['recall@100']:.3f}, unseen "
        f"{s['unseen'][name]['ndcg@10']:.3f}, p50 {p50[name] / p50['hybrid']:.2f}×" for name in names if name in s["all"])
    return (f"split {split}: plain MRR@10 {plain['mrr@10']:.3f}, unseen nDCG@10 {s['unseen']['hybrid']['ndcg@10']:.3f};"
            f" learned MRR@10 {learned['mrr@10']:.3f}, R@100 {learned['recall@100']:.3f}, unseen "
            f"{s['unseen']['hybrid+learned']['ndcg@10']:.3f}, p50 {p50['hybrid+learned'] / p50['hybrid']:.2f}×; "
            + settings)


def feedback_adapter_blend(r: dict) -> str:
    return " — ".join(adapter_cells(split, s, r["settings"]) for split, s in r["splits"].items()) + \
        " (p50 over plain hybrid, same run)"


def feedback_adapter_fitted(r: dict) -> str:
    return " — ".join(adapter_cells(split, s, ["fitted"]) + " (folds' blends "
                      + ", ".join(format(b["adapter_blend"], "g") for b in s["blends"]) + ")"
                      for split, s in r["splits"].items()) + " (p50 over plain hybrid, same run)"


def feedback_rerank(r: dict) -> str:
    """MRR@10, R@100 and the unseen questions' nDCG@10 and R@100 of plain, shipped and the second stages, per split."""
    def cells(s: dict, name: str) -> str:
        v = s[name]
        return (f"{name} MRR@10 {v['all']['mrr@10']:.3f}, R@100 {v['all']['recall@100']:.3f}, unseen nDCG@10 "
                f"{v['unseen']['ndcg@10']:.3f}, unseen R@100 {v['unseen']['recall@100']:.3f}")
    names = ("plain", "shipped", "head pointwise, fitted setting", "head pairwise, fitted setting",
             "tail pointwise, fitted setting")
    return " — ".join(f"split {split} (dev): " + "; ".join(cells(s, n) for n in names)
                      for split, s in r["splits"].items()) + " (nothing shipped: no head stage lifts MRR@10 by 0.01)"


def feedback_match(r: dict) -> str:
    """The share of seen held-out questions whose best-matching past question is a right one, per split."""
    def rates(split: dict) -> str:
        top = split["top1_right"]
        return ", ".join(f"{name} {value:.3f}" for name, value in top.items())
    return "; ".join(f"split {s} ({v['seen_questions']} seen): {rates(v)}" for s, v in r["splits"].items()) + \
        " (not in the product: the fits with it ranked lower, feedback-match-fits.json)"


def stard_latency(r: dict) -> str:
    lat = r["latency_ms"]
    return (f"{r['questions']} held-out questions, query embedding included: p50 / p95 hybrid "
            f"{lat['hybrid']['p50']} / {lat['hybrid']['p95']} ms, hybrid+learned {lat['hybrid+learned']['p50']} / "
            f"{lat['hybrid+learned']['p95']} ms (CPU p50 {lat['hybrid']['cpu_p50']} / "
            f"{lat['hybrid+learned']['cpu_p50']} ms)" + (f"; learning adds {r['learned_adds_ms']['p50']} ms per question "
                                                          f"(median of paired runs)" if "learned_adds_ms" in r else ""))


def milvus(r: dict) -> str:
    q, lat = r["quality"], r["latency_ms"]
    return (f"R@10 BM25 {q['milvus_bm25']['recall@10']:.3f} vs {q['local_bm25']['recall@10']:.3f}, dense "
            f"{q['milvus_dense']['recall@10']:.3f} vs {q['local_dense']['recall@10']:.3f}; p50 BM25 "
            f"{lat['milvus_bm25']['p50']:.0f} vs {lat['local_bm25']['p50']:.0f} ms, dense {lat['milvus_dense']['p50']:.0f} "
            f"vs {lat['local_dense']['p50']:.0f} ms (Milvus vs local)")


def cli(r: dict) -> str:
    return (f"median {r['median_s']} s wall of {r['runs']} runs ({r['median_cpu_s']} s CPU); "
            f"{'no library log lines' if r['quiet'] else 'library log lines printed'}")


def install(r: dict) -> str:
    return (f"wheel built in {r['wheel_build_s']} s; cold install {r['install_s']} s, {r['packages']} packages, "
            f"{r['venv_mb']:.0f} MB (no pip cache); first `ask` {r['first_ask_s']} s (builds the demo index and the "
            f"classifier's exemplar vectors, {r['data_home_mb']:.0f} MB data home), second {r['second_ask_s']} s")


def eval_routed(r: dict) -> str:
    m, same = r["eval"]["metrics"], r["versus_routing_json"]
    return (f"{r['eval']['n_queries']} questions: routed recall@5 {m['recall@5']:.3f} (bench/routing.py "
            f"{same['recall@5']['routing_py']:.3f}), MRR@5 {m['mrr@5']:.3f}, type accuracy {m['type_accuracy']:.3f}; "
            f"every per-type recall@5 and type accuracy equal to routing.py's to 3 decimals: {r['all_equal']}")


def slow_llm(r: dict) -> str:
    q = r["questions"]
    per = "; ".join(f"{k} {v['wall_s']} s, {v['llm_calls']} call{'s' * (v['llm_calls'] != 1)}" for k, v in q.items())
    model = f"{r['tokens_per_second']:g} tokens/s" if "tokens_per_second" in r else f"model {r['model']}"
    return (f"limits.timeoutSeconds {r['timeout_s']:g} s, llm.timeout {r['llm_timeout_s']:g} s, "
            f"{model}: {per}; all answered in time: {r['within_timeout']}")


def stream_latency(mode: str) -> Callable[[dict], str]:
    """Returns the formatter of time to first evidence / first token / result per route, offline or scripted LLM."""
    def fmt(r: dict) -> str:
        return "; ".join(f"{route} {t['hits_ms']:.0f} / {t['token_ms']:.0f} / {t['result_ms']:.0f} ms"
                         for route, t in r[mode].items())
    return fmt


def store(r: dict) -> str:
    cost = r["write_cost"]
    per = "; ".join(f"{kind} " + " / ".join(f"{cost[kind][str(n)]['p50_ms']}" for n in r["sizes"])
                    + f" ms ({cost[kind]['ratio_100k_to_1k']}×)" for kind in ("files", "sqlite", "postgres"))
    sizes = " / ".join(f"{n // 1000}k" for n in r["sizes"])
    writers = ", ".join(f"{kind} {t['writes_per_s']}/s" for kind, t in r["throughput"].items())
    added = ", ".join(f"{kind} {s['p50_recording_ms']} ms (search p50 {s['p50_total_off_ms']} → {s['p50_total_on_ms']} "
                      f"ms with feedback on; {s['store_transactions_per_search']['median']} store transactions per "
                      f"search, at most {s['store_transactions_per_search']['max']}, "
                      f"{s['connects_after_first']} connections opened after the first)"
                      for kind, s in r["search"].items())
    return (f"p50 of one query's feedback write after {sizes} logged queries (files and PostgreSQL fsync each "
            f"write, SQLite survives a killed process, not a power cut): {per}; "
            f"{r['throughput']['sqlite']['writers']} concurrent writers: {writers}; recording a query in search(): "
            f"{added}")


def imports(r: dict) -> str:
    floor = r.get("floor_cpu_s")
    text = "; ".join(f"{label} {r[k]['cpu_s']['branch']} CPU-s vs {r[k]['cpu_s']['main']} on main "
                     f"({r[k]['ratio_cpu']}×)" for label, k in (("`--help`", "help"), ("`where`", "where"),
                                                                ("warm `ask`", "warm_ask")))
    if floor:
        text += (f"; a bare `python` here costs {floor['python']} CPU-s, with numpy {floor['python_numpy']}, with "
                 f"numpy and pydantic {floor['python_numpy_pydantic']}")
    if "ask_phases_cpu_s" in r:
        text += "; an in-process `ask` spends " + ", ".join(f"{v} on {k.replace('_', ' ')}"
                                                            for k, v in r["ask_phases_cpu_s"].items())
    return text + (resident(r["resident"]) if "resident" in r else "")


def resident(r: dict) -> str:
    same, new = r["same_question"], r["new_questions"]
    return (f"; answered by a resident (`serve --socket`): {same['cpu_s']} CPU-s (client {same['client_cpu_s']} + "
            f"resident {same['resident_cpu_s']}), {new['runs']} questions it had not seen {new['cpu_s']} (client "
            f"{new['client_cpu_s']} + resident {new['resident_cpu_s']}) vs {new['in_process_cpu_s']} in-process")


def first_question(r: dict) -> str:
    return "; ".join(f"{run['hogs']} hogs: exit {run['exit']}, {run['wall_s']} s wall, {run['cpu_s']} CPU-s, load "
                     f"{run['loadavg_1min_after']}" for run in r["runs"])


def document_words(r: dict) -> str:
    return "; ".join(f"{c} ({m['chunks']} chunks): {m['median_cpu_s']['summed counts']} vs "
                     f"{m['median_cpu_s']['chunks tokenised']} CPU-s ({m['ratio_tokenised_to_summed']}×; first "
                     f"{m['first_summed_cpu_s']})" for c, m in r["corpora"].items())


def index_parallel(r: dict) -> str:
    per = r["median_cpu_s_per_passage"]
    return (f"{r['passages']} passages: 2 processes {r['ratio_to_1_worker']['2 processes']}× one worker "
            f"({r['median_passages_per_s']['2 processes']} vs {r['median_passages_per_s']['1 worker']} passages/s; "
            f"{per['2 processes']} vs {per['1 worker']} CPU-s a passage), load {r['loadavg_before'][0]}–"
            f"{r['loadavg_after'][0]}")


def wiki_writeback(r: dict) -> str:
    m = r["median_ms"]
    return (f"{r['questions']} questions × {r['rounds']} rounds: feedback on/off {r['ratio_on_off']['wall']}× wall "
            f"({m['on']['wall']} vs {m['off']['wall']} ms), {r['ratio_on_off']['cpu']}× CPU")


def scale(r: dict) -> str:
    def size(n: str, m: dict) -> str:
        s = m["serve"]
        p50 = " / ".join(f"{s['routes'][k]['p50_ms']}" if k in s["routes"] else "—"
                         for k in ("bm25", "dense", "hybrid", "routed fact"))
        fact = s["routes"].get("routed fact", {}).get("cpu_p50_ms", "—")
        return (f"{int(n) // 1000}k: build {m['build']['build_cpu_s']} s CPU, open {s['open_cpu_s']} s CPU, "
                f"RSS after open {s['rss_after_open_mb']} MB, p50 wall bm25 / dense / hybrid / routed fact {p50} ms "
                f"(routed fact CPU p50 {fact} ms), dense recall@10 {s['dense_recall@10']}")
    return "; ".join(size(n, m) for n, m in r["sizes"].items())


ROWS: list[tuple[str, str, str, Callable[[dict], str]]] = [
    ("CPU of CLI commands, same run as main", "imports", "bench/imports.py --base MAIN", imports),
    ("first `ask` in an empty data home, `timeoutSeconds: 15`", "first-question", "bench/first_question.py",
     first_question),
    ("a survey's whole-document BM25: summed from the index's counts vs chunks tokenised, median", "document-words",
     "bench/document_words.py", document_words),
    ("indexing: passages embedded per second, 2 cores", "index-parallel", "bench/index_parallel.py", index_parallel),
    ("synthesis with feedback on vs off (write-backs)", "wiki-writeback", "bench/wiki_writeback.py", wiki_writeback),
    ("runner overhead", "runner", "bench/runner.py", runner),
    ("BM25 vs rank-bm25, STARD 58.6k articles", "retrieval", "bench/retrieval.py", bm25_speed),
    ("STARD train (`lambdarag eval` metrics)", "retrieval", "bench/retrieval.py", stard_quality),
    ("index build, STARD", "retrieval", "bench/retrieval.py", build),
    ("wiki compile, whole laws folder", "graph", "bench/graph.py", graph),
    ("routing, laws folder, frozen TEST half, before tuning", "routing-baseline", "bench/routing.py",
     routing_half("test")),
    ("routing, laws folder, frozen TEST half, learned classifier + merged strategies", "routing", "bench/routing.py",
     routing_half("test")),
    ("routing, laws folder, DEV half (tuned on), learned classifier + merged strategies", "routing", "bench/routing.py",
     routing_half("dev")),
    ("routing, laws folder, DEV2 (written after dev saturated, then tuned on)", "routing", "bench/routing.py",
     routing_half("dev2")),
    ("routing, maritime corpus (bench/data/maritime), frozen TEST half, before issue 33's statute priors",
     "routing-maritime-before", "bench/routing.py --questions maritime", routing_per_type("test")),
    ("routing, maritime corpus (bench/data/maritime), DEV half, before issue 33's statute priors",
     "routing-maritime-before", "bench/routing.py --questions maritime", routing_per_type("dev")),
    ("routing, maritime corpus (bench/data/maritime), frozen TEST half", "routing-maritime",
     "bench/routing.py --questions maritime", routing_per_type("test")),
    ("routing, maritime corpus (bench/data/maritime), DEV half (issue 33 tunes on it)", "routing-maritime",
     "bench/routing.py --questions maritime", routing_per_type("dev")),
    ("routing, maritime corpus, DEV2 half (written in round 6), first run, before any tuning on it",
     "routing-maritime-dev2-before", "bench/routing.py --questions maritime --halves dev2", routing_per_type("dev2")),
    ("routing, maritime corpus, DEV2 half, after tuning on it", "routing-maritime",
     "bench/routing.py --questions maritime", routing_per_type("dev2")),
    ("route latency, same run: code before the routing work vs now", "route-latency", "bench/route_latency.py",
     route_latency),
    ("route latency, same run: the strategy fact moved to, before vs now", "route-latency-hybrid",
     "bench/route_latency.py --route hybrid_search", route_latency),
    ("compare statute names, every laws title by full, short, 《quoted》, abbreviated and stem name", "statute-names",
     "bench/statute_names.py", statute_names),
    ("learned retrieval, STARD 5-fold CV", "feedback", "bench/feedback.py", feedback),
    ("learned retrieval, STARD 5-fold CV, another split", "feedback-partition-1", "bench/feedback.py --partition 1",
     feedback_partition),
    ("learned retrieval, STARD 5-fold CV, a third split", "feedback-partition-2", "bench/feedback.py --partition 2",
     feedback_partition),
    ("learned retrieval, STARD 5-fold CV, a fresh split (never tuned on)", "feedback-partition-3",
     "bench/feedback.py --partition 3", feedback_partition),
    ("learned retrieval, Debian corpora, dev half learned, test half measured", "feedback-debian",
     "bench/feedback.py --debian", feedback_debian),
    ("answer self-confirmation, Debian corpora, dev half answered, test half measured", "feedback-self",
     "bench/feedback.py --self-confirmation", feedback_self),
    ("learned retrieval through lambdarag eval, STARD fold 0, same-run latency", "feedback-eval",
     "bench/feedback.py --eval-latency", feedback_eval),
    ("query-side linear adapter probe, STARD 5-fold dense", "feedback-adapter", "bench/query_adapter.py",
     feedback_adapter),
    ("query adapter settings inside the learned hybrid, STARD 5-fold CV, per split (3 is the fresh one)",
     "feedback-adapter-blend", "bench/adapter_blend.py", feedback_adapter_blend),
    ("query adapter, its blend fitted per fold under the unseen bound (0 = off), STARD 5-fold CV, per split (3 is the "
     "fresh one)", "feedback-adapter-fitted", "bench/adapter_blend.py --fitted", feedback_adapter_fitted),
    ("learned second stage over the learned hybrid's candidates, STARD 5-fold CV, per split (probe)",
     "feedback-rerank", "bench/learned_rerank.py", feedback_rerank),
    ("past-question matching, STARD 5-fold: the best past question shares a relevant article", "feedback-match",
     "bench/neighbour_match.py", feedback_match),
    ("hybrid search latency, STARD fold 0", "stard-latency", "bench/feedback.py --latency-only", stard_latency),
    ("Milvus (milvus-lite) vs local, STARD", "milvus", "bench/milvus.py", milvus),
    ("`lambdarag ask` on the built demo index, fresh process", "cli", "bench/cli.py", cli),
    ("the wheel into a fresh venv, then `lambdarag ask` with an empty HOME", "install", "bench/install.py", install),
    ("`lambdarag eval --routed`, laws folder, frozen TEST half", "eval-routed", "bench/eval_routed.py", eval_routed),
    ("five question types, scripted 2 tokens/s model, default config", "slow-llm-60s", "bench/slow_llm.py", slow_llm),
    ("five question types, real SmolLM2-135M (llama.cpp, CPU), default config", "real-llm-60s", "bench/slow_llm.py",
     slow_llm),
    ("feedback store: files before vs SQLite vs PostgreSQL", "store", "bench/store.py", store),
    ("index scale, laws chunks replicated (vectors imported, no embedding), before constant-time open",
     "scale-before", "bench/scale.py --name scale-before", scale),
    ("index scale, laws chunks replicated (vectors imported, no embedding)", "scale", "bench/scale.py", scale),
    ("streaming, offline: first evidence / first token / result", "stream", "bench/stream.py",
     stream_latency("offline")),
    ("streaming, scripted LLM at 40 tokens/s: first evidence / first token / result", "stream", "bench/stream.py",
     stream_latency("scripted_llm")),
    *domain_rows(),
    ("query type accuracy of the offline classifier, every labelled set (documentation corpora: dev, frozen test, dev2 where "
     "written; statutes: dev, dev2, frozen test; written: questions about no benchmark's corpus, written next to the cues, dev)", "classify-types",
     "bench/classify_types.py", classify_types),
    *((f"query type accuracy, each open corpus's book left out of the classifier's exemplars (both languages together): "
       f"the estimate for an unseen book, but for the cues, written on these halves too; open halves only; {when}",
       f"classify-types-lobo{suffix}", f"bench/classify_types.py --lobo{flag}", classify_lobo)
      for when, suffix, flag in (("before round 21's cues and exemplars", "-before",
                                  " --out classify-types-lobo-before.json"), ("after", "", ""))),
    *answers_rows(),
]


def measured(r: dict) -> str:
    m = r.get("machine") or (r.get("stard") or {}).get("machine_after")
    if not isinstance(m, dict):
        return "no machine facts: rerun"
    return f"{m['date'][:10]}, {m['cores']} cores, load {(m.get('loadavg') or m.get('load_average'))[0]}"


def table() -> str:
    """Returns the markdown table of every row, each from its result file."""
    lines = ["| what | script | result | measured |", "|---|---|---|---|"]
    for what, name, script, fmt in ROWS:
        r = load(name)
        try:
            text, when = (fmt(r), measured(r)) if r else (f"not measured: run `{script}`", "—")
        except KeyError as e:
            text, when = f"not measured ({name}.json lacks {e}): run `{script}`", measured(r)
        lines.append(f"| {what} | `{script}` | {text} | {when} |")
    return "\n".join(lines) + "\n"


def stale() -> list[str]:
    """Returns the result files that lack machine facts or a field the table needs (they need a rerun)."""
    out = []
    for _, name, script, fmt in ROWS:
        r = load(name)
        if r is None or measured(r).startswith("no machine") or "not timed yet" in _safe(fmt, r):
            out.append(f"{name}.json ({script})")
    return sorted(set(out))


def _safe(fmt: Callable[[dict], str], r: dict) -> str:
    try:
        return fmt(r)
    except KeyError:
        return "not timed yet"


def in_page(text: str) -> Optional[str]:
    """Returns the table between the page's bench-table markers (None without markers)."""
    m = re.search(re.escape(START) + r"\n(.*?)" + re.escape(END), text, re.S)
    return m.group(1) if m else None


def main(argv: list[str]) -> int:
    text = PAGE.read_text(encoding="utf-8")
    current = in_page(text)
    if current is None:
        print(f"docs/benchmarks.md lacks the {START} … {END} markers", file=sys.stderr)
        return 1
    if "--check" in argv:
        return 0 if current == table() else 1
    PAGE.write_text(text.replace(START + "\n" + current + END, START + "\n" + table() + END), encoding="utf-8")
    print("needs a rerun:", ", ".join(stale()) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
