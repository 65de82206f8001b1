"""The README's generated parts stay true: the configuration reference and the six-line example."""
from __future__ import annotations

import re
import subprocess
import sys

from orchestration.config import reference
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_config_reference_matches_the_schema():
    block = re.search(r"<!-- config-reference:start -->\n(.*?)<!-- config-reference:end -->", README, re.S)
    assert block, "README lost its config-reference markers"
    assert block.group(1).strip() == reference().strip(), "regenerate with: python -m orchestration.config"


def test_six_line_example_prints_what_the_readme_says():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "six_lines.py")], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "λq. Par(bm25_search, embedding_search) >> rrf_merge >> answer_generate(q, _)"
    assert out[1] == "(io ∥ io) · pure · llm"
    assert out[2] == "0.004"
    for line in out[:2]:
        assert line in README
