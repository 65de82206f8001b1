"""bench/survey_replay.py: replaying the shipped survey on recorded surveys gives domain_bench's routed figures."""
from __future__ import annotations

import pytest

from bench.domain_bench import SYSTEMS, run_half, system_config
from bench.survey_replay import placed, record, replay
from lambdarag.domains.corpus import build_index
from lambdarag.orchestration.config import load_config

PAGES = {"03.01-cron.md": "# Cron\n\nCron runs jobs at set times: the ways to schedule a job for every hour.\n",
         "03.02-at.md": "# At\n\nThe at command schedules a job once, at a given time.\n",
         "03.03-anacron.md": "# Anacron\n\nAnacron runs periodic commands on machines that are not always on.\n",
         "tar.md": "# Archiving with tar\n\ntar writes a backup archive of the files, and a backup of the backup.\n",
         "rsync.md": "# Backup with rsync\n\nrsync copies over the network: " + " ".join(f"w{i}" for i in range(80)),
         "snapshots.md": "# Backup by snapshots\n\nA snapshot freezes a volume: " + " ".join(f"v{i}" for i in range(80))}
PAGES |= {f"0{4 + i}.01-{n}.md": f"# {n.title()}\n\nThe ways to set up {n} and the files of {n}.\n"
          for i, n in enumerate(("fonts", "printing", "mail", "sound", "locale"))}
QUESTIONS = [
    {"qid": "s1", "type": "synthesis", "lang": "en", "query": "Summarize the ways to schedule a job",
     "relevant": ["03.01-cron.md", "03.02-at.md", "03.03-anacron.md"]},
    {"qid": "s2", "type": "synthesis", "lang": "en", "query": "Summarize the ways to make a backup of files",
     "relevant": ["tar.md", "rsync.md", "snapshots.md"]},
    {"qid": "s3", "type": "synthesis", "lang": "en", "query": "Give an overview of setting up fonts, mail and sound",
     "relevant": ["04.01-fonts.md", "06.01-mail.md", "07.01-sound.md"]},
    {"qid": "f1", "type": "fact", "lang": "en", "query": "What does anacron run?", "relevant": ["03.03-anacron.md"]},
]


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """A BM25-only index of eleven small pages in a home of its own, named `replayed`, with that home set."""
    home, docs = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("docs")
    for name, text in PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LAMBDARAG_HOME", str(home))
        build_index(docs, "replayed", dense=False, progress=False)
        yield "replayed"


def test_replaying_the_shipped_survey_gives_domain_benchs_routed_synthesis_figures(jobs):
    cfg = load_config(None)
    bench = run_half(QUESTIONS, jobs, {s: system_config(cfg, p) for s, p in SYSTEMS.items()})
    rows = record(QUESTIONS, jobs, cfg, "jobs", "dev")
    assert [r["qid"] for r in rows] == ["s1", "s2", "s3"] and all(r["found"] for r in rows)
    # the survey orders its documents unlike hybrid, so the replay has something to reproduce
    assert any(placed(r)[:5] != r["hybrid"][:5] for r in rows)
    assert [placed(r)[:5] for r in rows] == [r["routed"][:5] for r in rows]
    figures = bench["routed"]["per_type"]["synthesis"]
    assert replay(rows) == {"recall@5": figures["recall@5"], "mrr@5": figures["mrr@5"], "n": 3}
    # an ordering that drops the survey's additions replays as hybrid's first documents
    assert replay(rows, lambda found: found.hybrid)["recall@5"] == pytest.approx(
        bench["hybrid"]["per_type"]["synthesis"]["recall@5"])


def test_a_question_whose_search_crashes_is_recorded_as_domain_bench_counts_it(jobs, monkeypatch):
    """A crash (a deadline passed on a loaded machine) is one row scored 0, as domain_bench scores it, and the
    questions after it are still recorded."""
    import bench.domain_bench as bench_module
    import bench.survey_replay as replay_module
    from lambdarag.errors import DeadlineExceeded

    own = replay_module.search

    def late(query, index, config):
        if query == QUESTIONS[1]["query"] and config.orchestration.routing.synthesis == "synthesis":
            raise DeadlineExceeded("Par(wiki_deep, …): deadline passed while branch 0 (wiki_deep) was running")
        return own(query, index=index, config=config)

    monkeypatch.setattr(bench_module, "search", late)
    monkeypatch.setattr(replay_module, "search", late)
    cfg = load_config(None)
    bench = run_half(QUESTIONS, jobs, {s: system_config(cfg, p) for s, p in SYSTEMS.items()})
    rows = record(QUESTIONS, jobs, cfg, "jobs", "dev")
    assert [r["qid"] for r in rows] == ["s1", "s2", "s3"]
    assert rows[1]["found"] is None and rows[1]["routed"] == [] and "DeadlineExceeded" in rows[1]["crash"]
    assert rows[2]["found"] and "crash" not in rows[2]
    figures = bench["routed"]["per_type"]["synthesis"]
    assert replay(rows) == {"recall@5": figures["recall@5"], "mrr@5": figures["mrr@5"], "n": 3}
