"""One declaration per term: reads from parameters, writes from the returned record, the name from the function,
a fallback inheriting the contract, and the pipeline's State schema checked when it closes."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from typing import Optional, Sequence, TypedDict

import pytest

from lambdarag import Compose, Context, Lam, Reads, Reply, State, Tool, tool
from lambdarag.errors import CompositionError, ConfigError, ProviderError, TermError, TypeClash
from lambdarag.registry import Registry
from lambdarag.skills.store.records import Hit
from tests.conftest import ROOT
from lambdarag.domains import profile_named


def generic_ctx() -> Context:
    """Returns a context under the generic profile (what a context without one ran under)."""
    return Context(resources={"profile": profile_named("generic")})


class Flagged(TypedDict):
    flag: bool


class Noted(TypedDict):
    note: str


class Wrong(TypedDict):
    flag: bool


class Other(TypedDict):
    flag: str


@dataclass
class Trimmed:
    note: str


@tool
def flag(query: str) -> Flagged:
    return {"flag": query.startswith("a")}


def test_a_typed_tool_reads_its_parameters_and_writes_its_record_under_its_functions_name():
    assert repr(flag) == "Tool('flag', reads=['query'], writes=['flag'], effect='pure')"
    assert dict(flag.read_types()) == {"query": str} and dict(flag.write_types()) == {"flag": bool}
    assert flag.run("abc", generic_ctx()).flag is True
    with pytest.raises(CompositionError, match="term 'untyped': annotate its return with a record"):
        @tool
        def untyped(query: str):
            return {}


def test_a_write_is_validated_against_its_writers_declared_type():
    def bad(query: str) -> Wrong:
        return {"flag": "many"}

    with pytest.raises(TermError, match="term 'bad' wrote an invalid value to field 'flag': Input should be a valid "
                                        "boolean"):
        tool(bad).run("q", generic_ctx())


def test_a_reader_and_writer_that_disagree_fail_at_close_naming_both_terms_the_field_and_both_paths():
    @tool
    def shout(flag: str) -> Noted:
        return {"note": flag.upper()}

    with pytest.raises(TypeClash) as e:
        (flag >> shout).close()
    assert str(e.value) == ("field 'flag': term 'shout' reads it as str (path: Compose[1] › shout), but term 'flag' "
                            "writes it as bool (path: Compose[0] › flag); declare one type for 'flag' in both")
    assert e.value.field == "flag" and e.value.terms == ("shout", "flag")


def test_a_users_reader_clashing_with_a_skills_write_is_named_before_anything_runs():
    from lambdarag import skills

    @tool
    def count_sides(sides: int) -> Noted:
        return {"note": str(sides)}

    with pytest.raises(TypeClash, match=r"^field 'sides': term 'count_sides' reads it as int \(path: Compose\[1\] › "
                                        r"count_sides\), but term 'name_sides' writes it as tuple\[lambdarag.skills.titles.Side, "
                                        r"\.\.\.\] \(path: Compose\[0\] › name_sides\)"):
        Compose(skills.build("name_sides"), count_sides).run("海上交通安全法的船长", Context(resources={"profile": profile_named("generic")}))


def test_two_writers_of_one_field_with_other_types_clash_and_optional_readers_accept_the_narrower_write():
    @tool
    def flag_text(query: str) -> Other:
        return {"flag": query}

    with pytest.raises(TypeClash, match="term 'flag_text' writes it as str .* term 'flag' writes it as bool"):
        (flag >> flag_text).close()

    @tool
    def maybe(flag: Optional[bool] = None) -> Noted:
        return {"note": str(flag)}

    assert (flag >> maybe).run("abc", generic_ctx()).note == "True"

    from lambdarag import skills

    @tool
    def count(hits: Sequence[Hit]) -> Noted:  # a wider reader of the skill's tuple[Hit, ...]
        return {"note": str(len(hits))}

    assert Compose(skills.build("rrf_merge"), count).close(["candidates", "plan"]) is not None


def test_a_fallback_given_as_a_function_inherits_the_contract_without_repeating_it():
    def failing(query: str, ctx) -> Noted:
        raise ProviderError("endpoint down")

    def local(query, ctx):
        return {"note": f"local {query}"}

    typed = tool(failing, effect="io", fallback=local)
    assert (typed.fallback.name, typed.fallback.reads(), typed.fallback.writes()) == ("local", {"query"}, {"note"})
    assert dict(typed.fallback.write_types()) == {"note": str} and typed.fallback.effect == "io"
    ctx = Context(resources={"profile": profile_named("generic")})
    assert typed.run("q", ctx).note == "local q" and ctx.trace.fallbacks()[0]["term"] == "failing"

    low = Tool("low", lambda s: (_ for _ in ()).throw(ProviderError("down")), reads=["query"],
               writes={"note": str}, fallback=lambda s: {"note": s.query})
    assert low.fallback.reads() == {"query"} and low.run("q", generic_ctx()).note == "q"


def test_a_lam_writes_its_outputs_fields_with_their_types_and_its_function_fallback_takes_its_reads():
    class Topic(Reply):
        topic: str
        score: float = 0.0

    def offline(query):
        return {"topic": query[:2], "score": 0.5}

    lam = Lam("topic_of", "问题：{query}", output=Topic, reads=["query"], writes=Topic, fallback=offline)
    assert lam.writes() == {"topic", "score"} and dict(lam.write_types()) == {"topic": str, "score": float}
    assert lam.fallback.writes() == lam.writes()
    out = lam.run("船长的权力", Context(resources={"profile": profile_named("generic")}))
    assert (out.topic, out.score) == ("船长", 0.5)


def test_a_fallback_writing_a_default_value_writes_it_so_a_later_reader_closes():
    # an offline refusal writes citations=(): the very object the field's default is; it is still a write, and a
    # check reading the citations after it must close (the trust property test met this on a refused question)
    refuse = Tool("answer", lambda s: (_ for _ in ()).throw(ProviderError("down")), reads=["query"],
                  writes=["answer", "citations"], fallback=lambda s: {"answer": "no passage answers it", "citations": ()})
    out = refuse.run("q", generic_ctx())
    assert {"answer", "citations"} <= out.given() and out.citations == ()
    check = Tool("check", lambda s: {"answer": s.answer + f" ({len(s.citations)} cited)"},
                 reads=["answer", "citations"], writes=["answer"])
    assert check.run(out, generic_ctx()).answer == "no passage answers it (0 cited)"


def test_a_dataclass_record_and_keyword_only_configuration():
    @tool
    def trim(query: str, *, width: int = 2) -> Trimmed:
        return Trimmed(note=query[:width])

    assert trim.parameters == {"width"}
    assert trim.run("abcdef", generic_ctx()).note == "ab" and trim.configured(width="4").run("abcdef", generic_ctx()).note == "abcd"
    with pytest.raises(ConfigError, match=r"^term 'trim': parameter width='four': Input should be a valid integer"):
        trim.configured(width="four")


def test_a_state_carries_a_skills_field_before_the_skills_module_is_imported():
    code = ("import sys; from lambdarag import State; s = State.of('q', sides=[], hits=[]);"
            " print('lambdarag.skills.sides' in sys.modules); from lambdarag import skills; out = skills.build('named_first').run(s);"
            " print(type(out.sides).__name__, out.hits)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "tuple", "()"]


def test_a_given_field_no_term_declares_is_refused_as_a_typo_and_a_declared_one_validated():
    @tool
    def echo(flag: bool) -> Noted:
        return {"note": str(flag)}

    with pytest.raises(CompositionError, match="the initial state has field 'falg', which no term"):
        echo.run(State.of("q", flag=True, falg=True), generic_ctx())
    with pytest.raises(Exception, match="valid boolean"):
        echo.run(State.of("q", flag="many"), generic_ctx())
    assert echo.run(State.of("q", flag="true"), generic_ctx()).note == "True"


@dataclass(frozen=True)
class Noting(Reads):
    """The reads of `note_of`, handed in together."""

    query: str
    flag: bool
    entities: tuple[str, ...] = ()


@tool
def note_of(state: Noting, *, prefix: str = "") -> Noted:
    return {"note": f"{prefix}{state.query}:{state.flag}:{len(state.entities)}"}


@dataclass(frozen=True, kw_only=True)
class NotingMore(Noting):
    """`Noting` and one more read: a read extends a shared one (as every citing read extends `Citable`)."""

    note: str


@tool
def note_again(state: NotingMore) -> Noted:
    return {"note": f"{state.note}|{state.query}:{state.flag}:{len(state.entities)}"}


def test_a_read_extending_a_shared_read_gets_every_field_by_name():
    assert note_again.reads() == {"query", "flag", "note"} and note_again.optional == {"entities"}
    assert (flag >> note_of >> note_again).run("ab", generic_ctx()).note == "ab:True:0|ab:True:0"


def test_reads_handed_in_as_one_record_are_declared_by_its_fields_and_configured_like_parameters():
    assert note_of.reads() == {"query", "flag"} and note_of.optional == {"entities"}
    assert dict(note_of.read_types()) == {"query": str, "flag": bool, "entities": tuple[str, ...]}
    assert (flag >> note_of.configured(prefix="n:")).run("ab", generic_ctx()).note == "n:ab:True:0"
    with pytest.raises(CompositionError, match="term 'note_of' reads field 'flag', which no earlier term writes"):
        note_of.run("q", generic_ctx())


def test_a_lams_configuration_is_its_typed_fallbacks_and_configuring_returns_a_new_lam():
    lam = Lam("note_llm", "{query}", output=NoteReply, reads=["query", "flag"], optional=["entities"],
              writes=NoteReply, fallback=note_of)
    configured = lam.configured(prefix="x:")
    assert lam.parameters == {"prefix"} and configured is not lam and configured.fallback is not lam.fallback
    assert (flag >> configured).run("ab", Context(resources={"profile": profile_named("generic")})).note == "x:ab:True:0"
    assert (flag >> lam).run("q", Context(resources={"profile": profile_named("generic")})).note == "q:False:0"
    assert str(configured) == str(lam) == "λq. note_llm"


class NoteReply(Reply):
    note: str


def test_registry_parameters_are_declared_by_keyword_only_parameters_never_read_from_source(tmp_path, monkeypatch):
    (tmp_path / "settings_skill.py").write_text(
        "from lambdarag import Count, Term\nfrom tests.test_typed import flag\n\n"
        "def wide(*, width: Count = 1, depth: int = 2) -> Term:\n    return flag\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import settings_skill

    registry = Registry("skill")
    registry.register(settings_skill.wide)
    assert registry.parameters("wide") == {"width", "depth"} and registry.home("wide") == "tests.test_typed"
    with pytest.raises(ConfigError, match="term 'wide': parameter width=0: Input should be greater than or equal to 1"):
        registry.build("wide", {"width": 0})
    registry.register(flag)
    assert "flag" in registry and registry.parameters("flag") == frozenset()
    with pytest.raises(ConfigError, match="its configuration as keyword-only parameters"):
        registry.register(lambda config, extra: flag)


def test_skill_homes_are_declared_once_per_module_and_match_what_the_modules_register():
    from lambdarag.skills.registry import HOMES, MODULES

    assert HOMES["faq_direct_answer"] == "lambdarag.skills.faq" and HOMES["versions_ahead"] == "lambdarag.skills.diversify"
    assert sum(map(len, MODULES.values())) == len(HOMES)
    text = (ROOT / "lambdarag" / "registry.py").read_text(encoding="utf-8")
    assert "import ast" not in text and "read_text" not in text


def test_the_readme_plugin_skill_is_declared_once_and_runs_in_a_composition():
    code = """
import examples.my_plugin
from lambdarag import skills
from lambdarag import Context, Tool
from lambdarag.skills.store.records import Hit
term = skills.build("per_source", {"limit": 1})
print(str(term), sorted(term.read_types()), sorted(term.write_types()), sorted(skills.REGISTRY.parameters("per_source")))
hits = tuple(Hit(chunk_id=f"{s}#{i}", text="t", source=s) for s in "ab" for i in range(2))
seed = Tool("seed", lambda s: {"hits": hits}, reads=["query"], writes=["hits"])
print([h.chunk_id for h in (seed >> term).run("q", Context()).hits])
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == ["λq. per_source(limit=1) ['hits'] ['hits'] ['limit']", "['a#0', 'b#0']"]


def test_a_write_declared_by_name_takes_the_type_another_term_of_the_pipeline_declares():
    low = Tool("low", lambda s: {"flag": "many"}, reads=["query"], writes=["flag"])
    with pytest.raises(TermError, match="term 'low' wrote an invalid value to field 'flag': Input should be a valid "
                                        "boolean"):
        (low >> Tool("echo", lambda s: {"note": str(s.flag)}, reads=["flag"], writes=["note"]) >> flag).run("q", generic_ctx())
    with pytest.raises(TermError, match="term 'low' wrote field 'flag': State has no field 'flag' and no term "
                                        "declares its type"):
        low.run("q", generic_ctx())
