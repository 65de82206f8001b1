"""The generic path on real non-statute text: a slice of the English Debian Reference, indexed, answers its questions.

The bounds record today's behaviour loosely (issue 29 tightens them): every question answers without
raising, with hits, a known type and an answer; most rank a file that answers them in the top 5.
"""
import hashlib
import json

import pytest

from bench import domain_bench, domain_data
from lambdarag.orchestration.metrics import score
from tests.conftest import FIXTURES

SLICE = FIXTURES / "debian-reference"


def slice_files():
    return {p.name for p in SLICE.glob("*.md") if p.name != "SOURCE.md"}


def questions():
    """Returns the dev questions of reference-en that the slice's files answer (never the frozen test half)."""
    return [r for r in domain_data.load("reference-en", "dev") if set(r["relevant"]) <= slice_files()]


@pytest.fixture(scope="module")
def slice_index(tmp_path_factory):
    from lambdarag.domains.corpus import build_index

    mp = pytest.MonkeyPatch()
    mp.setenv("LAMBDARAG_HOME", str(tmp_path_factory.mktemp("home")))
    build_index(SLICE, "debian-slice", dense=False, progress=False)
    yield "debian-slice"
    mp.undo()


def test_the_slice_is_verbatim_converter_output_and_answers_every_type():
    sha = domain_data.manifest("reference-en")["sha256"]
    for name in slice_files():
        assert hashlib.sha256((SLICE / name).read_bytes()).hexdigest() == sha[name], name
    assert {r["type"] for r in questions()} == set(domain_data.TYPES) and len(questions()) >= 10
    assert domain_data.problems(questions(), slice_files(), SLICE) == []


def test_every_question_answers_without_crashing_and_most_rank_an_answering_file(slice_index):
    from lambdarag.orchestration.search_unified import search

    found = []
    for q in questions():
        r = search(q["query"], index=slice_index)
        assert r.hits and r.answer.strip() and r.query_type in domain_data.TYPES, q["qid"]
        found.append(score("recall@5", domain_bench.top_documents(r.hits), domain_bench.judged(q["relevant"])) > 0)
    assert sum(found) >= 0.75 * len(found), json.dumps(found)


@pytest.mark.parametrize("text, lang", [("The boot loader runs GRUB.", "en"), ("引导程序运行 GRUB。", "zh"),
                                        ("根据现有资料： the boot loader runs GRUB and then the kernel", "mixed"),
                                        ("", "en")])
def test_the_language_test_of_the_benchmark(text, lang):
    assert domain_bench.language(text) == lang


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_document():
    def mrr(relevant, ranked):
        return score(f"mrr@{domain_bench.K}", ranked, domain_bench.judged(relevant))

    assert mrr(["b.md"], ["a.md", "b.md", "c.md"]) == 0.5
    assert mrr(["x/c.md", "a.md"], ["a.md", "c.md"]) == 1.0
    assert mrr(["z.md"], ["a.md", "b.md", "c.md", "d.md", "e.md", "z.md"]) == 0.0


def test_swaps_count_what_a_route_adds_to_and_drops_from_hybrid_and_how_much_of_it_answers():
    swapped = domain_bench.swapped(["a.md", "b.md", "x.md", "y.md"], ["a.md", "b.md", "c.md", "d.md"],
                                   domain_bench.judged(["c.md", "x.md", "b.md"]))
    assert swapped == {"added": 2, "added_relevant": 1, "dropped": 2, "dropped_relevant": 1}
    assert domain_bench.swapped(["a.md"], ["a.md"], domain_bench.judged(["a.md"])) == {
        "added": 0, "added_relevant": 0, "dropped": 0, "dropped_relevant": 0}
