"""Where LambdaRAG reads its configuration and writes its data: the lookup order, `init`, `where`, one data home,
indexes left in a checkout's old knowledge/ folder, and `eval --routed`."""
from __future__ import annotations

import json
import shutil

import platformdirs
import pytest

from lambdarag.orchestration.cli import main
from lambdarag.orchestration.config import DEFAULT_CONFIG, config_source, load_config
from lambdarag.orchestration.feedback import feedback_dir
from lambdarag.orchestration.knowledge import wiki_dir_for
from lambdarag.skills.exemplars import exemplar_cache
from lambdarag.skills.store import index as index_module
from lambdarag.skills.store.home import cache_root, data_home
from lambdarag.skills.store.index import backend_exists, index_dir, open_index
from lambdarag.domains.corpus import build_index
from tests.conftest import MARITIME


def test_the_config_is_found_by_flag_then_env_then_working_folder_then_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LAMBDARAG_CONFIG", raising=False)
    assert config_source() == (DEFAULT_CONFIG, "packaged default")
    (tmp_path / "agent-config.yml").write_text("retrieval:\n  index: here\n", encoding="utf-8")
    assert config_source() == (tmp_path / "agent-config.yml", "working folder")
    assert load_config().retrieval.index == "here"
    monkeypatch.setenv("LAMBDARAG_CONFIG", str(tmp_path / "env.yml"))
    assert config_source() == (tmp_path / "env.yml", "$LAMBDARAG_CONFIG")
    assert config_source(tmp_path / "flag.yml") == (tmp_path / "flag.yml", "--config")


def test_relative_paths_in_a_config_file_are_taken_from_its_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(MARITIME)
    (tmp_path / "c.yml").write_text("retrieval:\n  corpus: docs\n  backend: {kind: milvus, uri: m.db}\n"
                                    "  skills: {wiki: {dir: ~/w}}\n", encoding="utf-8")
    r = load_config(tmp_path / "c.yml").retrieval
    assert (r.corpus, r.backend.uri) == (str(tmp_path / "docs"), str(tmp_path / "m.db"))
    assert r.skills.wiki.dir == str(tmp_path.home() / "w")


def test_init_writes_the_commented_default_and_never_overwrites(tmp_path, capsys):
    assert main(["init", str(tmp_path / "proj")]) == 0
    written = tmp_path / "proj" / "agent-config.yml"
    assert written.read_text(encoding="utf-8") == DEFAULT_CONFIG.read_text(encoding="utf-8")
    assert sum(line.lstrip().startswith("#") for line in written.read_text(encoding="utf-8").splitlines()) >= 4
    assert load_config(written) == load_config(DEFAULT_CONFIG)
    capsys.readouterr()
    assert main(["init", str(tmp_path / "proj")]) == 2
    assert "already exists" in capsys.readouterr().err


def test_every_location_is_under_one_data_home(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("LAMBDARAG_HOME")
    monkeypatch.delenv("LAMBDARAG_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    home = data_home()
    assert str(home) == platformdirs.user_data_dir("lambdarag", appauthor=False) and home.is_relative_to(tmp_path)
    config = load_config(DEFAULT_CONFIG)
    for place in (index_dir("demo"), feedback_dir("demo"), wiki_dir_for(config, "demo"), wiki_dir_for(config, "x"),
                  exemplar_cache(), cache_root()):
        assert place.is_relative_to(home), place
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "mine"))
    assert index_dir("demo") == tmp_path / "mine" / "demo" / "index" and cache_root() == tmp_path / "mine" / "cache"
    build_index(MARITIME, "m", dense=False, progress=False)
    assert main(["where"]) == 0
    out = capsys.readouterr().out
    assert f"data home   {tmp_path / 'mine'}  ($LAMBDARAG_HOME)" in out
    assert f"index m          {tmp_path / 'mine' / 'm' / 'index'}" in out and "(packaged default)" in out
    assert f"wiki {tmp_path / 'mine' / 'm' / 'wiki'}" in out


def test_an_index_in_the_checkouts_old_knowledge_folder_opens_untouched_with_a_notice(tmp_path, monkeypatch, capsys):
    old_root = tmp_path / "checkout" / "knowledge"
    monkeypatch.setenv("LAMBDARAG_HOME", str(old_root))       # what an older version wrote, in the same layout
    built = build_index(MARITIME, "legacy", dense=False, progress=False)
    shutil.rmtree(old_root / "cache", ignore_errors=True)
    before = {p: p.stat().st_mtime_ns for p in old_root.rglob("*")}
    monkeypatch.setattr(index_module, "OLD_ROOT", old_root)
    monkeypatch.setattr(index_module, "_TOLD", set())
    monkeypatch.setenv("LAMBDARAG_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    capsys.readouterr()
    assert backend_exists({"kind": "local"}, "legacy")
    opened = open_index("legacy")
    assert opened.fingerprint() == built.fingerprint()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "old place" in err and f"mv {old_root / 'legacy' / 'index'} " in err
    assert {p: p.stat().st_mtime_ns for p in old_root.rglob("*")} == before
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "set"))   # a home set explicitly never looks back
    assert not backend_exists({"kind": "local"}, "legacy")


def test_eval_routed_scores_search_itself_per_type_with_type_accuracy(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    config = tmp_path / "c.yml"
    config.write_text("retrieval:\n  skills:\n    embedding: {enabled: false}\n", encoding="utf-8")
    assert main(["--config", str(config), "index", "--corpus", str(MARITIME), "--name", "mar", "--no-dense"]) == 0
    queries = tmp_path / "q.jsonl"
    rows = [{"qid": "1", "query": "船长有什么权力？", "type": "fact", "relevant": ["民法商法/海商法(1992-11-07).md"]},
            {"qid": "2", "query": "2015年时国际海运条例对无船承运业务有哪些规定？", "type": "temporal",
             "relevant": ["国际海运条例(2019-03-02).md"]},
            {"qid": "3", "query": "渔业法与港口法有何异同？", "type": "fact", "relevant": ["渔业法(2013-12-28).md"]}]
    queries.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", "--routed", "--config", str(config), "--index", "mar", "--queries", str(queries),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["level"] == "document" and set(out["per_type"]) == {"fact", "temporal"}
    assert out["per_type"]["fact"]["n"] == 2 and out["per_type"]["fact"]["type_accuracy"] == 0.5   # q3 is a compare
    assert out["per_type"]["temporal"]["type_accuracy"] == 1.0
    assert out["metrics"]["recall@5"] == 1.0 and out["metrics"]["type_accuracy"] == pytest.approx(0.6667)
    assert not (tmp_path / "home" / "mar" / "feedback").exists()   # evaluating learns nothing
