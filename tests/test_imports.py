"""Light imports: `lambdarag --help` loads neither the calculus nor pydantic; the calculus's names still import."""
from __future__ import annotations

import json
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


@pytest.mark.parametrize("name", ["State", "Tool", "Compose", "Context", "Trace", "Guard"])
def test_the_calculus_names_load_on_first_use(name):
    import lambdarag

    assert getattr(lambdarag, name).__name__ == name
    assert name in dir(lambdarag) and name in lambdarag.__all__


def test_an_unknown_name_is_an_attribute_error():
    import lambdarag

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        lambdarag.Nope
