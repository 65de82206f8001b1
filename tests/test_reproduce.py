"""bench/reproduce.py compares every quality leaf of two result files, never a timing or a machine fact."""
import json
import shutil

from bench.reproduce import GROUPS, QUICK, ROOT, compare, main


def test_a_figure_or_answer_that_differs_is_named_by_its_path_and_timings_are_not_compared():
    reference = {"machine": {"loadavg": [1.0]}, "test": {"routed": {"overall": {"recall@5": 0.943}},
                                                         "latency_ms_median": {"routed:synthesis": 159.0},
                                                         "answers": [{"qid": "f1", "answer": "A."}]},
                 "compile_s": 15.4}
    fresh = {"machine": {"loadavg": [9.0]}, "test": {"routed": {"overall": {"recall@5": 0.944}},
                                                     "latency_ms_median": {"routed:synthesis": 12.0},
                                                     "answers": [{"qid": "f1", "answer": "B."}, {"qid": "f2"}]},
             "compile_s": 99.0}
    assert compare(fresh, reference) == ["test.routed.overall.recall@5: 0.943 → 0.944",
                                         'test.answers[0].answer: "A." → "B."', "test.answers: 1 items → 2"]
    assert compare(reference, json.loads(json.dumps(reference))) == []


def test_an_integer_and_a_float_of_equal_value_differ_and_a_missing_key_is_named():
    assert compare({"n": 1.0}, {"n": 1}) == ["n: 1 → 1.0"]
    assert compare({}, {"hits": 3}) == ["hits: 3 → (missing)"]


def test_a_query_log_id_inside_a_text_is_not_compared_but_the_text_around_it_is():
    cited = "海洋环境保护法 [第七十四条] ← q20261201225234-03448a37"
    assert compare(cited.replace("20261201225234-03448a37", "20261202120000-9f0e1d2c"), cited) == []
    assert len(compare(cited.replace("第七十四条", "第七十五条"), cited)) == 1


def test_every_group_runs_a_bench_script_of_this_tree_that_wrote_a_committed_result():
    for runs in [*GROUPS.values(), *QUICK.values()]:
        for r in runs:
            assert (ROOT / r.argv[0]).is_file(), r
            assert (ROOT / "bench" / "results" / r.result).is_file(), r


def test_compare_only_exits_0_on_the_committed_files_and_1_when_one_figure_moves(tmp_path, capsys):
    for name in ("routing.json", "eval-routed.json"):
        shutil.copy(ROOT / "bench" / "results" / name, tmp_path / name)
    argv = ["--only", "routing,eval-routed", "--out", str(tmp_path), "--home", str(tmp_path), "--compare-only"]
    assert main(argv) == 1  # routing-maritime.json is missing from tmp_path
    shutil.copy(ROOT / "bench" / "results" / "routing-maritime.json", tmp_path / "routing-maritime.json")
    assert main(argv) == 0
    moved = json.loads((tmp_path / "routing.json").read_text(encoding="utf-8"))
    moved["test"]["type_accuracy"]["overall"] = 0.97
    (tmp_path / "routing.json").write_text(json.dumps(moved), encoding="utf-8")
    capsys.readouterr()
    assert main(argv) == 1
    assert "test.type_accuracy.overall: 0.971 → 0.97" in capsys.readouterr().out
