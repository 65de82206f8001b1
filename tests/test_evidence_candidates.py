"""Which units of a retrieved chunk the offline answer may quote (skills.evidence), on text of the Debian corpora:
a chunk cut inside a code block, a table row under its header, a command line, an everyday hyphenated word."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.skills.evidence import candidates, opens_fenced, ranked
from lambdarag.skills.generate import extractive_answer
from lambdarag.domains import profile_named
from lambdarag.skills.store.records import Hit

GENERIC = profile_named("generic")

CUT_IN_A_BLOCK = """\
# Stable security updates
deb http://security.debian.org/ stable-security main contrib non-free
deb-src http://security.debian.org/ stable-security main contrib non-free
```
NOTE Layout of security repositories
Starting with Debian 11 Bullseye, the codename of the repository providing security updates has been renamed \
from codename/updates into codename-security to avoid the confusion with codename-updates (see [Section 6.1.2.2, \
“Stable Updates”](06.01-filling-in-the-sources-list-file.md)).
With this sources.list file APT will install packages from the Unstable suite."""
"""A chunk of the Debian Administrator's Handbook (06.01) that opens inside a sources.list example."""

BULLSEYE = "Starting with Debian 11 Bullseye, the codename of the repository providing security updates"


def hit(text: str, source: str = "06.01-filling-in-the-sources-list-file.md", section: str = "", n: int = 0) -> Hit:
    return Hit(chunk_id=f"{source}#{n}", text=text, source=source, title=source.removesuffix(".md"),
               section=section, score=1.0 - n / 10)


def texts(*hits: Hit) -> list[str]:
    return [c.text for c in candidates(hits, GENERIC)]


def test_a_chunk_cut_inside_a_code_block_keeps_the_sentences_after_the_block():
    found = texts(hit(CUT_IN_A_BLOCK))
    assert any(t.startswith("NOTE Layout of security repositories " + BULLSEYE) for t in found), found
    assert not any("deb-src" in t for t in found)            # the end of the example is code, not a sentence
    assert opens_fenced(CUT_IN_A_BLOCK.splitlines())


def test_a_chunk_cut_at_the_start_of_a_code_block_keeps_the_sentences_before_it():
    text = ("The sources.list file lists the repositories APT uses. Each line names one of them.\n```\n"
            "deb https://deb.debian.org/debian stable main contrib non-free")
    assert not opens_fenced(text.splitlines())
    assert texts(hit(text)) == ["The sources.list file lists the repositories APT uses.", "Each line names one of them."]


def test_the_dated_sentence_after_a_cut_code_block_answers_a_temporal_question():
    hits = (hit(CUT_IN_A_BLOCK), hit("This edition covers version 11 of Debian, code-named Bullseye.",
                                      "01.04-book-structure.md", n=1))
    state = State.of("What changed in Debian 11 Bullseye for the name of the security updates repository?",
                     hits=hits, query_type="temporal")
    answer = extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]
    assert BULLSEYE in answer, answer


PINNING = """\
| Pin-Priority | apt-pinning effects to the package |
|---|---|
| 1 | used as the default for the NotAutomatic archive |"""
"""A table-row chunk of the Debian Reference (02.07, Tweaking candidate version): the row under its header."""


def test_a_table_row_sits_under_its_header():
    (row,) = candidates((hit(PINNING, "02.07-tips-for-the-package-management.md", "Tweaking candidate version row 18"),),
                        GENERIC)
    assert row.text == "1 | used as the default for the NotAutomatic archive" and row.kind == "row"
    assert row.heading.endswith("Pin-Priority | apt-pinning effects to the package")


def test_a_table_row_is_scored_with_its_header():
    source = "02.07-tips-for-the-package-management.md"
    hits = (hit("The NotAutomatic archive is set by archive server having its archive level Release file containing "
                "only \"NotAutomatic: yes\".", source, "Tweaking candidate version", 0),
            hit(PINNING, source, "Tweaking candidate version row 18", 1))
    best = ranked("What pin priority does APT give to a NotAutomatic archive?", hits, GENERIC,
                  Context(resources={"profile": GENERIC}))[0]
    assert best.text == "1 | used as the default for the NotAutomatic archive", best.text


TAR = """\
The data.tar.xz archive holds the files installed by the package.
```
$ tar tJf data.tar.xz | head -n 16
```"""
"""From the Debian Administrator's Handbook (05.01, Structure of a Binary Package)."""


def test_a_command_line_answers_only_a_question_asking_how():
    def quotes(query: str) -> list[str]:
        return [s.text for s in ranked(query, (hit(TAR, "05.01-structure-of-a-binary-package.md"),), GENERIC,
                                       Context(resources={"profile": GENERIC}))]
    assert "$ tar tJf data.tar.xz | head -n 16" in quotes("How do I list the files of data.tar.xz?")
    assert quotes("What does the data.tar.xz archive of a package hold?") == [
        "The data.tar.xz archive holds the files installed by the package."]


@pytest.mark.parametrize("query, missing", [
    ("Which tools schedule tasks, both recurring and one-off, including on machines that are not always on?", []),
    ("Is the up-to-date list of non-free packages kept by apt-file?", ["apt-file"]),
])
def test_an_everyday_hyphenated_word_is_never_missing(query, missing):
    context = "cron is the daemon responsible for executing scheduled and recurring commands. atd runs a command once."
    assert GENERIC.wording.missing_things(query, context.lower()) == missing


def test_an_everyday_hyphenated_word_causes_no_refusal():
    hits = (hit("cron is the daemon responsible for executing scheduled and recurring commands (every hour, every "
                "day, every week, etc.).", "09.07-scheduling-tasks-with-cron-and-atd.md"),
            hit("atd deals with commands to be executed a single time, but at a specific moment in the future.",
                "09.07-scheduling-tasks-with-cron-and-atd.md", n=1))
    state = State.of("Which tools schedule tasks, both recurring and one-off, including on machines that are not "
                     "always on?", hits=hits, query_type="synthesis")
    out = extractive_answer(state, Context(resources={"profile": GENERIC}))
    assert out["citations"] and "do not answer" not in out["answer"], out["answer"]


def best(query: str, *hits: Hit) -> str:
    return ranked(query, hits, GENERIC, Context(resources={"profile": GENERIC}))[0].text


def test_a_where_question_prefers_the_unit_naming_a_path():
    boot = "09.01-system-boot.md"
    hits = (hit("systemctl status gives a better view of the services, as well as the related processes.", boot),
            hit("If given the name of a service (as in systemctl status ntp.service), it returns even more details, "
                "as well as the last few log lines related to the service (more on that later).", boot, n=1),
            hit("The rsyslogd daemon is responsible for collecting service messages coming from applications and the "
                "kernel, then dispatching them into log files (usually stored in the /var/log/ directory).",
                "09.05-syslog-system-events.md", n=2))
    assert "/var/log/" in best("Where can I view the log files of my services?", *hits)

    def scores(query: str) -> dict[str, float]:
        return {s.text: s.score for s in ranked(query, hits, GENERIC, Context(resources={"profile": GENERIC}))}
    where, how = scores("Where can I view the log files of my services?"), scores("How can I view the log files of my services?")
    gain = {t: where[t] - how[t] for t in where}
    path = next(t for t in gain if "/var/log/" in t)
    assert gain[path] > 0.05 + max(g for t, g in gain.items() if t != path), gain    # the path, not the wording


EDITOR = ("许多程序使用环境变量“$EDITOR”或“$VISUAL”来决定使用那个编辑器。出于 Debian 系统的一致性考虑，它们被设置到"
          "“/usr/bin/editor”。（在历史上，“$EDITOR”是“ed”，“$VISUAL”是“vi”。）")
"""A table cell of the Debian Reference (zh-cn, 01.04 设置默认文本编辑器) holding three sentences."""


def test_a_fact_answer_quotes_at_most_three_sentences():
    from lambdarag.skills.evidence import Candidate, Scored, fact

    source = "01.04-类-unix-工作环境基础.md"
    first = hit("Debian 通过命令“/usr/bin/editor”提供了对系统默认编辑器的统一访问，因此其它程序（例如 reportbug(1)）可以调用它。",
                source, "设置默认文本编辑器")
    row = hit(f"| {EDITOR} |", source, "设置默认文本编辑器 第1行", 1)
    short = hit("“/usr/bin/editor”指向系统默认的文本编辑器。", source, "设置默认文本编辑器", 2)

    def scored(h: Hit, score: float) -> Scored:
        return Scored(Candidate(h.text.strip("| "), hit=h, rank=0), score, 0.5, 0.5)
    assert [s.hit for s in fact([scored(first, 1.0), scored(row, 0.95)])] == [first]   # 1 + 3 sentences: left out
    assert [s.hit for s in fact([scored(first, 1.0), scored(short, 0.95)])] == [first, short]


def test_a_line_that_is_another_pages_title_is_a_link_caption_and_never_stands():
    """A help page's "related topics" list, converted without its links, leaves each linked page's title as a line
    of its own: it names where the answer is, it says nothing (a spreadsheet guide's 修改表格视图 page ends on the
    title of the page on autoformats)."""
    view = hit("# 修改表格视图\n要隐藏网格线：在「视图」选项卡的「网格线」下拉框中选择「隐藏」。\n为选中的单元格区域套用表格样式",
               "00.88-修改表格视图.md")
    styles = Hit(chunk_id="00.09-styles.md#0", source="00.09-styles.md", title="为选中的单元格区域套用表格样式",
                 section="", score=0.9, text="Select the cells to format. The range must be at least 3 columns and "
                                             "3 rows in size.")
    found = texts(view, styles)
    assert "为选中的单元格区域套用表格样式" not in found, found
    assert "要隐藏网格线：在「视图」选项卡的「网格线」下拉框中选择「隐藏」。" in found
    assert "The range must be at least 3 columns and 3 rows in size." in found


def test_a_lead_in_is_quoted_with_the_formula_on_the_line_under_it():
    """A spreadsheet guide writes the formula a lead-in announces on a line of its own, no word in it: alone, the
    lead-in says "use the formula below" and the formula says nothing; together they answer (a text written for
    this test)."""
    text = ("# 温度换算\n要把 A1 中的摄氏温度换成华氏温度，最好使用以下公式:\n=A1*9/5+32\n"
            "这时，摄氏温度位于 A1，结果显示在公式所在的单元格。")
    found = texts(hit(text, "温度换算.md"))
    assert "要把 A1 中的摄氏温度换成华氏温度，最好使用以下公式: =A1*9/5+32" in found, found
    assert "这时，摄氏温度位于 A1，结果显示在公式所在的单元格。" in found
    assert "=A1*9/5+32" in answer_to("摄氏温度怎么换算成华氏温度，公式怎么写？", hit(text, "温度换算.md"))


def answer_to(query: str, *hits: Hit) -> str:
    state = State.of(query, hits=hits, query_type="fact")
    return extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]
