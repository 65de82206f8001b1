"""Synthesis questions with feedback on vs off, in one run: what write-backs cost the questions after them.

On a copy of the prebuilt demo index and wiki (a fresh data home), each synthesis question of the maritime set
(tests/data/maritime_questions.jsonl) and of the demo set is asked with feedback off and on, in turn (which arm
goes first alternates), in one process. After an "on" question the feedback worker is drained, so its write-back
(graph, pages, wiki store) is done before the next question; what a write-back costs the following questions is
what the ratio shows; the steps that cost more with feedback on say where the rest goes. Remembered query vectors are forgotten before each question, so both arms embed it. Medians of wall and CPU per question (CPU: the process's, all threads), the write-backs
made, and the ratio on/off. The offline answer's sentence vectors are remembered in the data home
(`skills.store.passage_vectors`): the arm that asks a question second reads them, and which arm goes first alternates. Writes bench/results/wiki-writeback.json.

Usage: nice -n 10 python bench/wiki_writeback.py [--rounds N]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.machine import write  # noqa: E402

QUESTION_SETS = (ROOT / "tests" / "data" / "maritime_questions.jsonl", ROOT / "tests" / "data" / "demo_questions.jsonl")


def synthesis_questions() -> list[str]:
    """Returns the distinct synthesis questions of the maritime and demo sets, in file order."""
    rows = [json.loads(line) for path in QUESTION_SETS for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return list(dict.fromkeys(r["query"] for r in rows if r.get("type") == "synthesis"))


def timed(ask) -> tuple[float, float, dict[str, float]]:
    """Returns (wall ms, CPU ms, the result's latency per step) of `ask()`."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = ask()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, result.latency_ms


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=2, help="passes over the questions (each a new data home)")
    args = p.parse_args()
    import yaml

    os.environ["LAMBDARAG_FEEDBACK"] = "on"
    from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
    from lambdarag.orchestration.feedback import FeedbackLoop, feedback_dir
    from lambdarag.orchestration.feedback.worker import drain
    from lambdarag.orchestration.knowledge import forget
    from lambdarag.orchestration.search_unified import search
    from lambdarag.skills.store.vectors import forget_query_vectors

    data = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    configs = {"on": parse_config(yaml.safe_dump(data, allow_unicode=True))}
    data["orchestration"]["feedback"]["enabled"] = False
    configs["off"] = parse_config(yaml.safe_dump(data, allow_unicode=True))
    questions = synthesis_questions()
    times: dict[str, dict[str, list[float]]] = {arm: {"wall": [], "cpu": []} for arm in configs}
    steps: dict[str, dict[str, list[float]]] = {arm: {} for arm in configs}
    writebacks = 0
    for round_ in range(args.rounds):
        home = tempfile.mkdtemp(prefix="wiki-writeback-")
        os.environ["LAMBDARAG_HOME"] = home
        forget()
        search("预热", config=configs["off"])      # the prebuilt index copied in, models and dictionaries loaded
        for i, q in enumerate(questions):
            for arm in (("off", "on") if (i + round_) % 2 == 0 else ("on", "off")):
                forget_query_vectors()
                wall, cpu, latency = timed(lambda: search(q, config=configs[arm]))
                times[arm]["wall"].append(wall)
                times[arm]["cpu"].append(cpu)
                for step, ms in latency.items():
                    steps[arm].setdefault(step, []).append(ms)
                if arm == "on":
                    drain(120)
        loop = FeedbackLoop(configs["on"].orchestration.feedback, feedback_dir("demo"))
        writebacks += sum(1 for item in loop.journal.items().values() if item["entities"] or item["relations"])
    medians = {arm: {k: round(statistics.median(v), 1) for k, v in t.items()} for arm, t in times.items()}
    asked = len(times["on"]["wall"])
    step_medians = {arm: {k: round(statistics.median(v + [0.0] * (asked - len(v))), 1) for k, v in s.items()}
                    for arm, s in steps.items()}
    costlier = sorted(step_medians["on"], key=lambda k: step_medians["off"].get(k, 0.0) - step_medians["on"][k])
    out = {"what": __doc__.split("\n")[0], "index": "demo (prebuilt)", "questions": len(questions),
           "rounds": args.rounds, "writebacks_with_graph_facts": writebacks, "median_ms": medians,
           "ratio_on_off": {k: round(medians["on"][k] / medians["off"][k], 3) for k in ("wall", "cpu")},
           "steps_costlier_with_feedback_ms": {k: {arm: step_medians[arm].get(k, 0.0) for arm in configs}
                                               for k in costlier[:6]}}
    write("wiki-writeback", out)
    return out


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False, indent=1))
