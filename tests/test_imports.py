"""Light imports: `lambdarag --help` loads neither the calculus nor pydantic; the calculus's names still import."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

LOADED = """
import json, sys
from lambdarag.orchestration.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def test_help_imports_no_calculus_and_no_pydantic():
    out = subprocess.run([sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.splitlines()[-1])
    heavy = [m for m in loaded if m.split(".")[0] in ("pydantic", "numpy", "skills", "patterns", "domains")
             or m in ("lambdarag.state", "lambdarag.term", "lambdarag.combinators", "lambdarag.runtime")]
    assert heavy == []
    assert "usage: lambdarag" in out.stdout


CALCULUS = ("lambdarag.state", "lambdarag.term", "lambdarag.combinators", "lambdarag.runtime", "lambdarag.tool",
            "lambdarag.lam", "lambdarag.registry", "lambdarag.skills.store.records", "lambdarag.patterns.registry")


def loaded_by(args: list[str], tmp_path, **env: str) -> tuple[list[str], str]:
    """Returns the modules a fresh `lambdarag ARGS` process loaded (in a data home under `tmp_path`) and its output."""
    script = ("import io, json, sys, contextlib\nfrom lambdarag.orchestration.cli import main\nout = io.StringIO()\n"
              f"with contextlib.redirect_stdout(out):\n    code = main({args!r})\n"
              "print(json.dumps([code, out.getvalue(), sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**os.environ, "LAMBDARAG_HOME": str(tmp_path / "home"), **env})
    code, output, modules = json.loads(done.stdout.splitlines()[-1])
    assert code == 0, done.stderr
    return modules, output


def test_where_imports_no_model_of_the_calculus(tmp_path):
    loaded, output = loaded_by(["where"], tmp_path)
    assert [m for m in loaded if m in CALCULUS or m.startswith(("lambdarag.patterns.", "lambdarag.domains"))] == []
    assert f"data home   {tmp_path / 'home'}" in output


def test_a_question_with_learning_off_imports_no_feedback_loop(tmp_path):
    loaded, output = loaded_by(["ask", "国际海运条例的最新版本是哪一年的？"], tmp_path, LAMBDARAG_FEEDBACK="off")
    loop = ("loop", "replica", "journal", "cache", "lexicon", "rules", "votes")
    assert [m for m in loaded if m.rpartition(".")[2] in loop and ".feedback." in m] == []
    assert "[来源: " in output


@pytest.mark.parametrize("name", ["State", "Tool", "Compose", "Context", "Trace", "Guard"])
def test_the_calculus_names_load_on_first_use(name):
    import lambdarag

    assert getattr(lambdarag, name).__name__ == name
    assert name in dir(lambdarag) and name in lambdarag.__all__


def test_an_unknown_name_is_an_attribute_error():
    import lambdarag

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        lambdarag.Nope
