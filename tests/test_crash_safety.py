"""Crash safety of the stores: `index` killed at many moments, torn log lines, damaged generations, orphan temp files."""
from __future__ import annotations

import io
import json
import multiprocessing
import os
import shutil
import signal
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from lambdarag.errors import StoreCorrupt
from lambdarag.orchestration.cli import main
from lambdarag.orchestration.knowledge import forget
from lambdarag.skills.store.index import index_dir, open_index
from lambdarag.domains.corpus import build_index
from tests.conftest import MARITIME   # the real statutes shipped in tests/fixtures: runs on a bare clone too

REPO = str(Path(__file__).resolve().parents[1])
SAVING = {"save", "write_replace", "write_atomic", "write_text", "dump"}
QUERIES = ["船舶碰撞 赔偿", "海关 行政处罚 管辖", "海底电缆 保护"]


def statutes(n: int) -> list[Path]:
    """Returns the `n` smallest maritime statutes (a real slice that indexes in about a second)."""
    files = sorted((p for p in MARITIME.rglob("*.md") if p.name != "README.md"), key=lambda p: (p.stat().st_size, p.name))
    return files[:n]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "off")
    forget()
    yield tmp_path
    forget()


def index_cmd(corpus: Path, name: str) -> list[str]:
    return ["index", "--corpus", str(corpus), "--name", name, "--no-dense"]


def quiet_main(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def traced_index(argv: list[str], stop_at: int, hit_w: int, count_path: str) -> None:
    """Runs `index` in this (forked) child, counting the repo's function calls and the lines of its writers.

    At event `stop_at` it tells the parent and waits to be killed; with
    `stop_at` 0 it runs to the end and writes the event count and where the
    writers ran to `count_path`.
    """
    count, saving = [0], []

    def tick() -> None:
        count[0] += 1
        if count[0] == stop_at:
            os.write(hit_w, b"x")
            signal.pause()

    def in_writer(frame, event, arg):
        if event == "line":
            saving.append(count[0])
            tick()
        return in_writer

    def on_call(frame, event, arg):
        if not frame.f_code.co_filename.startswith(REPO) or "/tests/" in frame.f_code.co_filename:
            return None
        tick()
        return in_writer if frame.f_code.co_name in SAVING else None

    sys.settrace(on_call)
    with redirect_stdout(io.StringIO()):
        main(argv)
    sys.settrace(None)
    Path(count_path).write_text(json.dumps({"events": count[0], "saving": saving}))
    os._exit(0)


def run_child(argv: list[str], stop_at: int, count_path: Path) -> bool:
    """Returns whether the child reached `stop_at` and was killed there (by PID, SIGKILL)."""
    ctx = multiprocessing.get_context("fork")
    hit_r, hit_w = os.pipe()
    child = ctx.Process(target=traced_index, args=(argv, stop_at, hit_w, str(count_path)))
    child.start()
    os.close(hit_w)
    killed = False
    try:
        import select

        while child.is_alive():
            ready, _, _ = select.select([hit_r], [], [], 0.2)
            if ready and os.read(hit_r, 1):
                os.kill(child.pid, signal.SIGKILL)
                killed = True
                break
        child.join(120)
    finally:
        os.close(hit_r)
    assert not child.is_alive(), "the index child neither finished nor reached its kill point"
    assert killed or child.exitcode == 0, f"index child failed with exit code {child.exitcode}"
    return killed


def snapshot(backend) -> tuple:
    """Returns what a search sees of an index: chunk ids and, per query, every chunk's BM25 score."""
    ids = sorted(c.id for c in backend.chunks())
    scores = tuple(tuple(sorted((c.id, round(s, 6)) for c, s in backend.bm25(q, len(ids)))) for q in QUERIES)
    return len(ids), ids, scores


def test_index_killed_at_many_moments_of_an_incremental_update_resumes_to_a_clean_build(home):
    files = statutes(12)
    corpus = home / "corpus"
    corpus.mkdir()
    for f in files[:9]:
        shutil.copy(f, corpus / f.name)
    assert quiet_main(index_cmd(corpus, "kb"))[0] == 0
    base = home / "base"
    shutil.copytree(home / "home" / "kb", base)
    # the update: two statutes added, one changed, one removed
    for f in files[9:11]:
        shutil.copy(f, corpus / f.name)
    changed = corpus / files[3].name
    changed.write_text(changed.read_text(encoding="utf-8") + "\n第九十九条　船舶碰撞的赔偿由海事法院管辖。\n",
                       encoding="utf-8")
    (corpus / files[0].name).unlink()
    clean = snapshot(build_index(corpus, "clean", dense=False, progress=False))

    def reset() -> None:
        shutil.rmtree(home / "home" / "kb")
        shutil.copytree(base, home / "home" / "kb")

    counts = home / "events.json"
    assert not run_child(index_cmd(corpus, "kb"), 0, counts)
    measured = json.loads(counts.read_text())
    total, saving = measured["events"], sorted(set(measured["saving"]))
    assert saving, "the update wrote no files"
    spread = [total * (i + 1) // 12 for i in range(11)]
    in_writes = [saving[len(saving) * i // 11] for i in range(11)]
    moments = sorted(set(spread + in_writes))
    assert len(moments) >= 20
    for moment in moments:
        reset()
        assert run_child(index_cmd(corpus, "kb"), moment, counts), f"index ended before event {moment}"
        forget()
        code, out = quiet_main(["ask", "船舶碰撞的赔偿由哪个法院管辖？", "--index", "kb"])
        assert code == 0 and out.strip(), f"ask failed after a kill at event {moment}"
        assert quiet_main(index_cmd(corpus, "kb"))[0] == 0
        assert snapshot(open_index("kb")) == clean, f"after a kill at event {moment} the rerun differs from a clean build"
    leftovers = [p.name for p in index_dir("kb").iterdir() if p.name.endswith(".tmp")]
    assert not leftovers
    generations = {p.name.split(".")[1] for p in index_dir("kb").iterdir() if p.name.startswith("chunks.")}
    assert len(generations) <= 2      # the current one and the one before it


def test_a_damaged_generation_is_refused_with_the_rebuild_command_and_rebuilt_by_index(home, capsys):
    corpus = home / "corpus"
    corpus.mkdir()
    for f in statutes(3):
        shutil.copy(f, corpus / f.name)
    built = snapshot(build_index(corpus, "kb", dense=False, progress=False))
    manifest = json.loads((index_dir("kb") / "manifest.json").read_text(encoding="utf-8"))
    chunks = index_dir("kb") / manifest["files"]["chunks"]["name"]
    chunks.write_bytes(chunks.read_bytes()[:-40])            # a torn file the manifest does not describe
    (index_dir("kb") / ".chunks.2.jsonl.x1.tmp").write_bytes(b"orphan")
    with pytest.raises(StoreCorrupt, match=r"index 'kb' is damaged: .*chunks.*lambdarag index --corpus PATH --name kb"):
        open_index("kb")
    assert not (index_dir("kb") / ".chunks.2.jsonl.x1.tmp").exists()
    assert snapshot(build_index(corpus, "kb", dense=False, progress=False)) == built
    assert "rebuilding it from the corpus" in capsys.readouterr().err


def test_a_torn_line_of_an_old_query_log_is_counted_by_feedback_stats_after_its_import(home, capsys):
    folder = home / "home" / "kb" / "feedback"
    folder.mkdir(parents=True)
    (folder / "query_log.jsonl").write_bytes(b'{"query": "a", "from_cache": false}\n{"query": "b", "from_ca\n'
                                             b'{"query": "c", "from_cache": true}\n')   # a writer killed mid-line
    config = home / "agent-config.yml"
    config.write_text("retrieval:\n  index: kb\n", encoding="utf-8")
    code, out = quiet_main(["feedback", "stats", "--index", "kb", "--config", str(config)])
    assert code == 0
    stats = json.loads(out)
    assert (stats["queries"], stats["torn_log_lines"], stats["cache_hits"]) == (2, 1, 1)


def test_the_default_index_is_rebuilt_when_its_stored_generation_fails_validation(home):
    from lambdarag.orchestration.search_unified import search
    from tests.test_search import config_with

    config = config_with(retrieval__skills__embedding__enabled=False)
    assert search("船员条例由哪个部门主管？", config=config).citations
    manifest = index_dir("demo") / "manifest.json"
    manifest.write_text(json.dumps({"fingerprint": "x", "documents": {}}), encoding="utf-8")   # an older format
    forget()
    r = search("船员条例由哪个部门主管？", config=config)
    assert r.citations
    assert any("rebuilt index 'demo'" in f["reason"] and "format-2" in f["reason"] for f in r.fallbacks)


def test_publishing_an_unchanged_plain_wiki_folder_links_to_its_generation_not_to_itself(tmp_path):
    # a wiki compiled before generations, recompiled with nothing changed, is published as it is
    from lambdarag.skills.store import generations

    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "relations.json").write_text("{}", encoding="utf-8")
    generations.publish(wiki, generations.current(wiki))
    assert wiki.is_symlink() and generations.current(wiki) == tmp_path / "wiki.g0"
    assert (wiki / "relations.json").read_text(encoding="utf-8") == "{}"
