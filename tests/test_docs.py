"""The README and the documentation stay true: generated pages equal what generates them, examples run as printed,
and the site builds with no broken link."""
from __future__ import annotations

import re
import subprocess
import sys

from lambdarag.orchestration.config_reference import reference
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"


def test_generated_pages_equal_the_code_they_describe():
    from scripts import docs

    for page, (marker, make) in docs.BLOCKS.items():
        found = docs.block((DOCS / page).read_text(encoding="utf-8"), marker)
        assert found is not None, f"docs/{page} lost its {marker} markers"
        assert found == make().strip(), f"docs/{page} is stale: regenerate with python scripts/docs.py"
    assert docs.config_reference() == reference()


def test_config_reference_shows_each_types_own_default_and_the_fields_meaning():
    from lambdarag.orchestration.config import AgentConfig

    table = {row.split(" | ")[0].strip("| `"): row.split(" | ")[1:] for row in reference().splitlines()[2:]}
    types = AgentConfig().orchestration.plan.types
    assert types.fact.doc_top_k != types.default.doc_top_k   # else the row below could not tell them apart
    assert table["orchestration.plan.types.fact.docTopK"][1] == f"`{types.fact.doc_top_k}`"
    assert table["orchestration.plan.types.default.docTopK"][1] == f"`{types.default.doc_top_k}`"
    assert table["orchestration.feedback.backgroundSeconds"][2].startswith("Time limit of the LLM work")


def test_six_line_example_prints_what_the_readme_says():
    out = subprocess.run([sys.executable, "-m", "lambdarag.skills.toy"], cwd=ROOT, capture_output=True, text=True,
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


def test_the_getting_started_page_shows_the_readme_s_search_example_as_it_runs():
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    searched = [b for b in python_blocks() if "search(" in b]
    assert searched and all(b in page for b in searched), "docs/getting-started.md differs from README's example"


def test_quick_start_ask_runs():
    (command,) = re.findall(r"lambdarag (ask \"[^\"]+\")", README.split("```python")[0])
    question = command[len('ask "'):-1]
    out = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "ask", question], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("[compare] strategy: compare_search")
    assert "[来源: " in out.stdout and "Building prefix dict" not in out.stderr


def test_benchmark_table_equals_the_result_files():
    from bench import report

    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    assert report.in_page(page) == report.table(), "regenerate with: python bench/report.py"


def test_readme_is_a_landing_page_whose_links_resolve():
    assert len(README.encode("utf-8")) <= 15 * 1024
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        assert (ROOT / target).exists(), target


def test_the_documentation_site_builds_strictly(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").is_file()
