"""side_search on the shipped statutes: a named statute keeps its place in the evidence even when it is the only side."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from skills import build
from skills.statutes import Side
from skills.store.corpus import to_hits
from tests.conftest import MARITIME

PORT = "经济法/港口法(2018-12-29).md"
FISHERY = "经济法/渔业法(2013-12-28).md"


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    from skills.store.index import build_index

    mp = pytest.MonkeyPatch()
    mp.setenv("LAMBDARAG_HOME", str(tmp_path_factory.mktemp("home")))
    yield build_index(MARITIME, "sides", dense=False, progress=False)
    mp.undo()


def test_a_single_named_side_goes_ahead_of_a_ranking_without_it(backend):
    question = "港口法里的港口经营许可跟渔业捕捞许可有什么不同？"
    crowded = to_hits(backend.bm25("渔业 捕捞 许可", 10, filters={"source": FISHERY}), "bm25")
    port = Side(name="港口法", title="港口法", source=PORT, family="港口法")
    state = State.of(question, hits=crowded, sides=(port,))
    out = build("side_search", {}).run(state, Context(resources={"index": backend}))
    assert out.hits[0].source == PORT
    assert {h.source for h in out.hits[1:]} >= {FISHERY}
