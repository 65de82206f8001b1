"""The CLI with an LLM: compile-wiki --llm reads the config's llm section and retries failures; exit status 3."""
from __future__ import annotations

import json
import shutil

import yaml

from lambdarag.orchestration.cli import EXIT_SERVICE, main
from lambdarag.orchestration.config import DEFAULT_CONFIG
from tests.conftest import MARITIME
from tests.scripted_server import Reply

DOCS = ["行政法规/船员条例(2023-07-20).md", "行政法规/船舶登记条例(2014-07-29).md"]
EXTRACTION = json.dumps({"entities": [{"name": "交通运输部", "type": "agency"}],
                         "relations": [{"head": "交通运输部", "relation": "主管", "tail": "船员"}]}, ensure_ascii=False)


def config_file(tmp_path, url: str, **limits) -> str:
    data = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    data["llm"] = {"baseUrl": url, "model": "m", "timeout": 2}
    data["limits"] = limits
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return str(path)


def test_compile_wiki_llm_uses_the_config_and_retries_failed_documents_next_run(tmp_path, llm_server, monkeypatch):
    for name in ("LAMBDARAG_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    corpus = tmp_path / "corpus"
    for doc in DOCS:
        (corpus / doc).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MARITIME / doc, corpus / doc)
    wiki, config = tmp_path / "wiki", config_file(tmp_path, llm_server.url)
    args = ["--config", config, "compile-wiki", "--corpus", str(corpus), "--wiki", str(wiki), "--llm"]
    llm_server.script.script(Reply(status=500), Reply(text=EXTRACTION))
    assert main(args) == 0
    assert len(llm_server.script.chat_requests()) == 2
    manifest = json.loads((wiki / "manifest.json").read_text(encoding="utf-8"))["documents"]
    assert sum(1 for d in manifest.values() if d.get("llm_failed")) == 1
    llm_server.script.script(Reply(text=EXTRACTION))
    assert main(args) == 0
    assert len(llm_server.script.chat_requests()) == 3      # only the failed document again
    manifest = json.loads((wiki / "manifest.json").read_text(encoding="utf-8"))["documents"]
    assert not any(d.get("llm_failed") for d in manifest.values())
    assert main(args) == 0 and len(llm_server.script.chat_requests()) == 3


def test_compile_wiki_llm_without_an_llm_is_a_user_error(tmp_path, capsys, monkeypatch):
    for name in ("LAMBDARAG_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["compile-wiki", "--corpus", str(MARITIME), "--wiki", str(tmp_path), "--llm"]) == 2
    assert "no LLM configured" in capsys.readouterr().err


def test_a_degraded_answer_exits_3_and_still_prints_its_json(tmp_path, dead_url, capsys):
    config = config_file(tmp_path, dead_url)
    assert main(["ask", "--config", config, "--json", "船员条例由哪个部门主管？"]) == EXIT_SERVICE
    result = json.loads(capsys.readouterr().out)
    assert result["answer"] and result["degraded"]
    assert any("cannot reach LLM" in f["reason"] for f in result["fallbacks"])
