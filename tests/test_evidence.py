"""The offline answer's evidence units (skills.evidence) on small slices of real documentation, and the checks.

Fixtures: tests/fixtures/man-basenc (a coreutils man page: synopsis and option lines), tests/fixtures/
debian-faq-zh-cn (one Debian FAQ file, Chinese: both sides of a comparison), tests/fixtures/debian-reference.
"""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.skills.check import check_answer, pruned
from lambdarag.skills.evidence import candidates, is_reference, normalised, stands
from lambdarag.skills.generate import extractive_answer
from lambdarag.domains import profile_named
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.store.corpus import to_hits
from tests.conftest import FIXTURES

GENERIC = profile_named("generic")


def hits_of(folder: str, *names: str) -> tuple:
    """Returns the chunks of the fixture files `names` (all files without names) as hits, in file order."""
    corpus = read_corpus(FIXTURES / folder, domain="generic")
    chunks = [c for c in corpus.chunks if not names or any(c.source.startswith(n) for n in names)]
    return to_hits([(c, 1.0) for c in chunks], "bm25")


def answer(query: str, hits: tuple, query_type: str = "fact") -> str:
    state = State.of(query, hits=hits, query_type=query_type)
    return extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]


@pytest.mark.parametrize("text, stands_alone", [
    ("basenc [OPTION]... [FILE]", False),                              # synopsis
    ("git reset [-q] [<tree-ish>] [--] <pathspec>...", False),
    ("Usage: git [--version] [--help] <command> [<args>]", False),
    ("See 'Reset, restore and revert' in git(1).", False),               # bare cross-reference
    ("参见第 3 章 选择一个 Debian 发布版本以获得关于选择 Debian 发布版本的帮助。", False),
    ("请阅读[第 6.1 节 “有多少种 Debian 发布版本？”](06.01-有多少种-debian-发布版本.md)。", False),
    ("Table 10.11. List of git related packages and commands", False),  # caption
    ("What changed in version 3.2?", False),                            # a question answers nothing
    ("-d, --decode  decode data", True),
    ("basenc encode or decode FILE, or standard input, to standard output.", True),
    ("You can see the [boot log](https://example.org/log) in many places once the system is fully up.", True),
])
def test_what_may_stand_as_an_answer(text, stands_alone):
    assert stands(text) is stands_alone


def test_a_cross_reference_with_something_to_say_is_not_bare():
    assert is_reference("See git-reset(1).")
    assert is_reference("See [Section 9.9.1](09.09-data-encryption-tips.md) for sharing data between platforms "
                        "using device level encryption.")   # opens with the pointer: a pointer
    assert not is_reference("The journal records the start of every unit, and you can see it with journalctl(1) "
                            "at any time after the system has booted.")


def test_an_option_line_is_one_unit_with_its_description_and_the_synopsis_is_none():
    units = {c.text: c for c in candidates(hits_of("man-basenc"), GENERIC)}
    assert "-d, --decode  decode data" in units and units["-d, --decode  decode data"].kind == "option"
    assert "-w, --wrap=COLS  wrap  encoded lines after COLS character (default 76).  Use 0 to disable line wrap‐ ping" \
        in units      # the description's hard-wrapped lines joined
    assert not any("[OPTION]" in t for t in units)
    assert units["-d, --decode  decode data"].heading == "DESCRIPTION"


def test_the_option_line_is_quoted_over_the_synopsis():
    text = answer("Which basenc option decodes the data?", hits_of("man-basenc"))
    assert "-d, --decode" in text and "decode data" in text, text
    assert "[OPTION]" not in text


def test_cross_references_never_stand_in_an_answer():
    text = answer("软件包依赖、推荐、建议是什么意思，去哪里阅读更多细节？", hits_of("debian-faq-zh-cn"))
    assert "请阅读" not in text and "参见" not in text, text


def test_a_chinese_compare_gives_both_labelled_sides_each_cited():
    text = answer("软件包的“依赖”和“推荐”有什么不同？", hits_of("debian-faq-zh-cn"), "compare")
    blocks = text.split("关于「推荐」：")
    assert "关于「依赖」：" in blocks[0] and len(blocks) == 2, text
    depends, recommends = blocks[0].split("关于「依赖」：")[1], blocks[1]
    assert "依赖（depend）B" in depends and "[来源: " in depends, text
    assert "推荐（recommend）B" in recommends.splitlines()[1] and "[来源: " in recommends.splitlines()[1], text
    assert "【】" not in text and "关于的内容" not in text


@pytest.mark.parametrize("query", [
    "怎样查看当前的软件包依赖关系？",
    "软件包 A 以易读的方式声明依赖 B 是什么意思？",
    "Please tell me what it means when package A recommends package B; how do I view the current meaning?",
])
def test_everyday_words_never_cause_a_refusal(query):
    text = answer(query, hits_of("debian-faq-zh-cn"))
    assert not text.startswith(("根据现有资料无法回答", "The documents do not answer")), text
    assert "缺少" not in text and "not mention" not in text


@pytest.mark.parametrize("query, missing", [
    ("怎样查看当前的路由表？", []),
    ("df 命令用哪个选项以易读的格式显示？", []),
    ("pg_dump 和 “推荐” 有什么不同？", ["pg_dump"]),
    ("How does APT pinning relate to the NotAutomatic flag?", ["NotAutomatic"]),
])
def test_only_named_things_are_missing(query, missing):
    context = "df 命令 -h, --human-readable 推荐 apt pinning".lower()
    assert GENERIC.wording.missing_things(query, context) == missing


def test_a_verbatim_quote_survives_the_check_whichever_chunk_of_its_file_it_comes_from():
    hits = tuple(h for h in hits_of("debian-reference", "03.02") if not h.section)   # one marker names them all
    assert len({h.source for h in hits}) == 1 and len(hits) >= 2
    later = hits[2]
    sentence = next(c.text for c in candidates((later,), GENERIC) if len(c.text) > 40)
    assert normalised(sentence) not in normalised(hits[0].text)
    text = f"From the documents:\n- {sentence}[source: {later.source}]"   # no section: the marker names the file
    verdict = check_answer(text, hits)
    assert verdict.passed, verdict.details
    kept, removed = pruned(State.of("q", hits=hits, answer=text))
    assert removed == () and sentence in kept


def test_a_term_and_its_indented_definition_are_one_unit():
    from lambdarag.skills.store.records import Hit

    text = ('- "Depends"\n  - This declares an absolute dependency.\n- "Pre-Depends"\n'
            '  - This is like Depends, except that it requires completed installation of the listed packages in advance.')
    units = [c.text for c in candidates((Hit(chunk_id="d", text=text, source="d.md"),), GENERIC)]
    assert units == ['"Depends" This declares an absolute dependency.',
                     '"Pre-Depends" This is like Depends, except that it requires completed installation of the '
                     'listed packages in advance.']


def test_a_quoted_row_ending_in_a_closing_bracket_survives_the_check():
    from lambdarag.skills.store.records import Hit

    row = "| 它们被设置到“/usr/bin/editor”。（在历史上，“$EDITOR”是“ed”，“$VISUAL”是“vi”。） |"
    hit = Hit(chunk_id="e#t", text=row, source="e.md", section="t")
    quote = candidates((hit,), GENERIC)[0].text
    text = f"根据现有资料：\n- {quote}[来源: e.md#t]"
    assert check_answer(text, (hit,)).passed
    assert pruned(State.of("q", hits=(hit,), answer=text))[1] == ()


def test_the_throwaway_bm25_of_an_answers_units_scores_as_the_index_does():
    import numpy as np

    from lambdarag.skills.store.bm25 import Bm25Index

    docs = [["df", "human", "readabl", "df"], ["synopsi", "option"], ["human", "size", "power", "1024"], ["\0"]]
    built = Bm25Index()
    built.add(docs)
    for query in (["human"], ["df", "size"], ["option", "option", "absent"]):
        assert np.array_equal(Bm25Index.of(docs).scores(query), built.scores(query))


def test_the_chunks_next_to_a_top_hit_in_its_section_are_quoted_and_cited():
    from lambdarag.skills.check import check_answer
    from lambdarag.skills.context import assemble_context, citable
    from lambdarag.skills.store.local import LocalBackend

    corpus = read_corpus(FIXTURES / "debian-reference", domain="generic")
    backend = LocalBackend()
    backend.add(corpus.documents, corpus.chunks)
    pieces = [c for c in corpus.chunks if c.heading.startswith("Fetching of the meta data")]
    first, middle, last = pieces
    state = State.of("Which meta data points to the file location of the binary and source packages?",
                     hits=to_hits([(middle, 1.0)], "bm25"))
    near = assemble_context.run(state, Context(resources={"index": backend})).neighbours
    assert [h.chunk_id for h in near] == [first.id, last.id]     # the chunk before `first` is another section
    state = State.of(state.original_query, hits=state.hits, neighbours=near)
    out = extractive_answer(state, Context(resources={"profile": GENERIC}))
    assert '"Filename:" stanza pointing to the file location' in out["answer"], out["answer"]   # only in `last`
    assert check_answer(out["answer"], citable(state)).passed
    alone = extractive_answer(State.of(state.original_query, hits=state.hits), Context(resources={"profile": GENERIC}))
    assert '"Filename:" stanza' not in alone["answer"]


def blocks(text: str, *labels: str) -> list[str]:
    """Returns the lines under each side's label (``On “x”:`` / ``关于「x」：``) of a compare answer, in order."""
    out = []
    for i, label in enumerate(labels):
        after = text.split(label, 1)[1]
        out.append(after.split(labels[i + 1], 1)[0] if i + 1 < len(labels) else after)
    return out


def sourced(*pairs: tuple[str, str]) -> tuple:
    from lambdarag.skills.store.records import Hit

    return tuple(Hit(chunk_id=f"{s}#{i}", text=t, source=s, title=s.removesuffix(".md"), score=1.0 - i / 10)
                 for i, (s, t) in enumerate(pairs))


def test_lower_case_commands_are_compare_sides_each_with_the_sentence_defining_it():
    hits = sourced(("anacron.md", "anacron is the daemon that completes cron for computers that are not on at all "
                                  "times. It runs the jobs cron missed while the computer was off."),
                   ("cron.md", "To block one user from cron, write the name in /etc/cron.deny. cron is the daemon "
                               "responsible for executing scheduled and recurring commands."))
    text = answer("Compare cron and anacron: which one should I use on a laptop that is often switched off?",
                  hits, "compare")
    cron, anacron = blocks(text, "On “cron”:", "On “anacron”:")
    assert "cron is the daemon responsible" in cron and "[source: cron.md" in cron, text
    assert "anacron is the daemon that completes" in anacron and "[source: anacron.md" in anacron, text


@pytest.mark.parametrize("query, labels", [
    ("Compare Wayland with the X Window System: which one is network-capable?",
     ("On “Wayland”:", "On “X Window System”:")),
    ("Wayland 和 X Window 相比，哪个具备网络功能？", ("关于「Wayland」：", "关于「X Window」：")),
])
def test_a_compare_sides_are_the_two_names_the_connective_joins(query, labels):
    hits = sourced(("gui.md", "Please check the freedesktop.org site for how Wayland architecture is different from "
                              "X Window architecture."),
                   ("gui.md", "Wayland is a same-host GUI communication protocol: new, simpler, faster."),
                   ("gui.md", "X Window is a network-capable GUI communication protocol: traditional, complex."))
    text = answer(query, hits, "compare")
    wayland, x = blocks(text, *labels)
    assert "Wayland is a same-host" in wayland and "X Window is a network-capable" in x, text


def test_a_short_sentence_keeps_its_clauses_and_a_long_one_is_cut_at_them():
    from lambdarag.skills.evidence import sentences_of

    short = "中国船级社是社会团体性质的船舶检验机构，承办入级检验业务；经船检局授权，可以代行法定检验。"
    assert sentences_of(short) == [short]
    long = "；".join(["船舶所有人应当按照规定办理登记手续并缴纳相关费用"] * 6) + "。"
    assert len(sentences_of(long)) == 6


SECTION_EN = """# Compression

## Compression options

The compressor reads files and writes them back smaller.

| option | description |
|---|---|
| -1 | compress faster, with a lower ratio |
| -9 | compress better, slowly |
| -c | write on standard output and keep the original files |
| -d | decompress the files given |
| -k | keep the input files after compressing |
| -l | list the sizes of each compressed file |
| -q | suppress all warnings |
| -r | operate recursively on directories |
| -t | test the integrity of each compressed file without writing anything |
"""
SECTION_ZH = """# 压缩

## 压缩选项

压缩程序读入文件并把它写得更小。

| 选项 | 说明 |
|---|---|
| -1 | 压缩得更快，压缩率较低 |
| -9 | 压缩得更好，但较慢 |
| -c | 输出到标准输出并保留原文件 |
| -d | 解压给定的文件 |
| -k | 压缩后保留输入文件 |
| -l | 列出每个压缩文件的大小 |
| -q | 不显示任何警告 |
| -r | 递归处理目录 |
| -t | 检查每个压缩文件的完整性而不写出任何文件 |
"""


@pytest.mark.parametrize("text, query, row", [
    (SECTION_EN, "Which option checks the integrity of a compressed file?", "test the integrity of each compressed"),
    (SECTION_ZH, "哪个选项可以检查压缩文件的完整性？", "检查每个压缩文件的完整性"),
], ids=["en", "zh"])
def test_the_answering_row_far_down_the_first_hits_section_is_quoted_and_cited(tmp_path, text, query, row):
    from lambdarag.skills.context import assemble_context, citable
    from lambdarag.skills.store.local import LocalBackend

    (tmp_path / "compression.md").write_text(text, encoding="utf-8")
    corpus = read_corpus(tmp_path, domain="generic")
    backend = LocalBackend()
    backend.add(corpus.documents, corpus.chunks)
    first = next(c for c in corpus.chunks if "-1 |" in c.text)      # retrieval ranked the table's first row
    state = State.of(query, hits=to_hits([(first, 1.0)], "bm25"))
    near = assemble_context.run(state, Context(resources={"index": backend})).neighbours
    assert any(row in h.text for h in near)                          # eight rows away: no adjacent chunk
    state = State.of(query, hits=state.hits, neighbours=near)
    out = extractive_answer(state, Context(resources={"profile": GENERIC}))
    assert row in out["answer"], out["answer"]
    assert check_answer(out["answer"], citable(state)).passed


def test_a_statute_paragraph_whose_subject_is_the_paragraph_before_it_is_scored_with_that_paragraph():
    from lambdarag.domains.prc_statutes.documents import refers_back
    from lambdarag.skills.evidence import ranked
    from lambdarag.skills.store.records import Hit

    assert refers_back("前款保证金金额为30万元人民币。") and refers_back("依照前款规定取得许可的，应当公告。")
    assert not refers_back("保证金金额为30万元人民币。") and not refers_back("本条例自公布之日起施行。")
    statute = profile_named("prc_statutes")
    hits = (Hit(chunk_id="agency.md#第十二条", source="agency.md", section="第十二条", title="船舶代理管理办法", score=2.0,
                text="第十二条 经营船舶代理业务，应当向交通主管部门备案，并交纳保证金。\n\n"
                     "前款保证金金额为30万元人民币；每增设一个分公司，增加保证金5万元人民币。"),
            Hit(chunk_id="agency.md#第二十条", source="agency.md", section="第二十条", title="船舶代理管理办法", score=1.0,
                text="第二十条 船舶代理业务经营者未按照规定交纳保证金的，由交通主管部门责令限期改正。"))
    query = "船舶代理业务经营者应当交纳多少保证金？"
    best = ranked(query, hits, statute, Context(resources={"profile": statute}))[0]
    assert best.text.startswith("前款保证金金额为30万元"), best.text
    assert best.candidate.lead.startswith("经营船舶代理业务")


def test_negative_bm25_over_a_few_units_scales_to_zero_never_below_a_unit_sharing_no_word():
    import numpy as np

    from lambdarag.skills.evidence import scaled

    assert scaled(np.array([-7.9, 0.0, 0.5, 1.0])).tolist() == [0.0, 0.0, 0.5, 1.0]


@pytest.mark.parametrize("query, count", [
    ("国际海运条例修订后，经营国际集装箱船、普通货船运输业务还需要许可吗？", 1),   # 、 lists the items of one phrase
    ("海上货物运输的诉讼时效和航次租船合同的诉讼时效各是多久？", 2),
    ("Which options compress faster and which ones keep the input files?", 2),
])
def test_a_question_splits_into_parts_at_conjunctions_never_at_an_enumeration_comma(query, count):
    from lambdarag.skills.evidence import parts

    assert len(parts(query)) == count, parts(query)


@pytest.mark.parametrize("texts, dated", [
    (["申请人应当向自治区交通主管部门提交自己的材料。", "本条例自2019年3月2日起施行。"], "本条例自2019年3月2日起施行。"),
    (["The daemon restarts itself on failure.", "Since Debian 8 the daemon is started by systemd."],
     "Since Debian 8 the daemon is started by systemd."),
])
def test_a_temporal_answer_quotes_the_unit_naming_a_version_or_date_not_one_saying_zi_or_qi(texts, dated):
    from lambdarag.skills.evidence import Candidate, Scored, temporal
    from lambdarag.skills.store.records import Hit

    hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 10, 1.0, 1.0) for i, t in enumerate(texts)]
    assert temporal(ranking)[0].text == dated


@pytest.mark.parametrize("query, texts", [
    ("What version suffix must an update to bullseye's stable release carry?",
     ["A security NMU to stable for a package at version 1.5-3 would have version 1.5-3+deb11u1.",
      "Uploads to a supported stable release should target their suite name in the changelog.",
      "The proposed package must have a correct version number (e.g. ...+deb11u1 for bullseye)."]),
    ("Since which release has systemd been the default init system in Debian?",
     ["This book describes the boot system used by default in Debian since Buster.",
      "The init program is started by the kernel on every boot.",
      "Although it was already available in Wheezy, systemd has only become the default in Debian Jessie."]),
], ids=["suffix", "code-name"])
def test_a_temporal_answers_second_unit_names_a_version_or_a_release_before_an_undated_runner_up(query, texts):
    """Near the first, a unit naming a version (a suffix, +deb11u1) or a release by a code name the question does
    not say (Jessie; Debian, which it says, is the product) is quoted before an undated runner-up."""
    from lambdarag.skills.evidence import Candidate, Scored, dated, temporal
    from lambdarag.skills.store.records import Hit

    hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 20, 1.0, 1.0) for i, t in enumerate(texts)]
    assert [s.text for s in temporal(ranking, query=query)] == [texts[0], texts[2]]
    assert not dated("It ships in Debian main.", "Since which release has systemd been the default in Debian?")


def test_a_place_in_the_text_is_no_release_a_temporal_answer_could_date_by():
    """A capitalised word after `in` is a release's code name (in Wheezy) only when it names no place in the text:
    `in Appendix A`, `in Chapter 3`, `in Section 2.1` point to a part of the book (r-intro-en dev t03 quoted the
    preface's `…the introductory session in Appendix A.` as the dated unit for what happens at a session's end)."""
    from lambdarag.skills.evidence import dated

    query = "What happens to my variables at the end of a session?"
    assert not dated("Most novices will start with the introductory session in Appendix A.", query)
    assert not dated("The options are listed in Chapter 3 and in Section 2.1.", query)
    assert dated("The variables were kept in Wheezy and dropped after Buster.", query)


@pytest.mark.parametrize("text, item, after", [
    ('The target release can be set by several methods.\n- "/etc/apt/apt.conf" with a Default-Release line\n'
     '- command line option, e.g., "apt-get install -t testing some-package"\n'
     'The NotAutomatic archive is set by the archive server in its Release file.',
     'command line option, e.g., "apt-get install -t testing some-package"',
     "The NotAutomatic archive is set by the archive server in its Release file."),
    ("目标发行版可以用几种方法设置。\n- 配置文件中的 Default-Release 行\n- 命令行选项，例如 apt-get install -t testing\n"
     "档案服务器在其 Release 文件中设置 NotAutomatic 档案。",
     "命令行选项，例如 apt-get install -t testing", "档案服务器在其 Release 文件中设置 NotAutomatic 档案。"),
], ids=["en", "zh"])
def test_a_paragraph_flush_after_a_list_item_is_a_unit_of_its_own(text, item, after):
    from lambdarag.skills.store.records import Hit

    texts = [c.text for c in candidates((Hit(chunk_id="a#1", source="a.md", text=text),), GENERIC)]
    assert item in texts and after in texts, texts


def test_an_item_wrapped_onto_an_indented_or_lower_case_line_stays_one_unit():
    from lambdarag.skills.store.records import Hit

    text = "- The daemon reads its configuration\n  File from /etc at start.\n- It restarts the jobs\nthat failed."
    texts = [c.text for c in candidates((Hit(chunk_id="a#1", source="a.md", text=text),), GENERIC)]
    assert "The daemon reads its configuration File from /etc at start." in texts
    assert "It restarts the jobs that failed." in texts, texts


@pytest.mark.parametrize("query, texts", [
    ("Which Memcheck option shows where uninitialised values come from?",
     ["Then, when an uninitialised value error is reported, Memcheck will try to show the origin of the value.",
      "--track-origins=<yes|no> [default: no] Controls whether Memcheck tracks the origin of uninitialised values."]),
    ("df 用哪个选项以易读的格式显示大小？",
     ["df 命令以易读的格式显示每个文件系统的大小。", "-h, --human-readable  以易读的格式显示大小（例如 1K 234M 2G）"]),
    # a program is named by saying what it is called as well as by its manual page
    ("Which scripts decide whether a package moves from unstable into testing?",
     ["To see whether a package is progressing into testing, use the program grep-excuses in devscripts.",
      "The scripts that update the testing distribution run twice each day; these scripts are called britney."]),
    ("用什么工具选择要安装的软件集？",
     ["安装程序会列出可以选择的软件集，您可以按需要选择。", "选择软件集的程序叫做 tasksel，它也可以在安装后运行。"]),
    # a GUI guide's shortcut is a key combination, not a sentence saying that shortcuts exist
    ("Is there a keyboard shortcut for the Bookmarks dialog?",
     ["Most menu items have keyboard shortcuts: press the Control and the K keys together to open a capture.",
      "Select Edit → Bookmarks… or press Shift+Ctrl+B and the Bookmarks dialog pops up."]),
], ids=["en", "zh", "called-en", "called-zh", "keys"])
def test_a_question_asking_for_an_option_or_a_program_is_answered_first_by_the_unit_naming_one(query, texts):
    from lambdarag.skills.evidence import Candidate, Scored, option_first
    from lambdarag.skills.store.records import Hit

    hit = Hit(chunk_id="a#1", source="a.md", text="\n".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 4, 1.0, 1.0) for i, t in enumerate(texts)]
    assert option_first(query, ranking)[0].text == texts[1]
    assert option_first("What does Memcheck show for uninitialised values?", ranking)[0].text == texts[0]
    far = [ranking[0], Scored(ranking[1].candidate, 0.5, 1.0, 1.0)]      # under LEAD of the best: not first
    assert option_first(query, far)[0].text == texts[0]


OPTION_DESCRIPTION = (
    ("memcheck.md", "--leak-check=<no|summary|yes|full> [default: summary]\nWhen enabled, search for memory leaks when "
                    "the client program finishes. If set to summary, it says how many leaks occurred. If set to full "
                    "or yes, each individual leak will be shown in detail.\nIf --xml=yes is given, memcheck will "
                    "automatically use the value --leak-check=full.\n--leak-resolution=<low|med|high> [default: "
                    "high]\nWhen set to low, only the first two entries need match."),
    ("requests.md", "VALGRIND_DO_QUICK_LEAK_CHECK: like VALGRIND_DO_LEAK_CHECK, except it produces only a leak summary "
                    "(like --leak-check=summary)."),
    ("requests.md", "VALGRIND_DO_LEAK_CHECK: does a full memory leak check (like --leak-check=full) right now."))
GLOSSED = (
    ("what-is-a-package.md", "依赖关系在每个软件包含有的 control 文件里给出。"),
    ("depends-recommends.md", "- 如果运行软件包 A 前必须先安装软件包 B，那么 A 依赖（depend）B。\n- 如果软件包维护者认为大多数用户"
                              "在没有软件包 B 提供的功能的情况下，就不会愿意安装软件包 A，那么 A 推荐（recommend）B。"))
GLOSSARY = (
    ("leaks.md", "- \"Definitely lost\". This covers case 3 above. This means that no pointer to the block can be "
                 "found.\n- \"Possibly lost\". This covers cases 5--8 above. This means that a chain of one or more "
                 "pointers to the block has been found, but at least one of the pointers is an interior-pointer."),
    ("leaks.md", "To also show the reachable blocks in addition to the definitely and possibly lost blocks, use "
                 "--show-leak-kinds=all."))


@pytest.mark.parametrize("query, pairs, sides", [
    # an option named with its value is one side whole, answered from its option's description
    ("How does --leak-check=summary differ from --leak-check=full?", OPTION_DESCRIPTION,
     {"On “--leak-check=summary”:": "If set to summary, it says how many leaks occurred",
      "On “--leak-check=full”:": "If set to full or yes, each individual leak"}),
    # a term glossed in brackets is answered from where the text introduces it
    ("软件包的“依赖”和“推荐”有什么不同？", GLOSSED, {"关于「依赖」：": "A 依赖（depend）B", "关于「推荐」：": "A 推荐（recommend）B"}),
    # the sentences of a glossary item speak for its quoted term
    ("What is the difference between definitely lost and possibly lost blocks?", GLOSSARY,
     {"On “definitely lost”:": "This means that no pointer to the block can be found",
      "On “possibly lost blocks”:": "This means that a chain of one or more pointers"}),
])
def test_each_compare_side_is_answered_from_where_the_text_defines_it(query, pairs, sides):
    text = answer(query, sourced(*pairs), "compare")
    for block, quote in zip(blocks(text, *sides), sides.values()):
        assert quote in block, text


def test_a_list_of_options_naming_both_sides_is_no_statement_of_how_they_relate():
    listed = ("core.md", "--leak-check=summary --leak-check=yes --leak-check=full --ignore-ranges.")
    text = answer("How does --leak-check=summary differ from --leak-check=full?",
                  sourced(*OPTION_DESCRIPTION, listed), "compare")
    assert "If set to summary" in text and "--ignore-ranges" not in text, text


def test_a_connective_the_hits_open_a_sentence_with_is_no_compare_side():
    from lambdarag.skills.named import named_things

    hits = sourced(("core.md", "--trace-children=<yes|no> [default: no] When enabled, Valgrind traces sub-processes."),
                   ("core.md", "and *, which have the usual meaning."))
    assert named_things("How do --trace-children and --child-silent-after-fork differ?", hits, GENERIC) == \
        ["--trace-children", "--child-silent-after-fork"]


def test_a_number_the_question_writes_states_no_amount_it_asks():
    """"How long before a resolver accepts a key with RFC 5011?" asks a period: `RFC 5011`, said by the question,
    names the protocol in every unit about it, so it states no amount (bind-arm-en dev t03 quoted two such units
    over `after 30 days, … the key is accepted`). A number the question does not write still states one, in either
    language."""
    from lambdarag.skills.evidence import Candidate, asked_bonus
    from lambdarag.skills.store.records import Hit

    def bonus(query: str, *texts: str) -> list[float]:
        hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
        return [round(float(b), 2) for b in asked_bonus(query, [Candidate(t, hit=hit, rank=0) for t in texts])]

    assert bonus("How long before a resolver accepts a new key with RFC 5011?",
                 "A resolver configured for an [RFC 5011](https://example.org/rfc5011)-managed anchor stores the keys.",
                 "After 30 days, if the key is still there, the resolver accepts it.") == [0.0, 0.1]
    assert bonus("Debian 12 的安装需要多少内存？", "Debian 12 支持多种架构。", "至少需要 2 GB 内存。") == [0.0, 0.1]
    assert bonus("How many days does Debian 12 wait?", "Debian 12 waits 10 days.") == [0.2]


def test_a_question_naming_an_option_is_answered_first_by_that_options_own_line():
    """"What exactly does R --vanilla switch off?" is answered by the option's own line, its definition
    (`--vanilla  Combine --no-save, --no-environ…`), not by the sentences mentioning it in passing that hold the
    question's words as well (r-intro-en dev f06); within `LEAD` of the best, as an asked-for option is."""
    from lambdarag.skills.evidence import Candidate, Scored, option_first
    from lambdarag.skills.store.records import Hit

    texts = ["Most tools use --vanilla and so read no startup files.",
             "(Here --vanilla is equivalent to --no-environ --no-init-file.)",
             "--vanilla  Combine --no-save, --no-environ, --no-init-file and --no-restore."]
    hit = Hit(chunk_id="a#1", source="a.md", text="\n".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0, kind="option" if t.startswith("--") else "sentence"),
                      1.0 - i / 8, 1.0, 1.0) for i, t in enumerate(texts)]
    assert option_first("what exactly does R --vanilla switch off", ranking)[0].text == texts[2]
    assert option_first("what does R switch off", ranking)[0].text == texts[0]
    far = [*ranking[:2], Scored(ranking[2].candidate, 0.5, 1.0, 1.0)]
    assert option_first("what exactly does R --vanilla switch off", far)[0].text == texts[0]


@pytest.mark.parametrize("query, texts", [
    ("自动生成的备份副本是什么扩展名",
     ["如果选择了「自动创建备份副本」选项，旧版本总是保存到备份目录中（见 [路径](00.53-路径.md)）。",
      "备份副本与原文档具有相同的名称，但扩展名为 .BAK。"]),
    ("What file extension do Excellon drill files get?",
     ["Drill files are written in the Excellon format, see [Plotting](04.02-plotting.md).",
      "The drill file is named after the board, with the extension .drl."]),
], ids=["zh", "en"])
def test_a_question_asking_for_a_file_extension_is_answered_first_by_the_unit_naming_one(query, texts):
    """"是什么扩展名" is answered by the unit naming an extension (`.BAK`), within `LEAD` of the best, not by the
    sentences on the backup that name none (office-guide-zh-cn dev f02); a link's target (`….md`) and a file name
    (`foo.R`) name no extension."""
    from lambdarag.skills.evidence import Candidate, Scored, option_first
    from lambdarag.skills.store.records import Hit

    hit = Hit(chunk_id="a#1", source="a.md", text="\n".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 4, 1.0, 1.0) for i, t in enumerate(texts)]
    assert option_first(query, ranking)[0].text == texts[1]
    named = [Scored(Candidate("Run the script foo.R with Rscript.", hit=hit, rank=0), 1.0, 1.0, 1.0), ranking[1]]
    assert option_first(query, named)[0].text == texts[1]


@pytest.mark.parametrize("query, texts, stating", [
    ("When is the journal written out to the data file?",
     ["The journal records every change made to the data file.",
      "The sync command writes the journal to the data file on request.",
      "When the daemon exits, the journal is copied to the data file."],
     "If the option is set, the journal is written to the data file."),
    ("备份数量超过上限以后，程序会怎样？",
     ["备份文件保存在工程目录的 backups 文件夹中。",
      "备份上限设置保留的备份文件数量。",
      "创建新备份时，将删除最旧的备份文件。"],
     "如果备份数量超过上限，则会显示错误对话框。"),
], ids=["en-when", "zh-after"])
def test_a_temporal_question_on_an_event_quotes_the_near_unit_stating_an_event_with_its_result(query, texts, stating):
    """Asked what happens on a condition or event (When is…, 以后…会怎样), an answer whose first unit states none
    quotes second the best unit of its page within `LEAD` stating one with its result (When the daemon exits, …;
    …时，将…), before an undated runner-up nearer the first (kicad-tools-zh-cn dev t05); a first unit stating one
    (If…, …; 如果…，则…), another page's unit and a question asking on no event leave the answer as it was."""
    from lambdarag.skills.evidence import Candidate, Scored, temporal
    from lambdarag.skills.store.records import Hit

    hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), s, 1.0, 1.0) for t, s in zip(texts, (1.0, 0.9, 0.75))]
    assert [s.text for s in temporal(ranking, query=query)] == [texts[0], texts[2]]
    first = Scored(Candidate(stating, hit=hit, rank=0), 1.0, 1.0, 1.0)
    assert [s.text for s in temporal([first, *ranking[1:]], query=query)] == [stating, texts[1]]
    elsewhere = Scored(Candidate(texts[2], hit=Hit(chunk_id="b#1", source="b.md", text=texts[2]), rank=1),
                       0.75, 1.0, 1.0)
    assert [s.text for s in temporal([*ranking[:2], elsewhere], query=query)] == texts[:2]     # another page's
    plain = query.replace("When is", "Is").replace("以后，程序会怎样", "是多少")     # asks on no event
    assert [s.text for s in temporal(ranking, query=plain)] == [texts[0], texts[1]]
