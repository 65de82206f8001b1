"""Every registered skill and pattern builds from configuration, prints its lambda form and effects, and closes."""
from __future__ import annotations

from typing import TypedDict

import pytest

from lambdarag import patterns
from lambdarag import skills
from lambdarag import INITIAL_FIELDS, Named, Term
from lambdarag.errors import ConfigError
from lambdarag.orchestration.config import load_config, parse_config
from lambdarag.orchestration.router import route_table, settings_of

SETTINGS = settings_of(load_config())


@pytest.mark.parametrize("name", sorted(skills.REGISTRY))
def test_every_skill_builds_and_prints(name):
    term = skills.build(name, {})
    assert isinstance(term, Term)
    assert str(term).startswith("λq. ") and name.split("_")[0] in str(term)
    assert set(term.effect_signature().replace("·", " ").replace("(", " ").replace(")", " ").replace("|", " ")
               .split()) <= {"pure", "io", "llm"}


@pytest.mark.parametrize("name", sorted(patterns.REGISTRY))
def test_every_pattern_builds_from_the_default_yaml_and_is_closed(name):
    term = patterns.build(name, SETTINGS)
    assert isinstance(term, Named) and term.lambda_form() == name
    assert str(term).startswith("λq. ") and "hits" in term.writes()
    term.close(INITIAL_FIELDS)


def test_every_route_of_the_default_config_builds():
    table = route_table(load_config())
    assert set(table) == {"fact", "compare", "relation", "synthesis", "temporal", "default"}
    assert all("answer" in c.term.writes() for c in table.values())


def test_unknown_names_list_the_registered_ones():
    with pytest.raises(ConfigError, match="unknown skill 'bm26_search'; did you mean 'bm25_search'\\? valid skills: answer_generate, "):
        skills.build("bm26_search")
    with pytest.raises(ConfigError, match=r"cost.fallback: unknown pattern 'cheap'; valid patterns: compare_search, fusion_search"):
        parse_config("cost:\n  fallback: cheap\n")


def test_a_patterns_own_camel_case_parameters_reach_it_in_snake_case():
    cfg = parse_config("patterns:\n  hybrid_search:\n    priorsAhead: 0\n  compare_search:\n    perSide: 2\n")
    settings = settings_of(cfg)
    assert settings["patterns"]["compare_search"]["per_side"] == 2
    assert "versions_ahead" not in str(patterns.build("hybrid_search", settings))
    assert "versions_ahead" in str(patterns.build("hybrid_search", SETTINGS))


def test_each_skill_lives_where_the_registry_says_and_no_skill_lacks_a_home():
    import importlib
    from pathlib import Path

    from lambdarag import domains
    from lambdarag.skills.registry import HOMES

    for path in sorted(Path(skills.__file__).parent.glob("*.py")):   # every module, declared or not
        importlib.import_module(f"lambdarag.skills.{path.stem}")
    registered = {name: skills.REGISTRY.homes[name] for name in skills.REGISTRY._factories
                  if skills.REGISTRY.homes[name].startswith("lambdarag.skills.")}
    assert registered == HOMES
    packs = {name: home for name, home in skills.REGISTRY.homes.items() if home.startswith("lambdarag.domains.")}
    # a pack's own skills are registered by the pack when it loads, each under the pack that holds it
    assert {home.split(".")[2] for home in packs.values()} == set(domains.PACKS)


def test_a_skill_registered_outside_its_declared_home_is_refused_and_a_new_home_is_recorded():
    from lambdarag import tool
    from lambdarag.registry import Registry

    @tool
    def shout(query: str, *, times: int = 1) -> Shouted:
        return {"answer": query.upper() * times}

    registry = Registry("skill", homes={"shout": "somewhere.else"})
    with pytest.raises(ConfigError, match="skill 'shout' is registered in tests.test_registry, but its declared "
                                          "home is somewhere.else"):
        registry.register(shout)
    fresh = Registry("skill")
    fresh.register(shout)
    assert fresh.home("shout") == __name__ and fresh.parameters("shout") == {"times"}
    assert str(fresh.build("shout", {"times": 2})) == "λq. shout(times=2)"
    assert fresh.build("shout", {"times": "2"}).run("ab").answer == "ABAB"


class Shouted(TypedDict):
    answer: str


def test_importing_skills_loads_no_skill_module_until_a_skill_is_built():
    import subprocess
    import sys

    code = ("import sys; from lambdarag import skills; before = sorted(m for m in sys.modules if m.startswith('lambdarag.skills.') and m != 'lambdarag.skills.registry');"
            " skills.build('bm25_search'); print(before, 'lambdarag.skills.lexical' in sys.modules, 'lambdarag.domains.prc_statutes.extract' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "True", "False"]
