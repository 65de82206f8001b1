"""List items as answers (issue 40, round 19): short items for "which" questions, lead-in lines and
cross-references."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.domains import profile_named
from lambdarag.skills.evidence import ASKS_WHICH, candidates, is_reference
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.store.records import Hit

GENERIC = profile_named("generic")

NEW = "23.01-new-features-for-debian-edu-12-bookworm.md"
SOFTWARE = ("- Everything which is new in Debian 12 bookworm, eg:\n"
            "  - Linux kernel 6.1\n"
            "  - LibreOffice 7.4\n"
            "  - GOsa² 2.8\n"
            "  - LTSP 23.01\n"
            "  - More information about Debian 12 Bookworm is provided in the [release notes]"
            "(https://www.debian.org/releases/bookworm/releasenotes).")
"""The Debian Edu 12 manual's software updates (edu-en dev t03): the answer is a short item under a lead-in."""
ZH_SOFTWARE = SOFTWARE.replace("Everything which is new in Debian 12 bookworm, eg:", "Debian 12 bookworm 中的所有新内容，例如：")


def hits(text: str = SOFTWARE) -> tuple[Hit, ...]:
    return (Hit(chunk_id=f"{NEW}#0", text=text, source=NEW, title=NEW[6:-3], section="Software updates", score=1.0),
            Hit(chunk_id="07.02-introduction-to-gosa².md#0", source="07.02-introduction-to-gosa².md",
                text="GOsa² is a web based management tool that helps to manage some important parts of your "
                     "Debian Edu setup.", title="Introduction to GOsa²", score=0.9))


def answer(query: str, found: tuple[Hit, ...], query_type: str) -> str:
    state = State.of(query, hits=found, query_type=query_type)
    return extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]


@pytest.mark.parametrize("query, asks", [("Which GOsa² version comes with Debian Edu 12?", True),
                                          ("What LTSP version ships with it?", True), ("哪个版本自带 LTSP？", True),
                                          ("Which is the default desktop?", False), ("Debian 这个项目是哪一年成立的？", False)])
def test_which_questions_are_told_from_which_year(query, asks):
    assert bool(ASKS_WHICH.search(query)) is asks


def test_a_short_list_item_is_a_candidate_only_for_a_question_asking_which():
    asked = [c.text for c in candidates(hits(), GENERIC, short=True)]
    assert "GOsa² 2.8" in asked and "LTSP 23.01" in asked
    assert "GOsa² 2.8" not in [c.text for c in candidates(hits(), GENERIC)]


@pytest.mark.parametrize("text", [SOFTWARE, ZH_SOFTWARE], ids=["en", "zh"])
def test_a_lead_in_line_never_stands_and_leads_the_items_under_it(text):
    found = {c.text: c for c in candidates(hits(text), GENERIC, short=True)}
    intro = text.splitlines()[0].removeprefix("- ")
    assert intro not in found
    assert found["GOsa² 2.8"].lead == intro
    quoted = [t for t in found if t.startswith(intro)]
    assert len(quoted) == 1 and "Linux kernel 6.1" in quoted[0], quoted     # quoted with its items
    assert found[quoted[0]].scored == intro     # scored by what it says itself: its items win on their own words


def test_items_quoted_with_their_lead_in_are_closed_once():
    from lambdarag.skills.evidence import with_items

    assert with_items("Linux 有 7 个运行级别：", ["0（关闭系统），", "2 到 5（各种多用户模式），以及", "6（重启系统）。"]) == \
        "Linux 有 7 个运行级别：0（关闭系统）；2 到 5（各种多用户模式），以及6（重启系统）。"
    assert with_items("Tools, eg:", ["dput", "dupload"]) == "Tools, eg: dput; dupload"


def test_a_line_ending_in_a_colon_before_no_list_is_a_statement():
    """handbook-en dev f01's labelled sentence leads in to a command, not a list: it says something itself."""
    said = "approx runs by default on port 9999 via a systemd socket and requires the users to adjust their " \
           "sources.list file to point to the approx server:"
    found = [c.text for c in candidates(hits(f"{said}\n\n```\ndeb http://apt.example:9999/debian stable main\n```"),
                                        GENERIC)]
    assert said in found, found


@pytest.mark.parametrize("query", ["Which GOsa² version comes with Debian Edu 12?",
                                   "What GOsa² version ships with Debian Edu 12?",
                                   "Debian Edu 12 自带的 GOsa² 是哪个版本？"])
def test_which_version_is_answered_by_the_short_item_naming_it(query):
    said = answer(query, hits(), "temporal")
    assert "GOsa² 2.8" in said.splitlines()[1], said
    assert "eg:" not in said and "release notes" not in said, said


def test_more_information_provided_elsewhere_is_a_bare_cross_reference():
    assert is_reference("More information about Debian 12 Bookworm is provided in the [release notes]"
                        "(https://www.debian.org/releases/bookworm/releasenotes).")
    assert is_reference("关于 Debian 11 bullseye 的更多信息在其[发布说明](https://www.debian.org/releases/bullseye/"
                        "releasenotes)中提供。")
    assert not is_reference("Debian Bookworm includes more than 64000 packages available for installation.")

