"""Pipelines declared in agent-config.yml: the printed λ-form parses back, plugins are an allowlist, errors come at load."""
from __future__ import annotations

import subprocess
import sys

import pytest

from lambdarag import patterns
from lambdarag import Guard, Named, Tool
from lambdarag.errors import ConfigError, DeclarationError
from lambdarag.syntax import parse
from lambdarag.orchestration.config import load_config, parse_config
from lambdarag.orchestration.router import route_table, settings_of
from lambdarag.patterns.registry import Names
from tests.conftest import ROOT

SETTINGS = settings_of(load_config())
NAMES = Names(SETTINGS)


@pytest.mark.parametrize("name", sorted(patterns.REGISTRY))
def test_every_registered_pattern_reads_back_from_its_printed_form(name):
    p = patterns.build(name, SETTINGS)
    assert Named(name, parse(str(p), NAMES)) == p        # str(p): λq. and the body, inner patterns by name
    assert parse(p.lambda_form(), NAMES) == p             # the short form: the pattern's name
    assert str(Named(name, parse(str(p), NAMES))) == str(p)


def test_every_route_of_the_default_config_reads_back_from_its_short_form():
    for choice in route_table(load_config()).values():
        assert parse(choice.term.lambda_form(), NAMES) == choice.term


def test_parameters_print_in_yaml_spelling_and_make_a_different_term():
    term = parse("λq. bm25_search(topK=30) >> rrf_merge(k=10)", NAMES)
    assert str(term) == "λq. bm25_search(topK=30) >> rrf_merge(k=10)"
    assert term != parse("bm25_search >> rrf_merge(k=10)", NAMES)
    assert parse("bm25_search(top_k=30) >> rrf_merge(k=10)", NAMES) == term


@pytest.mark.parametrize("text, message", [
    ('Map(bm25_search, over=candidates, width="x")', "column 1: Map: bad option value ("),
    ("Par(bm25_search, embedding_search, merge=appended(fields=5))",
     "column 42: appended(fields=…) takes a list of field names, got 5"),
    ("bm25_search >> ;", "column 16: unexpected ';'"),
    ("bm25_search >>", "column 15: expected a skill, a pattern, Identity or a combinator (Par, If, Route, Guard, "
                       "Map), found the end"),
    ("Par(bm25_search, embedding_search >> score_fusion", "column 50: expected ')' to close Par, found the end"),
    ("bm25_search(topk=30)", "column 1: skill 'bm25_search' has no parameter 'topk'; did you mean 'topK'? its parameters: filters, topK"),
    ("versions_ahead(window=12, cap=2)", "column 1: skill 'versions_ahead' has no parameter 'cap'; its parameters: "
                                         "window"),
    ("versions_ahead(window=twelve)", "column 1: term 'versions_ahead': parameter window='twelve': Input should be a "
                                      "valid integer, unable to parse string as an integer"),
    ("bm25_search(topK=three)", "column 1: term 'bm25_search': parameter topK='three': Input should be a valid "
                                "integer, unable to parse string as an integer"),
    ("bm25_search(topK=-5)", "column 1: term 'bm25_search': parameter topK=-5: Input should be greater than or equal "
                             "to 1"),
    ("rrf_merge(k=0)", "column 1: term 'rrf_merge': parameter k=0: Input should be greater than 0"),
    ("bm26_search", "column 1: unknown skill or pattern 'bm26_search'; did you mean 'bm25_search'? valid patterns: compare_search, "),
    ("bm25_search(q, _)", "column 1: bm25_search(q, _) marks a term that reads the original query, and bm25_search "
                          "does not; write bm25_search"),
    ("hybrid_search(statutesAhead=3)", "column 1: pattern 'hybrid_search' takes no parameters in an expression; "
                                       "set them under patterns.hybrid_search of the config"),
    ("Par(bm25_search, embedding_search, merge=‹fan_out_merge›)", "column 42: ‹fan_out_merge› marks a part built "
                                                                   "in Python (a function), which a declaration cannot name"),
    ("Par(bm25_search, embedding_search, merge=union)", "column 42: unknown merge 'union'; valid merges: appended, "
                                                        "fan_out_merge"),
    ("Par(score_fusion, rrf_merge)", "column 1: Par: branches 0 (score_fusion) and 1 (rrf_merge) both write field "
                                     "'hits'"),
    ("Map(bm25_search)", "column 5: Map needs over=field, the tuple field it runs over"),
    ("Guard(bm25_search, citation_check, tries=2)", "column 36: Guard takes no option 'tries'; valid: retry, accept"),
    ("Guard(score_fusion, citation_check, retry=1)", "column 1: Guard(score_fusion, citation_check, retry=1): "
                                                     "generate 'score_fusion' cannot see the check's 'verdict'"),
])
def test_a_bad_expression_fails_naming_the_column_and_what_was_expected(text, message):
    with pytest.raises(DeclarationError) as e:
        parse(text, NAMES)
    assert str(e.value).startswith(message)


def test_a_guard_built_with_a_python_function_prints_a_mark_the_parser_refuses():
    check = patterns.registry.skill(SETTINGS, "citation_check")
    term = Guard(patterns.registry.skill(SETTINGS, "answer_generate"), check, retry=0, accept=lambda s: True)
    assert str(term) == "λq. Guard(answer_generate(q, _), citation_check, retry=0, accept=‹<lambda>›)"
    with pytest.raises(DeclarationError, match="‹<lambda>› marks a part built in Python"):
        parse(str(term), NAMES)


def test_a_tool_built_in_python_is_not_declarable_by_its_name():
    tool = Tool("shout", lambda s: {"answer": s.query.upper()}, reads=["query"], writes=["answer"])
    with pytest.raises(DeclarationError, match="unknown skill or pattern 'shout'"):
        parse(str(tool), NAMES)


EXPR = """\
patterns:
  careful_search:
    expr: "Par(bm25_search(topK=30), embedding_search) >> score_fusion >> {tail}"
orchestration:
  routing:
    compare: careful_search
"""


def test_an_expr_pattern_is_routed_and_named_by_its_key():
    cfg = parse_config(EXPR.format(tail="rerank >> Guard(answer_generate, citation_check, retry=1)"))
    choice = route_table(cfg)["compare"]
    assert choice.strategy == "careful_search"
    assert choice.term.lambda_form() == "careful_search >> claim_check"


def test_an_expression_error_names_the_yaml_line_and_the_column_in_the_file():
    text = EXPR.format(tail="rerank >> answer_generat")
    with pytest.raises(ConfigError) as e:
        parse_config(text, "cfg.yml")
    column = text.splitlines()[2].index("answer_generat") + 1
    assert str(e.value).startswith(f"cfg.yml: line 3: patterns.careful_search.expr: column {column}: unknown skill "
                                   f"or pattern 'answer_generat'; did you mean 'answer_generate'? valid patterns: careful_search, compare_search")


def test_a_route_naming_an_undeclared_pattern_lists_the_declared_ones_too():
    with pytest.raises(ConfigError, match="line 6: orchestration.routing.compare: unknown pattern 'careful'; valid "
                                          "patterns: careful_search, compare_search"):
        parse_config(EXPR.format(tail="rerank").replace("compare: careful_search", "compare: careful"))


def test_a_declared_name_may_not_shadow_a_registered_pattern():
    with pytest.raises(ConfigError, match="line 2: patterns.hybrid_search: Value error, 'hybrid_search' is a "
                                          "registered pattern|'hybrid_search' is a registered pattern"):
        parse_config("patterns:\n  hybrid_search:\n    expr: bm25_search >> rrf_merge\n")


def test_a_route_over_budget_is_reported_when_the_config_is_loaded_for_answering(tmp_path, caplog):
    from lambdarag.orchestration.setup import resolve_config

    (tmp_path / "cheap.yml").write_text("cost:\n  budgetPerQuery: 0.001\n")
    resolve_config(tmp_path / "cheap.yml")
    assert "cheap.yml: route default: budget: hybrid_search costs up to 0.0162 > budgetPerQuery 0.0010; ran " \
           "keyword_search instead" in caplog.text


def test_check_prints_a_route_over_budget_with_what_runs_instead(tmp_path):
    (tmp_path / "cheap.yml").write_text("cost:\n  budgetPerQuery: 0.001\n")
    out = cli("check", "--config", str(tmp_path / "cheap.yml"))
    assert out.returncode == 0
    assert "\ndefault: keyword_search\n  λq. bm25_search >> rrf_merge(k=60) >> Guard(" in out.stdout
    assert "  over cost.budgetPerQuery: budget: hybrid_search costs up to 0.0162 > budgetPerQuery 0.0010; ran " \
           "keyword_search instead\n" in out.stdout


def cli(*args: str, path: str = "") -> subprocess.CompletedProcess:
    """Runs the CLI; `path` is put on the Python path too (so a module there could be imported by name)."""
    return subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={"PYTHONPATH": f"{ROOT}:{path}", "PATH": "/usr/bin:/bin"})


MARKER_PLUGIN = """\
from pathlib import Path
Path(__file__).with_name("imported.marker").write_text("imported")
from lambdarag.skills import skill
from lambdarag import Tool

@skill("marker_skill")
def marker_skill(config):
    return Tool("marker_skill", lambda s: {"hits": s.hits}, reads=["hits"], writes=["hits"])
"""


def test_a_module_not_listed_under_plugins_is_never_imported(tmp_path):
    (tmp_path / "marker_plugin.py").write_text(MARKER_PLUGIN)
    config = tmp_path / "c.yml"
    declaration = "patterns:\n  mine:\n    expr: hybrid_search >> marker_skill\norchestration:\n  routing:\n    fact: mine\n"
    for text, error in [(declaration, "line 3: patterns.mine.expr: column 28: unknown skill or pattern 'marker_skill'"),
                        (declaration.replace("marker_skill", "marker_plugin"), "unknown skill or pattern 'marker_plugin'"),
                        (declaration.replace("fact: mine", "fact: marker_plugin"),
                         "line 6: orchestration.routing.fact: unknown pattern 'marker_plugin'")]:
        config.write_text(text)
        out = cli("check", "--config", str(config), path=str(tmp_path))  # importable, yet never imported
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert error in out.stderr
        assert not (tmp_path / "imported.marker").exists()
    config.write_text("plugins: [marker_plugin]\n" + declaration)
    out = cli("check", "--config", str(config))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "imported.marker").exists()
    assert "plugins: marker_plugin" in out.stdout and "fact: mine\n  λq. Par(bm25_search, embedding_search) >> " in out.stdout
    assert ">> versions_ahead >> marker_skill >> Guard(" in out.stdout


def test_a_plugin_that_fails_to_import_is_named_with_its_yaml_line(tmp_path):
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('no index here')\n")
    config = tmp_path / "c.yml"
    config.write_text("retrieval:\n  index: demo\nplugins:\n  - os\n  - broken_plugin\n")
    out = cli("check", "--config", str(config))
    assert out.returncode == 2
    assert out.stderr.strip() == (f"lambdarag check: {config}: line 5: plugins.1: cannot import plugin "
                                  f"'broken_plugin': RuntimeError: no index here")


def readme_section() -> str:
    text = (ROOT / "docs" / "own-pipeline.md").read_text(encoding="utf-8")
    start = text.index("## Your own pipeline")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def blocks(section: str, language: str) -> list[str]:
    import re

    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def test_the_readme_section_shows_its_files_verbatim():
    section = readme_section()
    shown = blocks(section, "python") + blocks(section, "yaml")
    assert len(shown) == 2
    for block in shown:
        path = ROOT / block.splitlines()[0].removeprefix("# ")
        assert path.read_text(encoding="utf-8") == block, f"README and {path.name} differ"


def test_the_readme_section_runs_as_written_on_the_demo():
    section = readme_section()
    (commands,) = blocks(section, "bash")
    (printed,) = blocks(section, "text")
    for line in commands.strip().splitlines():
        import shlex

        command, _, comment = line.partition("   # ")
        argv = shlex.split(command)
        assert argv[0] == "lambdarag"
        out = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", *argv[1:]], cwd=ROOT, capture_output=True,
                             text=True, timeout=900)
        assert out.returncode == 0, out.stderr[-2000:]
        if argv[1] == "check":
            for shown in printed.strip().splitlines():
                assert shown in out.stdout.splitlines()
        else:
            assert out.stdout.startswith(comment.strip() + " "), out.stdout[:200]
            assert "[来源: " in out.stdout


def test_a_misspelt_skill_in_the_readme_config_exits_2_naming_the_line_and_the_valid_skills(tmp_path):
    import shutil

    shutil.copy(ROOT / "examples" / "my_plugin.py", tmp_path)
    text = (ROOT / "examples" / "my-pipeline.yml").read_text(encoding="utf-8")
    (tmp_path / "typo.yml").write_text(text.replace(">> per_source(limit=2)", ">> per_sorce(limit=2)"))
    out = cli("check", "--config", str(tmp_path / "typo.yml"))
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.splitlines()
    column = text.splitlines()[4].index("per_source(limit=2)") + 1
    assert line.startswith(f"lambdarag check: {tmp_path / 'typo.yml'}: line 5: patterns.lean_search.expr: column "
                           f"{column}: unknown skill or pattern 'per_sorce'; did you mean 'per_source'? valid patterns: compare_search, ")
    assert ", side_by_side, " in line and "; valid skills: answer_generate, " in line and ", per_source, " in line


def test_a_declared_pipeline_reading_a_field_nothing_writes_fails_when_the_config_loads():
    with pytest.raises(ConfigError, match=r"^cfg.yml: line 3: patterns.lean.expr: pattern 'lean': term 'rerank' reads "
                                          r"field 'hits', which no earlier term writes \(path: Compose\[1\] › "
                                          r"rerank\)"):
        parse_config("patterns:\n  lean:\n    expr: bm25_search >> rerank\n", "cfg.yml")


def test_a_route_whose_answer_stage_lacks_a_field_fails_check_naming_the_route(tmp_path):
    config = tmp_path / "c.yml"
    config.write_text("patterns:\n  dates:\n    expr: extract_time_range\norchestration:\n  routing:\n    fact: dates\n")
    out = cli("check", "--config", str(config))
    assert out.returncode == 2
    assert out.stderr.startswith(f"lambdarag check: {config}: orchestration.routing.fact (dates): term "), out.stderr
    assert "reads field 'hits', which no earlier term writes" in out.stderr
