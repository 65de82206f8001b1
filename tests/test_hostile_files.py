"""Hostile files are one file's problem: a very long title, a YAML alias bomb and structures nested thousands deep
each cost their own file at most; the run finishes and the good files are searchable."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lambdarag.errors import ConfigError
from lambdarag.orchestration.config import parse_config
from lambdarag.orchestration.knowledge import forget
from lambdarag.skills.store.index import open_index
from lambdarag.skills.store.wiki import WikiStore

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300   # generous: a hang (the alias bomb took longer than this before) fails; no timing is asserted
LONG_TITLE = "关于进一步加强和规范内河船舶船员适任考试发证及船员服务簿管理工作若干问题的补充通知" * 2 + "附件说明"


def alias_bomb(levels: int = 9) -> str:
    """Returns YAML of ~1 KB per level whose aliases expand to 9**levels strings."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def run(home: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "LAMBDARAG_HOME": str(home), "LAMBDARAG_FEEDBACK": "off"}
    if os.environ.get("LAMBDARAG_CACHE"):
        env["LAMBDARAG_CACHE"] = os.environ["LAMBDARAG_CACHE"]
    return subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=TIMEOUT, env=env)


@pytest.fixture
def hostile(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# 引航管理规定\n\n第一条　引航员应当持证上岗，独立完成引航作业。\n", encoding="utf-8")
    (docs / "long.md").write_text(f"# {LONG_TITLE}\n\n第一条　船员服务簿由海事管理机构签发。\n", encoding="utf-8")
    (docs / "bomb.md").write_text(f"---\n{alias_bomb()}---\n# 炸弹\n\n正文。\n", encoding="utf-8")
    (docs / "deep-front.md").write_text("---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n# 深\n\n正文。\n", "utf-8")
    (docs / "deep-map.md").write_text("---\n" + "".join(" " * i + f"k{i}:\n" for i in range(300)) + "---\n# 深\n\n正文。\n",
                                      encoding="utf-8")
    (docs / "side.md").write_text("# 附录\n\n附录正文。\n", encoding="utf-8")
    (docs / "side.md.meta.json").write_text("[" * 100000 + "]" * 100000, encoding="utf-8")
    records = [json.dumps({"id": "r1", "text": "锚泊作业应当遵守港口规定。"}, ensure_ascii=False),
               '{"id": "r2", "text": ' + "[" * 100000 + "]" * 100000 + "}"]
    (docs / "records.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    return tmp_path


def test_hostile_files_beside_good_ones_cost_only_themselves(hostile):
    home = hostile / "home"
    out = run(home, "index", "--corpus", str(hostile / "docs"), "--name", "kb", "--no-dense")
    assert out.returncode == 0, out.stderr[-2000:]
    for name, why in [("bomb.md", "YAML alias *l0 refused"), ("deep-front.md", "nested deeper than 64"),
                      ("deep-map.md", "nested deeper than 64"), ("side.md", "levels deep, over the limit of 64"),
                      ("records.jsonl:2", "levels deep, over the limit of 64")]:
        assert any(line.startswith(f"skipped {name}") and why in line for line in out.stderr.splitlines()), name
    os.environ["LAMBDARAG_HOME"], saved = str(home), os.environ.get("LAMBDARAG_HOME")
    try:
        forget()
        index = open_index("kb")
        found = {c.source for q in ("引航员 持证", "船员服务簿 签发", "锚泊 港口") for c, _ in index.bm25(q, 3)}
        assert {"good.md", "long.md", "records.jsonl:1"} <= found
        wiki = WikiStore(home / "kb" / "wiki")
        assert LONG_TITLE in wiki.pages()     # its page has a short hashed file name
        assert all(len(p.name.encode()) < 255 for p in (home / "kb" / "wiki" / "entities").iterdir())
    finally:
        os.environ["LAMBDARAG_HOME"] = saved or ""
        forget()


def test_an_alias_bomb_in_the_config_is_refused_by_check_and_ask(tmp_path):
    config = tmp_path / "bomb.yml"
    bomb = "".join(f"  {line}\n" for line in alias_bomb().splitlines())
    config.write_text(f"patterns:\n  hybrid_search:\n    weights: {{}}\n  junk:\n{bomb}", encoding="utf-8")
    for command in (["check"], ["ask", "引航员应当怎样上岗？"]):
        out = run(tmp_path / "home", "--config", str(config), *command)
        assert out.returncode == 2 and "YAML alias *l0 refused" in out.stderr and "Traceback" not in out.stderr


def test_config_nesting_and_size_are_capped_with_named_errors():
    with pytest.raises(ConfigError, match="line 1: YAML nested deeper than 64 levels"):
        parse_config("limits: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(ConfigError, match="over the limit of 1048576"):
        parse_config("# " + "x" * (1 << 20) + "\n")
