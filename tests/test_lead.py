"""A route adds to hybrid and never subtracts: hybrid's best hit stays in the routed top 5 unless the route's evidence
there is stronger (skills.lead, patterns.generic.keeps_lead)."""
import pytest

from lambdarag import Context, State, Tool
from lambdarag.patterns import build
from lambdarag.patterns.generic import keeps_lead
from lambdarag.skills.lead import kept_lead
from lambdarag.skills.store.records import Hit
from lambdarag.skills.titles import Side


def hit(doc: str, n: int = 0, **ranks: int) -> Hit:
    """Returns chunk `n` of document `doc`, with the given provenance ranks."""
    return Hit(chunk_id=f"{doc}#{n}", text=doc, source=f"{doc}.md", title=doc, ranks=ranks)


def docs(hits) -> list[str]:
    return list(dict.fromkeys(h.title for h in hits))


# (route's ranking, hybrid's ranking, named sources, expected documents of the result)
CASES = [
    ("lead already in the top 5: the route's order stands",
     [hit("a"), hit("b"), hit("h"), hit("c"), hit("d"), hit("e")], [hit("h")], (), list("abhcde")),
    ("lead missing: it takes the place of the fifth document, which follows it",
     [hit("a"), hit("b"), hit("c"), hit("d"), hit("e"), hit("h")], [hit("h")], (), list("abcdhe")),
    ("lead missing: it displaces the last document without stronger evidence, not the last one",
     [hit("a"), hit("b"), hit("c"), hit("d", side=1), hit("e", graph=1)], [hit("h")], ("d.md",), list("abhcde")),
    ("every top-5 document is evidenced (named sides, edges): the route's order stands",
     [hit("a", side=1), hit("b", graph=1), hit("c"), hit("d", side=2), hit("e", graph=2), hit("h")], [hit("h")],
     ("a.md", "c.md", "d.md"), list("abcdeh")),
    ("a side search's chunk of a document the question does not name is no evidence",
     [hit("a"), hit("b"), hit("c"), hit("d"), hit("e", side=1)], [hit("h")], (), list("abcdhe")),
    ("fewer than five documents: the lead is added after them",
     [hit("a"), hit("a", 1), hit("b")], [hit("h")], (), list("abh")),
    ("another version of the lead's document (same title) counts as the lead",
     [hit("a"), hit("b"), hit("c"), hit("d"), Hit(chunk_id="h2#0", text="", source="h(2020).md", title="h")],
     [Hit(chunk_id="h1#0", text="", source="h(2010).md", title="h")], (), list("abcdh")),
    ("no hybrid hit: the route's order stands",
     [hit("a"), hit("b")], [], (), list("ab")),
]


@pytest.mark.parametrize("what, route, plain, named, expected", CASES, ids=[c[0] for c in CASES])
def test_hybrids_best_hit_stays_in_the_first_five_unless_the_route_has_stronger_evidence(what, route, plain, named,
                                                                                         expected):
    out = kept_lead(route, plain, named)
    assert docs(out) == expected
    assert len(out) == len({h.chunk_id for h in out})
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True) or out == tuple(route)
    if plain and docs(out) != docs(route):
        assert next(h for h in out if h.title == plain[0].title).ranks.get("lead") == 1


def test_the_lead_moves_up_from_lower_in_the_route_without_a_duplicate():
    route = [hit("a"), hit("b"), hit("c"), hit("d"), hit("e"), hit("f"), hit("h")]
    out = kept_lead(route, [hit("h")])
    assert docs(out) == list("abcdhef") and [h.chunk_id for h in out].count("h#0") == 1


def ranking(name: str, *titles: str) -> Tool:
    return Tool(name, lambda s: {"hits": tuple(hit(t) for t in titles)}, reads=["query"], writes={"hits": tuple})


def test_keeps_lead_is_a_typed_term_that_prints_in_the_route_and_runs_both():
    term = keeps_lead(ranking("route", "a", "b", "c", "d", "e"), ranking("plain", "h", "a"))
    assert str(term) == "λq. Par(route, plain, merge=keep_lead(window=5))"
    assert docs(term.run(State.of("q"), Context()).hits) == list("abcdhe")


@pytest.mark.parametrize("name, merge", [("compare_search", "keep_lead(window=5, ahead=5)"),
                                         ("relation_search", "keep_lead(window=5, ahead=5)"),
                                         ("synthesis", "keep_lead(window=5)"),
                                         ("temporal_search", "keep_lead(window=5, ahead=5)")])
def test_every_typed_route_keeps_hybrids_lead(name, merge):
    settings = {"skills": {"graph": {"enabled": True}}, "patterns": {}}
    assert f"merge={merge}" in build(name, settings).form(expand=True)
    assert "keep_lead" not in build("hybrid_search", settings).form(expand=True)


def test_a_survey_keeps_hybrids_first_document_first_unless_its_own_first_is_evidenced():
    # window 1: the generic survey's merge; a chapter page the survey put first yields first place to hybrid's best
    assert docs(kept_lead([hit("chapter"), hit("h"), hit("b")], [hit("h")], window=1)) == ["h", "chapter", "b"]
    assert docs(kept_lead([hit("chapter"), hit("b")], [hit("h")], window=1)) == ["h", "chapter", "b"]
    assert docs(kept_lead([hit("a", side=1), hit("b")], [hit("h")], ("a.md",), window=1)) == ["a", "b"]


def test_the_generic_survey_route_keeps_hybrids_first_document_first_and_other_routes_the_first_five():
    from lambdarag.orchestration.config import parse_config
    from lambdarag.orchestration.router import choose

    generic = str(choose(parse_config(""), "synthesis", pack=("generic",)).term)
    assert "survey_documents" in generic and "merge=keep_lead(window=1)" in generic
    assert "merge=keep_lead(window=5, ahead=5)" in str(choose(parse_config(""), "compare", pack=("generic",)).term)


def test_the_statute_routes_keep_hybrids_lead_only():
    from lambdarag.orchestration.config import parse_config
    from lambdarag.orchestration.router import choose

    for kind in ("compare", "relation", "temporal"):
        term = str(choose(parse_config(""), kind, pack=("prc_statutes",)).term)
        assert "merge=keep_lead(window=5)" in term and "ahead=" not in term, term


def test_a_declared_route_can_keep_hybrids_first_documents_ahead():
    from lambdarag.patterns.registry import Names

    merge = Names({}).merge("keep_lead", {"window": 5, "ahead": 5}, [ranking("route", "x", "h"),
                                                                      ranking("plain", "h")])
    assert merge.form() == "keep_lead(window=5, ahead=5)"


# (route's ranking, hybrid's ranking, named sources, expected documents) with ahead=5: hybrid's first five documents
# that the route holds come before every document of the route without stronger evidence
AHEAD_CASES = [
    ("an unevidenced addition goes behind hybrid's first five, which the route reordered",
     [hit("h1"), hit("x"), hit("h3"), hit("h2"), hit("h4"), hit("h5")],
     [hit(d) for d in ("h1", "h2", "h3", "h4", "h5")], (), ["h1", "h3", "h2", "h4", "h5", "x"]),
    ("a named document keeps its place ahead of hybrid's",
     [hit("h1"), hit("n"), hit("x"), hit("h2"), hit("h3"), hit("h4"), hit("h5")],
     [hit(d) for d in ("h1", "h2", "h3", "h4", "h5")], ("n.md",), ["h1", "n", "h2", "h3", "h4", "h5", "x"]),
    ("a graph edge's article keeps its place ahead of hybrid's",
     [hit("g", graph=1), hit("h1"), hit("h2"), hit("h3"), hit("h4"), hit("h5")],
     [hit(d) for d in ("h1", "h2", "h3", "h4", "h5")], (), ["g", "h1", "h2", "h3", "h4", "h5"]),
    ("a whole-index chunk a side search ranked is no named document: it goes behind",
     [hit("h1", side=1), hit("t", side=1), hit("h2"), hit("h3"), hit("h4"), hit("h5")],
     [hit(d) for d in ("h1", "h2", "h3", "h4", "h5")], (), ["h1", "h2", "h3", "h4", "h5", "t"]),
    ("a hybrid document the route dropped (a time filter's choice) stays dropped",
     [hit("x"), hit("h1"), hit("h2"), hit("h4"), hit("h5")],
     [hit(d) for d in ("h1", "h2", "h3", "h4", "h5")], (), ["h1", "h2", "h4", "h5", "x"]),
    ("hybrid's sixth document is an addition like any other",
     [hit("h6"), hit("h1"), hit("h2"), hit("h3"), hit("h4"), hit("h5")],
     [hit(d) for d in ("h1", "h2", "h3", "h4", "h5", "h6")], (), ["h1", "h2", "h3", "h4", "h5", "h6"]),
]


@pytest.mark.parametrize("what, route, plain, named, expected", AHEAD_CASES, ids=[c[0] for c in AHEAD_CASES])
def test_a_route_adds_behind_hybrids_first_five_unless_its_evidence_is_stronger(what, route, plain, named, expected):
    out = kept_lead(route, plain, named, ahead=5)
    assert docs(out) == expected
    assert len(out) == len({h.chunk_id for h in out})
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)


def test_without_ahead_a_route_keeps_its_order_once_hybrids_lead_is_in_its_first_five():
    route = [hit("h1"), hit("x"), hit("h2")]
    assert docs(kept_lead(route, [hit("h1"), hit("h2")], ())) == ["h1", "x", "h2"]


def test_a_compare_routes_whole_index_chunk_for_a_named_thing_goes_behind_hybrids_five_and_is_still_quoted(
        tmp_path, monkeypatch):
    # six short pages name --frob with the question's words; three long ones define --zap: side_search's chunk
    # for --zap (the whole index's, no page the question names) had taken hybrid's fifth page's place
    from lambdarag.domains.corpus import build_index
    from lambdarag.orchestration.config import RoutingConfig, load_config
    from lambdarag.orchestration.search_unified import search
    from bench.routing import top_documents

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "off")
    corpus = tmp_path / "pages"
    corpus.mkdir()
    filler = " ".join(f"word{i}" for i in range(40))
    for i, what in enumerate(["photos", "music", "letters", "backups", "logs", "videos"], 1):
        (corpus / f"0{i}-copying-{what}.md").write_text(
            f"# Copying {what}\n\nThe copy command copies files of {what}; the --frob option copies files faster.\n")
    for i, what in enumerate(["network", "printer", "sound"], 1):
        (corpus / f"1{i}-{what}.md").write_text(
            f"# {what.title()}\n\n{what.title()} is set up at boot; {filler}. --zap is the option that turns the "
            f"{what} on.\n")
    build_index(corpus, "frob-zap", dense=False, progress=False, domain="generic")
    cfg = load_config(None)
    plain = cfg.model_copy(update={"orchestration": cfg.orchestration.model_copy(update={"routing": RoutingConfig(
        **dict.fromkeys(("fact", "compare", "relation", "synthesis", "temporal"), "hybrid_search"),
        default="hybrid_search", adaptive=False)})})
    query = "How does --frob differ from --zap when I copy files?"
    routed, hybrid = search(query, index="frob-zap", config=cfg), search(query, index="frob-zap", config=plain)
    assert routed.strategy == "compare_search" and "11-network.md" not in top_documents(hybrid.hits)
    assert top_documents(routed.hits) == top_documents(hybrid.hits)
    assert "--zap is the option that turns the network on" in routed.answer, routed.answer


def sided(name: str, sides, *titles: str) -> Tool:
    return Tool(name, lambda s: {"hits": tuple(hit(t) for t in titles), "sides": sides}, reads=["query"],
                writes={"hits": tuple, "sides": tuple})


@pytest.mark.parametrize("side, ahead, expected", [
    # edu-en dev c04: "login" of "…at the login screen…" named the page *Restrict SSH login access*
    (Side(name="login", title="Restrict SSH login access", source="x.md"), 5, ["h1", "h2", "h3", "h4", "h5", "x"]),
    (Side(name="restrict SSH login access", title="Restrict SSH login access", source="x.md"), 5,
     ["x", "h1", "h2", "h3", "h4", "h5"]),
    (Side(name="login", title="Restrict SSH login access", source="x.md"), 0, ["x", "h1", "h2", "h3", "h4", "h5"]),
])
def test_with_ahead_a_side_is_stronger_evidence_when_the_question_says_its_documents_whole_title(side, ahead,
                                                                                                 expected):
    from lambdarag.patterns.generic import keeps_lead

    plain = ranking("plain", "h1", "h2", "h3", "h4", "h5")
    term = keeps_lead(sided("route", (side,), "x", "h1", "h2", "h3", "h4", "h5"), plain, ahead=ahead)
    assert docs(term.run(State.of("q"), Context()).hits) == expected
