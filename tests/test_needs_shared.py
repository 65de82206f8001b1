"""The conftest rule for full-corpus tests: skip naming LAMBDARAG_SHARED without the data, fail when CI is set."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

TINY = '''import pytest

@pytest.mark.needs_shared
def test_full():
    pass

def test_fixture_only():
    pass
'''


def run(tmp_path, shared, ci):
    (tmp_path / "test_tiny.py").write_text(TINY, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PYTHONPATH=str(ROOT), LAMBDARAG_SHARED=str(shared), **({"CI": "true"} if ci else {}))
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-q", "-rs", "-p", "no:cacheprovider",
                          "test_tiny.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout


def test_without_the_corpora_a_full_corpus_test_skips_naming_the_variable(tmp_path):
    code, out = run(tmp_path, tmp_path / "nowhere", ci=False)
    assert code == 0 and "1 passed, 1 skipped" in out
    assert "SKIPPED" in out and "LAMBDARAG_SHARED" in out


def test_with_ci_set_a_missing_corpus_fails_the_run(tmp_path):
    code, out = run(tmp_path, tmp_path / "nowhere", ci=True)
    assert code == 1 and "1 passed, 1 error" in out and "LAMBDARAG_SHARED" in out


@pytest.mark.parametrize("ci", [False, True])
def test_with_the_corpora_present_the_test_runs(tmp_path, ci):
    for name in ("laws", "maritime", "stard"):
        (tmp_path / "shared" / "data" / name).mkdir(parents=True)
    code, out = run(tmp_path, tmp_path / "shared", ci=ci)
    assert code == 0 and "2 passed" in out
