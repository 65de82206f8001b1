"""A warm question repeats no route check that passed on the same config and code, compiles no cue table of a pack
its index does not use, and does not have the cyclic collector scan what it imported again and again."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import types

import pytest

from lambdarag.errors import ConfigError
from tests.conftest import ROOT


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Returns the sources `route_reports` was asked to check, in a cache folder of this test's own."""
    from lambdarag.orchestration import route_check

    monkeypatch.setenv("LAMBDARAG_CACHE", str(tmp_path / "cache"))
    calls: list[str] = []
    real = route_check.route_reports
    monkeypatch.setattr(route_check, "route_reports", lambda config, source: calls.append(source) or
                        real(config, source))
    return calls


def test_routes_that_passed_are_not_checked_again_until_a_loaded_module_changes(counted, tmp_path, monkeypatch):
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.route_check import checked_routes

    plugin = tmp_path / "warm_plugin.py"
    plugin.write_text("WORDS = 1\n")
    module = types.ModuleType("warm_plugin")
    module.__file__ = str(plugin)
    monkeypatch.setitem(sys.modules, "warm_plugin", module)      # a module loaded when the routes pass
    config = load_config(None)
    assert checked_routes(config, "a.yml") == [] and checked_routes(config, "a.yml") == []
    assert counted == ["a.yml"]
    plugin.write_text("WORDS = 22\n")
    assert checked_routes(config, "a.yml") == []
    assert counted == ["a.yml", "a.yml"]
    other = config.model_copy(update={"cost": config.cost.model_copy(update={"budget_per_query": 0.5})})
    checked_routes(other, "b.yml")
    assert counted == ["a.yml", "a.yml", "b.yml"]


def test_a_remembered_pass_still_reports_the_routes_over_budget(counted, tmp_path, monkeypatch, caplog):
    from lambdarag.orchestration import setup

    (tmp_path / "cheap.yml").write_text("cost:\n  budgetPerQuery: 0.001\n")
    for _ in range(2):
        monkeypatch.setattr(setup, "_CONFIGS", {})       # a fresh process: nothing resolved yet
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            setup.resolve_config(tmp_path / "cheap.yml")
        assert "cheap.yml: route default: budget: hybrid_search costs up to 0.0162 > budgetPerQuery 0.0010; ran " \
               "keyword_search instead" in caplog.text
    assert len(counted) == 1


def test_a_route_that_fails_its_check_is_never_remembered(counted, tmp_path):
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.route_check import checked_routes

    path = tmp_path / "c.yml"
    path.write_text("patterns:\n  dates:\n    expr: extract_time_range\norchestration:\n  routing:\n    fact: dates\n")
    config = load_config(path)
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"c.yml: orchestration.routing.fact \(dates\): term "):
            checked_routes(config, str(path))
    assert len(counted) == 2
    assert list((tmp_path / "cache" / "checked-routes").glob("*.json")) == []


QUESTIONS = ("How do the different ways to install packages compare?", "What is the relation between apt and dpkg?",
             "Give an overview of the main components.", "海上交通安全法与水污染防治法有何异同？", "船员条例共有多少条？",
             "What is the latest version of the handbook?", "哪个部门主管全国船员管理工作？")


@pytest.mark.parametrize("pack", ["generic", "prc_statutes"])
def test_a_pack_s_lazy_cues_match_as_the_compiled_ones_would(pack):
    import importlib

    cues = importlib.import_module(f"lambdarag.domains.{pack}.cues")
    for kind, _, lazy in cues.RULES:
        compiled = re.compile(lazy.pattern, lazy.flags)
        for question in QUESTIONS:
            found, expected = lazy.search(question), compiled.search(question)
            assert (found and found.group(0)) == (expected and expected.group(0)), (kind, question)


ASKED = """
import contextlib, gc, io, json
from lambdarag.orchestration.cli import main
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["ask", "国际海运条例的最新版本是哪一年的？"])
asked = len(collections)
from lambdarag.domains.generic import cues as generic
from lambdarag.domains.prc_statutes import cues as statutes
print(json.dumps([code, asked, gc.get_threshold(), [p._compiled is not None for *_, p in generic.RULES],
                  [p._compiled is not None for *_, p in statutes.RULES]]))
"""
THREADS = """
import contextlib, io, os, sys
from lambdarag.orchestration.cli import main
before = "numpy" in sys.modules
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["ask", "国际海运条例的最新版本是哪一年的？"])
print(code, before, os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.fixture(scope="module")
def asked() -> list:
    """Returns what a fresh process's `ask` on the statute demo did: exit code, cyclic collections while it ran,
    the collector's thresholds after it, and which cue rules of each pack it compiled."""
    done = subprocess.run([sys.executable, "-c", ASKED], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**os.environ, "LAMBDARAG_FEEDBACK": "off"})
    return json.loads(done.stdout.splitlines()[-1])


def test_a_question_on_the_statute_demo_compiles_no_cue_of_the_generic_pack(asked):
    code, _, _, generic, statutes = asked
    assert code == 0
    assert not any(generic)
    assert statutes[0]          # the first rule (the one a statute question tries first) was compiled to be tried


def test_an_ask_does_not_scan_what_it_imported_again_and_again(asked):
    code, collections, thresholds, _, _ = asked
    assert code == 0
    assert collections <= 2     # Python's own thresholds collect about 130 times while a warm ask imports
    assert thresholds == list(__import__("gc").get_threshold())   # the caller's thresholds are back


def test_an_ask_loads_numpy_with_one_blas_thread_unless_the_caller_asks_for_more():
    def blas_threads(**env: str) -> str:
        environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        done = subprocess.run([sys.executable, "-c", THREADS], cwd=ROOT, capture_output=True, text=True, check=True,
                              env={**environ, "LAMBDARAG_FEEDBACK": "off", **env})
        code, numpy_before, threads = done.stdout.split()[-3:]
        assert (code, numpy_before) == ("0", "False")       # set before numpy (and its BLAS) loads
        return threads
    assert blas_threads() == "1"
    assert blas_threads(OPENBLAS_NUM_THREADS="2") == "2"     # a caller's own setting is kept
