"""A question asking when is answered by a heading that dates its section (issue 40: "When did Debian Edu 11 come
out?" is said only by the title `… Debian Edu 11 … released 2021-08-14`), quoted with its citation; to any other
question a heading says what its section is about and is never quoted."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.store.records import Hit
from tests.test_evidence import GENERIC

TITLE = "New features for Debian Edu 11 Codename Bullseye released 2021-08-14"
HITS = (Hit(chunk_id="27.01#2", source="27.01-new-features.md", title=TITLE, section="Software updates", score=1.0,
            text="- Everything which is new in Debian 11 Bullseye, eg:\n  - Linux kernel 5.10\n  - LibreOffice 7.0\n"
                 "- More information about Debian 11 bullseye is provided in the release notes."),
        Hit(chunk_id="27.02#0", source="27.02-historic.md", title="Historic information about older releases",
            score=0.8, text="The following Debian Edu releases were made further in the past:\n"
                            "- Debian Edu 6.0.4+r0 Codename Squeeze, released 2012-03-11."))


def answered(query: str, query_type: str) -> str:
    return extractive_answer(State.of(query, hits=HITS, query_type=query_type),
                             Context(resources={"profile": GENERIC}))["answer"]


@pytest.mark.parametrize("query", ["When did Debian Edu 11 come out?", "Debian Edu 11 是什么时候发布的？"])
def test_a_question_asking_when_quotes_the_heading_dating_its_section_with_its_citation(query):
    first = answered(query, "temporal").splitlines()[1]
    assert TITLE in first and "27.01-new-features.md" in first


def test_a_question_not_asking_when_never_quotes_a_heading():
    assert "released 2021-08-14" not in answered("Which LibreOffice version comes with Debian Edu 11?", "fact")
