"""The README's generated parts stay true: the configuration reference and the six-line example."""
from __future__ import annotations

import re
import subprocess
import sys

from lambdarag.orchestration.config import reference
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


def python_blocks() -> list[str]:
    """Returns the README's ```python blocks, in order."""
    return re.findall(r"```python\n(.*?)```", README, re.S)


def expected_prints(code: str) -> list[str]:
    """Returns the comment of each `print(…)  # value` line: the value up to two spaces; "…" ends a prefix."""
    return [m.group(1).split("  ")[0] for m in re.finditer(r"^print\(.*\)\s+# (.*)$", code, re.M)]


def test_every_readme_python_block_runs_as_written_and_prints_what_its_comments_say():
    code = "\n".join(python_blocks())
    assert code, "README has no python blocks"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    printed = out.stdout.splitlines()
    expected = expected_prints(code)
    assert len(printed) == len(expected), printed
    for line, comment in zip(printed, expected):
        if comment.endswith("…"):
            assert line.startswith(comment[:-1]), (line, comment)
        else:
            assert line == comment


def test_quick_start_ask_runs():
    (command,) = re.findall(r"lambdarag (ask \"[^\"]+\")", README.split("```python")[0])
    question = command[len('ask "'):-1]
    out = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "ask", question], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("[compare] strategy: compare_search")
    assert "[来源: " in out.stdout and "Building prefix dict" not in out.stderr


def test_readme_benchmark_table_equals_the_result_files():
    from bench import report

    assert report.in_readme(README) == report.table(), "regenerate with: python bench/report.py"
