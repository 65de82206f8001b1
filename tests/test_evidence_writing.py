"""How documentation is written, and what the offline answer quotes because of it (skills.evidence, layouts,
neighbours): a glossary entry is one statement, a link's target is not what a line says, the subject of a
comparing line is the side it speaks for, and a document says what it is about before its first heading.
Small synthetic text in English and Chinese, shaped like the Debian corpora's."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.domains import profile_named
from lambdarag.skills.evidence import candidates, ranked, said, shaped
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.store.records import Hit
from tests.test_evidence import blocks, sourced

GENERIC = profile_named("generic")


def units(text: str) -> list[str]:
    return [c.text for c in candidates((Hit(chunk_id="d.md#0", text=text, source="d.md"),), GENERIC)]


@pytest.mark.parametrize("text, unit", [
    ('- "Suggests"\n  - This declares a weak dependency. Many users can do without the packages listed.\n',
     '"Suggests" This declares a weak dependency. Many users can do without the packages listed.'),
    ("- “建议”\n  - 较弱的依赖。这个软件包的大多数用户可能会从中受益，但没有它们也可以有适当的功能。\n",
     "“建议” 较弱的依赖。这个软件包的大多数用户可能会从中受益，但没有它们也可以有适当的功能。"),
], ids=["en", "zh"])
def test_a_term_and_a_two_sentence_definition_are_one_unit_and_a_chinese_term_is_kept(text, unit):
    assert units(text) == [unit]


def test_a_longer_definition_keeps_its_term_on_the_first_sentence_only():
    text = '- "Breaks"\n  - This declares an incompatibility. Upgrade the packages. Or remove them first.\n'
    assert units(text) == ['"Breaks" This declares an incompatibility.', "Upgrade the packages.",
                           "Or remove them first."]


def test_a_links_target_is_not_what_a_unit_says():
    row = ("[ bzip2 ](http://packages.debian.org/sid/bzip2) | [V:161](http://qa.debian.org/popcon.php?packages=bzip2)"
           " | compress utilities")
    found = candidates((Hit(chunk_id="p.md#0", text=f"| {row} |", source="p.md"),), GENERIC)
    assert said(found[0]).count("bzip2") == 1 and "http" not in said(found[0])


@pytest.mark.parametrize("query, labels", [
    ("How does bzip2 differ from gzip when compressing a file?", ("On “bzip2”:", "On “gzip”:")),
    ("bzip2 和 gzip 压缩文件有什么区别？", ("关于「bzip2」：", "关于「gzip」：")),
], ids=["en", "zh"])
def test_a_unit_whose_subject_is_a_side_never_speaks_for_the_other_side_it_names(query, labels):
    hits = sourced(("kernel.md", "| bzip2 | utilities for bz2 files |"),
                   ("tools.md", "| bzip2 foo | compress foo to foo.bz2, better compression than gzip |"),
                   ("tools.md", "| gzip foo | compress foo to foo.gz with the LZ77 coding |"))
    text = extractive_answer(State.of(query, hits=hits, query_type="compare"),
                             Context(resources={"profile": GENERIC}))["answer"]
    bzip2, gzip = blocks(text, *labels)
    assert "utilities for bz2 files" in bzip2, text    # the row keyed by bzip2 says what it is
    own = gzip.split("Between them:")[0].split("两者之间：")[0]
    assert "better compression than gzip" in text and "better compression" not in own, text
    assert "LZ77" in gzip, text


def test_an_overview_point_on_a_document_is_its_opening_when_it_scores_near_its_best():
    hits = (Hit(chunk_id="net.md#text", source="net.md", title="Network", section="", score=1.0,
                text="Debian manages network connections with NetworkManager on desktops.\n"
                     "Wireless networks are listed by the applet."),
            Hit(chunk_id="low.md#text", source="low.md", title="Low level", section="", score=0.9,
                text="For the low level network configuration, use the ip programs of iproute2.\n"
                     "The command ip link lists network devices."),
            Hit(chunk_id="low.md#Tools", source="low.md", title="Low level", section="Tools", score=0.8,
                text="The command ip route lists the network routing table of Debian."))
    query = "Give an overview of network configuration on Debian: NetworkManager and low level ip commands."
    points = shaped("synthesis", ranked(query, hits, GENERIC))
    low = next(p for p in points if p.hit.source == "low.md")
    assert low.text.startswith("For the low level network configuration"), [p.text for p in points]
    assert low.candidate.opening and not next(c for c in candidates(hits, GENERIC)
                                              if c.text.startswith("The command ip route")).opening


def test_an_overview_only_one_document_answers_quotes_what_answers_not_its_opening():
    """A document's opening stands for it among several; when no other document holds a point, the question asks
    what that one says, and its best unit answers (fresh15 maint-guide-en nm05, "After squeeze, what should
    debian/source/format say?", typed synthesis, quoted the page's opening)."""
    from dataclasses import replace

    hits = (Hit(chunk_id="format.md#text", source="format.md", title="Source format", section="", score=1.0,
                text="In the debian/source/format file, there should be a single line indicating the desired format."
                     "\n\nAfter squeeze, it should say either: 3.0 (native) for native Debian packages or 3.0 (quilt) "
                     "for everything else."),
            Hit(chunk_id="log.md#text", source="log.md", title="changelog", section="", score=0.5,
                text="This is a required file, which has a special format."))
    query = "After squeeze, what should debian/source/format say?"
    scores = {"In the debian": 0.64, "After squeeze": 0.9, "This is a": 0.47}
    ranking = sorted((replace(u, score=next(v for k, v in scores.items() if u.text.startswith(k)))
                      for u in ranked(query, hits, GENERIC)), key=lambda u: -u.score)
    assert [u.text[:13] for u in shaped("synthesis", ranking)] == ["After squeeze"]


PIECE_ONE = ('- "Recommends"\n  - This declares a strong, but not absolute, dependency.\n'
             '- "Suggests"\n  - This declares a weak dependency. ')
PIECE_TWO = ("Many users of this package may benefit from the packages listed but can do without them.\n"
             '- "Enhances"\n  - This declares a weak dependency like Suggests but in the opposite direction.')
"""A long list the chunker cut at a sentence end, inside the definition of Suggests."""


def test_a_definition_cut_between_two_pieces_of_a_section_is_read_whole_and_survives_the_check():
    from lambdarag.skills.check import check_answer

    section = "Package dependencies"
    hits = (Hit(chunk_id=f"deps.md#{section}", text=PIECE_ONE, source="deps.md", title="deps", section=section,
                score=1.0),
            Hit(chunk_id=f"deps.md#{section}~2", text=PIECE_TWO, source="deps.md", title="deps", section=section,
                score=0.9))
    whole = '"Suggests" This declares a weak dependency. Many users of this package may benefit'
    assert any(t.startswith(whole) for t in units_of(hits)), units_of(hits)
    text = extractive_answer(State.of("How do Recommends and Suggests differ?", hits=hits, query_type="compare"),
                             Context(resources={"profile": GENERIC}))["answer"]
    _, suggests = blocks(text, "On “Recommends”:", "On “Suggests”:")
    assert whole in suggests, text
    assert check_answer(text, hits).passed, text


def test_a_piece_opening_with_an_item_reads_nothing_of_the_piece_before():
    hits = (Hit(chunk_id="d.md#S", text=PIECE_ONE, source="d.md", section="S"),
            Hit(chunk_id="d.md#S~2", text='- "Enhances"\n  - This declares a reverse weak dependency.', source="d.md",
                section="S"))
    assert '"Enhances" This declares a reverse weak dependency.' in units_of(hits)
    assert not any("Enhances" in t and "Suggests" in t for t in units_of(hits))


def units_of(hits: tuple) -> list[str]:
    return [c.text for c in candidates(hits, GENERIC)]


def test_a_piece_cut_inside_a_code_block_reads_nothing_of_the_piece_before():
    hits = (Hit(chunk_id="v.md#S", text="The options are listed so:\n```\n$ valgrind --help-dyn-options\n  -v -q",
                source="v.md", section="S"),
            Hit(chunk_id="v.md#S~2", text="es --gen-suppressions=all --trace-children\n```\nThey change at run time.",
                source="v.md", section="S"))
    assert not any("valgrind --help-dyn-options" in t and "trace-children" in t for t in units_of(hits))


def test_a_piece_going_on_with_a_paragraph_reads_nothing_of_the_piece_before():
    hits = (Hit(chunk_id="p.md#S", text="Helgrind reports races.\nIts output for this program is short.",
                source="p.md", section="S"),
            Hit(chunk_id="p.md#S~2", text="This often makes it clear which thread failed to lock.", source="p.md",
                section="S"))
    assert candidates(hits, GENERIC)[-1].hit.chunk_id == "p.md#S~2"
    assert "This often makes it clear which thread failed to lock." in units_of(hits)


def test_a_ditto_row_says_nothing_alone_and_a_described_row_stands():
    from lambdarag.skills.evidence import stands

    assert not stands("gpg -o crypt_file.gpg --recipient name --encrypt file | , .", "row")
    assert stands("gpg --verify file | verify clear-signed file", "row")
    assert stands("| 1 | used as the default", "row") and stands("ip addr show", "row")    # one cell: itself


OVERVIEW = "Give an overview of low level network configuration: which ip commands are there?"


@pytest.mark.parametrize("query_type, opened", [("synthesis", True), ("fact", False)])
def test_an_overview_reads_the_opening_of_a_documents_row_and_quotes_it_for_that_document(query_type, opened):
    from lambdarag.domains.corpus import read_corpus
    from lambdarag.skills.context import assemble_context
    from lambdarag.skills.store.corpus import to_hits
    from lambdarag.skills.store.local import LocalBackend
    from tests.conftest import FIXTURES

    corpus = read_corpus(FIXTURES / "debian-reference", domain="generic")
    backend = LocalBackend()
    backend.add(corpus.documents, corpus.chunks)
    low = [c for c in corpus.chunks if c.source.startswith("05.04")]
    row = next(c for c in low if c.id.endswith("operations row 3"))      # | ip route show | display … |
    other = next(c for c in corpus.chunks if c.source.startswith("05.02") and c.section)
    state = State.of(OVERVIEW, hits=to_hits([(row, 1.0), (other, 0.9)], "bm25"), query_type=query_type)
    near = assemble_context.run(state, Context(resources={"index": backend})).neighbours
    assert (low[0].id in {h.chunk_id for h in near}) is opened      # 05.04's text before its first heading
    if opened:
        text = extractive_answer(State.of(OVERVIEW, hits=state.hits, neighbours=near, query_type=query_type),
                                 Context(resources={"profile": GENERIC}))["answer"]
        assert "For the low level network configuration on Linux, use the" in text, text
        assert "ip route show | display" not in text, text


OPTIONS = ("--free-is-write=no|yes [default: no]\n"
           "When enabled, Helgrind treats freeing of heap memory as if the memory was written before the free. "
           "This exposes races where memory is freed by another thread.\n"
           "This functionality is new in Valgrind 3.7.0, and is regarded as experimental. User feedback is welcomed.\n"
           "--track-lockorders=no|yes [default: yes]\n"
           "When enabled, Helgrind performs lock order consistency checking (see [Locks](03.02-locks.md)).\n")


def test_a_version_note_after_the_unit_it_dates_joins_a_temporal_answer_and_a_link_target_is_no_version():
    from lambdarag.skills.evidence import dated

    hits = (Hit(chunk_id="opts.md#text", text=OPTIONS, source="opts.md", title="Helgrind options", score=1.0),)
    query = "In which Valgrind release did Helgrind's --free-is-write option first appear?"
    text = extractive_answer(State.of(query, hits=hits, query_type="temporal"),
                             Context(resources={"profile": GENERIC}))["answer"]
    assert "--free-is-write=no|yes" in text and "new in Valgrind 3.7.0" in text, text
    assert not dated("see [Locks](03.02-locks.md) and 第 6.3 节") and dated("new in Valgrind 3.7.0")


@pytest.mark.parametrize("text, sentence", [
    ("Linux has 8 namespaces (see namespaces(7), unshare(1)).", "Linux has 8 namespaces (see namespaces(7), unshare(1))."),
    ("从内核 5.6 版本起，有 8 种 namespaces (参见 namespaces(7), unshare(1))。",
     "从内核 5.6 版本起，有 8 种 namespaces (参见 namespaces(7), unshare(1))。"),
], ids=["en", "zh"])
def test_a_pointer_in_parentheses_after_a_statement_is_an_aside_not_a_bare_reference(text, sentence):
    from lambdarag.skills.evidence import is_reference

    assert units(text) == [sentence]
    assert is_reference("(see namespaces(7), unshare(1))") and is_reference("参见 namespaces(7)。")


@pytest.mark.parametrize("text, pair, query", [
    ("The use of functions without boundary checks, such as sprintf(3) and strcpy(3), is deprecated. Instead, use "
     "snprintf(3) and strncpy(3).\n\nThe compat file defines the debhelper level. Currently, you should set it to 10.",
     "The use of functions without boundary checks, such as sprintf(3) and strcpy(3), is deprecated. Instead, use "
     "snprintf(3) and strncpy(3).", "What should I use in place of sprintf and strcpy?"),
    ("在 systemd 下，系统日志工具 rsyslogd(8) 可以被卸载。如果安装了它，它会改变它的行为来读取二进制日志数据。\n\n"
     "其它的访问控制见下文。这里讲 namespaces。",
     "在 systemd 下，系统日志工具 rsyslogd(8) 可以被卸载。如果安装了它，它会改变它的行为来读取二进制日志数据。",
     "安装了 rsyslogd 会怎样？"),
], ids=["en", "zh"])
def test_a_sentence_going_on_from_the_one_before_is_quoted_with_it(text, pair, query):
    """"Instead, use snprintf(3)…" or "如果安装了它，…" alone has lost what it is about, and the sentence before
    it only sets the question: the two are one unit (evidence.FOLLOWS), whatever the first one's length; 其它
    (other) is no pronoun."""
    said = units(text)
    assert pair in said, said
    leading = "The prerm script checks that the kernel to remove is not the running one. Therefore, remove it with:"
    first = candidates((Hit(chunk_id="k.md", text=leading, source="k.md"),), GENERIC)[0]
    assert first.text == leading and first.opening    # its document's opening, though it leads in to a command
    other = ["系统日志工具 rsyslogd(8) 可以被卸载。", "如果其它日志工具已安装，就不需要再装它。"]
    assert units("".join(other)) == other                # 其它 (other) in a condition is no pronoun of the one before
    hits = (Hit(chunk_id="d.md#0", text=text, source="d.md", title="d", score=1.0),)
    assert pair in extractive_answer(State.of(query, hits=hits, query_type="fact"),
                                     Context(resources={"profile": GENERIC}))["answer"]


@pytest.mark.parametrize("query", ["Which command lists the users who recently failed to log in?",
                                   "用哪个命令列出最近登录失败的用户？"], ids=["en", "zh"])
def test_a_question_asking_which_command_is_answered_first_by_a_unit_naming_one_by_its_manual_page(query):
    from lambdarag.skills.evidence import Candidate, Scored, option_first

    texts = ["For the full listing of the system users, read the document provided by the base-passwd package.",
             "lastb(1) shows listing of last bad logged in users."]
    hit = Hit(chunk_id="a#1", source="a.md", text="\n".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 4, 1.0, 1.0) for i, t in enumerate(texts)]
    assert option_first(query, ranking)[0].text == texts[1]
    assert option_first("Who provides the list of system users?", ranking)[0].text == texts[0]


@pytest.mark.parametrize("texts", [
    ["If you want to remove a package you maintain, note this in the bug title by prepending ROM.",
     "Note that reportbug will create a title conforming to these rules when you report the bug.",
     "The bug title should be in the form RM: package -- reason, where reason is a short summary."],
    ["删除您维护的软件包时，请在缺陷标题前加上 ROM。", "这会让 ftpmaster 知道删除请求来自维护者。",
     "缺陷标题的格式应当是 RM: 软件包 -- 理由，理由是删除请求的简短说明。"],
], ids=["en", "zh"])
def test_a_fact_answers_second_unit_is_one_that_stands_alone_not_one_referring_back(texts):
    """A sentence about what the text before it said (these rules, 这会…) has lost what that is: of the units
    scoring near the best, the answer's second is one stating its own subject."""
    from lambdarag.skills.evidence import Candidate, Scored, fact

    hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 20, 1.0, 1.0) for i, t in enumerate(texts)]
    assert [s.text for s in fact(ranking)] == [texts[0], texts[2]]
    stated = ranking[:1] + [Scored(Candidate(texts[2], hit=hit, rank=0), 0.5, 1.0, 1.0)]
    assert [s.text for s in fact(ranking[:2] + stated[1:])] == texts[:2]   # none near stands alone: the runner-up


def test_an_option_ending_a_sentence_ends_it_though_an_initial_does_not():
    """`-O.` is an option closing a sentence, not an initial (J. Smith): the next sentence is a unit of its own."""
    from lambdarag.skills.sentences import split_sentences

    assert split_sentences("A reasonable compromise is to use -O. Memcheck then runs faster.") == [
        "A reasonable compromise is to use -O.", "Memcheck then runs faster."]
    assert split_sentences("Pass --all. Then it stops.") == ["Pass --all.", "Then it stops."]
    assert split_sentences("It was written by J. Smith in 2002.") == ["It was written by J. Smith in 2002."]
    assert units("Compile with -g. Memcheck then shows line numbers in its messages.") == [
        "Compile with -g.", "Memcheck then shows line numbers in its messages."]


def test_a_note_templated_onto_several_documents_opens_none_of_them():
    """Chapter pages of a converted guide open with the same note (The rewrite of this tutorial document…): in an
    overview each page is quoted by what it says itself, not by the note."""
    from lambdarag.skills.evidence import diverse

    note = "The rewrite of this tutorial document with updated contents is available as the Guide for Maintainers."
    pages = {"08.00-updating-the-package.md": "After you release a package, you will soon need to update it.",
             "09.00-uploading-the-package.md": "Once you become a developer, you can upload the package yourself."}
    hits = tuple(Hit(chunk_id=f"{source}#", text=f"{note}\n{said}", source=source, title=source[6:-3], score=1.0)
                 for source, said in pages.items())
    found = candidates(hits, GENERIC)
    assert [c.opening for c in found if c.text == note] == [False]
    assert all(c.opening for c in found if c.text in pages.values())
    points = [p.text for p in diverse(ranked("Summarize how a released package is updated and uploaded.", hits,
                                             GENERIC))]
    assert points and note not in points, points


def test_an_overview_point_shares_the_questions_topic_not_only_its_words():
    """For the ways to encrypt data on disks and removable media, a sentence on erasing a disk holds the question's
    words (data, disk, removable) but not its meaning: the embedder puts it far from the question, so it is no
    point of the overview, however well it scores on words; without an embedder every unit counts as on topic."""
    from lambdarag.skills.evidence import Candidate, Scored, diverse

    said = {"crypt.md": ("You can encrypt contents of removable mass devices with dm-crypt/LUKS.", 1.0, 1.0),
            "binary.md": ("There are several ways to completely erase data from an entire hard disk.", 0.95, 0.45),
            "backup.md": ("For data encryption, a disk image is configured with cryptsetup(8).", 0.8, 0.9)}
    ranking = [Scored(Candidate(t, hit=Hit(chunk_id=f"{s}#x", source=s, text=t, section="x"), rank=i), score, 0.3,
                      0.3, meant) for i, (s, (t, score, meant)) in enumerate(said.items())]
    assert [p.hit.source for p in diverse(ranking)] == ["crypt.md", "backup.md"]
    unembedded = [Scored(s.candidate, s.score, s.cover, s.held) for s in ranking]
    assert [p.hit.source for p in diverse(unembedded)] == ["crypt.md", "binary.md", "backup.md"]


@pytest.mark.parametrize("query, texts", [
    ("How long does my key need to be to register?",
     ["Furthermore, you need a key which has been signed by an existing maintainer.",
      "Your key length must be greater than 2048 bits (4096 bits is preferred)."]),
    ("注册时我的密钥需要多长？", ["此外，您需要一把由现有维护者签名的密钥。", "密钥的长度必须大于 2048 位（推荐 4096 位）。"]),
], ids=["en", "zh"])
def test_a_question_asking_a_dimension_is_answered_by_the_unit_stating_it_by_its_noun_and_a_number(query, texts):
    """How long a key must be is said as its length and a number with a unit (2048 bits, 2048 位): the noun counts
    as the question's word, and a unit stating the measure goes first when it scores near the best."""
    from lambdarag.skills.evidence import Candidate, Scored, option_first, signals

    hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
    found = [Candidate(t, hit=hit, rank=0) for t in texts]
    others = [Candidate(t, hit=hit, rank=0) for t in ("Uploads are signed.", "Mail the keyring team.", "上传需要签名。")]
    assert signals(query, found + others, dense=False)["bm25"][1] > 0
    ranking = [Scored(c, 1.0 - i / 4, 1.0, 1.0) for i, c in enumerate(found)]
    assert option_first(query, ranking)[0].text == texts[1]
    assert option_first(query.replace("How long", "Why").replace("多长", "什么"), ranking)[0].text == texts[0]


def test_a_count_is_no_dimension_the_word_number_naming_any_field():
    """How many files: a count is said by the question's own noun (up to 100 files), and --input-fd=<number>
    [default: 0…] states no measure of anything asked."""
    from lambdarag.skills.evidence import Candidate, Scored, dimensions, measure, option_first

    assert dimensions("How many extra suppression files may be given at most?") == []
    assert measure("length").search("--input-fd=<length> [default: 0, stdin] read from") is None
    texts = ["You may use up to 100 extra suppression files.", "--input-fd=<number> [default: 0, stdin] reads input."]
    hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 4, 1.0, 1.0) for i, t in enumerate(texts)]
    assert option_first("How many extra suppression files may be given at most?", ranking)[0].text == texts[0]


def test_a_how_many_question_is_answered_first_by_the_unit_stating_a_number_of_its_noun():
    """How many days: "2, 5 or 10 days" states the count, "a certain number of days, see [Selecting…](06.03-….md)"
    only names it; the digits of a link's target state no amount, and an option's placeholder (--input-fd=<number>)
    no count."""
    from lambdarag.skills.evidence import counted, ranked
    from tests.test_evidence import GENERIC, sourced

    query = "How many days must a package wait in unstable before testing, for each upload urgency?"
    hits = sourced(("05.14-testing.md", "The package must have been available in unstable for a certain number of "
                    "days before testing, see [Selecting the upload urgency](06.03-best-practices.md)."),
                   ("06.03-best-practices.md", "The delays are currently 2, 5 or 10 days, depending on the urgency."))
    assert ranked(query, hits, GENERIC)[0].hit.source == "06.03-best-practices.md"
    assert counted("How many extra suppression files may be given at most?").search(
        "--input-fd=<number> [default: 0, stdin] reads input from a file") is None
    assert counted("How long must a key be?") is None


@pytest.mark.parametrize("query, texts", [
    ("下载好的安装映像要拿什么文件来核对有没有损坏？",
     ["假如从 CD 或 DVD 映像来安装，安装程序会询问您是否需要检测其它的安装介质。", "请检查配置文件是否损坏。",
      "您可以相对 Debian 镜像上的 SHA256SUMS 或 SHA512SUMS 文件来验证下载的文件的完整性。"]),
    ("Which file determines the distribution that my upload targets?",
     ["Uploads to a supported stable release should target their suite name.", "Edit a configuration file first.",
      "The build process extracts this information from the first line of the debian/changelog file."]),
], ids=["zh", "en"])
def test_a_question_asking_which_file_is_answered_first_by_the_unit_naming_one(query, texts):
    """Which file: a unit naming one by a name no word is spelt like (SHA256SUMS 文件, debian/changelog file) goes first
    when it scores near the best; "a configuration file" names none."""
    from lambdarag.skills.evidence import Candidate, Scored, option_first

    hit = Hit(chunk_id="a#1", source="a.md", text=" ".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 8, 1.0, 1.0) for i, t in enumerate(texts)]
    assert option_first(query, ranking)[0].text == texts[2]
    assert option_first(query.replace("Which file", "What").replace("什么文件", "什么"), ranking)[0].text == texts[0]


@pytest.mark.parametrize("texts, ends", [
    (["其中一个这样的工具是 reportbug，该程序的功能是提交 Debian 软件包对应的 bug 报告。", "它默认是使用 exim4 来提交 bug 报告。"],
     ["reportbug", "bug"]),
    (["One such tool is reportbug, which submits bug reports against Debian packages.",
      "It uses exim4 to submit bug reports by default."], ["reportbug", "bug"]),
], ids=["zh", "en"])
def test_a_relation_unit_opening_on_its_subject_names_what_the_sentence_before_it_names(texts, ends):
    """它默认是使用 exim4… (It uses exim4…) relates reportbug to its bug reports through the 它 of the sentence
    before: it is quoted with that one, not left out for naming one end."""
    from lambdarag.skills.evidence import Candidate, Scored, relation

    hit = Hit(chunk_id="a#1", source="a.md", text="但是，这种情况下您可能还要配置工具。" + "".join(texts)
              if not texts[0].isascii() else "Some tools need setting up. " + " ".join(texts))
    ranking = [Scored(Candidate(t, hit=hit, rank=0), 1.0 - i / 100, 0.5, 0.5) for i, t in enumerate(texts)]
    assert [s.text for s in relation(ranking, ends)] == texts


@pytest.mark.parametrize("query", ["Which file does the daemon read when it isn't started as a system service?",
                                   "Which file does the daemon read when it is not started as a system service?"])
def test_a_question_negating_a_word_is_answered_first_by_the_unit_negating_it(query):
    from lambdarag.skills.evidence import negated

    hits = sourced(("start.md", "When the daemon is started as a system service, it reads /etc/tool.conf first."),
                   ("start.md", "When the daemon is not started as a system service, it reads ~/.toolrc first."),
                   ("log.md", "Messages go to the journal unless a log path is set."),
                   ("log.md", "Old messages are rotated every week."),
                   ("net.md", "The port defaults to 8080."))
    assert "~/.toolrc" in ranked(query, hits, GENERIC)[0].text
    assert negated("Which file does the daemon read when it is started as a system service?") is None
    assert negated("Isn't the daemon started as a system service?") is None     # it asks, it negates nothing
    assert negated("contrib 区的软件包和 non-free 区的软件是什么关系？") is None     # a name, not a negation
