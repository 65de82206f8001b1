"""Compare answers on Debian text: which things are the sides, where each is found, and the unit quoted for each.

Texts are sentences of the Debian Reference (tests/fixtures/debian-reference) and the Debian Administrator's
Handbook, as the corpora have them.
"""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.skills import build
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.named import commands, defines_in, named_things, partners
from lambdarag.domains import profile_named
from lambdarag.skills.store.records import Hit
from lambdarag.skills.titles import DocumentNames, Side
from tests.conftest import FIXTURES
from tests.test_evidence import GENERIC, answer, blocks, hits_of, sourced

APT = ("06.02-aptitude-apt-get-and-apt-commands.md",
       "APT is a vast project, whose original plans included a graphical interface. apt is a second command-line "
       "based front end provided by APT which overcomes some design mistakes of apt-get.")
APT_GET = ("06.02-aptitude-apt-get-and-apt-commands.md",
           "Conversely, the public interface of apt-get is well defined and will not change in any backwards "
           "incompatible way.")


def test_a_lower_case_side_is_said_as_the_question_writes_it_not_as_an_acronym():
    text = answer("How does apt differ from apt-get?", sourced(APT, APT_GET), "compare")
    apt, apt_get = blocks(text, "On “apt”:", "On “apt-get”:")
    assert "apt is a second command-line" in apt and "APT is a vast project" not in text, text
    assert "public interface of apt-get" in apt_get, text


def test_a_side_whose_name_is_a_link_is_defined_by_the_sentence_opening_with_it():
    text = answer("What is the difference between sudo and PolicyKit for giving users administrative rights?",
                  hits_of("debian-reference", "04.07"), "compare")
    sudo, policykit = blocks(text, "On “sudo”:", "On “PolicyKit”:")
    assert "sudo(8) is a program designed" in sudo, text
    assert "[PolicyKit](https://en.wikipedia.org/wiki/PolicyKit) is an operating system component" in policykit, text
    assert "[source: 04.07-other-access-controls.md" in policykit


def test_one_sentence_naming_both_sides_is_quoted_once_under_both_names_not_called_missing():
    hits = sourced(("01.04-the-basic-unix-like-work-environment.md",
                    'The choice "/usr/bin/vim.basic" over "/usr/bin/vim.tiny" is my recommendation for newbies since '
                    "it supports syntax highlighting."),
                   ("01.04-the-basic-unix-like-work-environment.md",
                    "Vim can be started with syntax highlighting by setting the syntax option in the vimrc file."))
    for query, label, missing in [("Should I use vim.basic or vim.tiny as a newbie?", "On “vim.basic, vim.tiny”:",
                                   "Not found"),
                                  ("新手该用 vim.basic 还是 vim.tiny？", "关于「vim.basic、vim.tiny」：", "未找到")]:
        text = answer(query, hits, "compare")
        assert label in text and missing not in text, text
        assert text.count("my recommendation for newbies") == 1, text


def test_a_shell_command_never_speaks_for_a_side():
    hits = sourced(("10.01-sharing-copying-and-archiving.md",
                    "```\n$ tar -xvJf archive.tar.xz\n```\n"
                    "tar(1) is the archiver of choice for the tar format, and cpio(1) copies files into and out of "
                    "archives in the cpio format."),
                   ("10.01-sharing-copying-and-archiving.md",
                    "cpio is used by the initramfs of the Linux kernel, and its archive holds the files listed on "
                    "its standard input."))
    text = answer("How does tar differ from cpio?", hits, "compare")
    tar = blocks(text, "On “tar”:", "On “cpio”:")[0]
    assert "$ tar" not in tar and "tar(1) is the archiver" in tar, text


def test_named_documents_are_labelled_by_the_name_each_cited_from_its_own_page_with_no_keyword_verdict():
    apparmor = ("14.04-introduction-to-apparmor.md",
                "AppArmor is a Mandatory Access Control (MAC) system built on Linux's LSM (Linux Security Modules) "
                "interface. The profile applied by the kernel depends on the installation path of the program being "
                "executed. Contrary to SELinux, the rules applied do not depend on the user.")
    selinux = ("14.05-introduction-to-selinux.md",
               "With SELinux, the management of rights is completely different from traditional Unix systems. The "
               "rights of a process depend on its security context.")
    names = ("AppArmor", "SELinux")
    hits = tuple(h.model_copy(update={"title": f"Introduction to {n}"}) for n, h in zip(names, sourced(apparmor, selinux)))
    sides = tuple(Side(name=n, title=h.title, source=h.source) for n, h in zip(names, hits))
    state = State.of("How do AppArmor and SELinux differ in what decides a process's rights?", hits=hits,
                     query_type="compare", sides=sides)
    text = extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]
    first, second = blocks(text, "On “AppArmor”:", "On “SELinux”:")
    assert "[source: 14.04-introduction-to-apparmor.md" in first and "[source: 14.05-introduction-to-selinux.md" in \
        second.split("\n")[1], text
    assert "stresses" not in text and "侧重" not in text
    named = extractive_answer(state.model_copy(update={"sides": ()}), Context(resources={"profile": GENERIC}))["answer"]
    assert "[source: 14.05-introduction-to-selinux.md" in blocks(named, "On “AppArmor”:", "On “SELinux”:")[1], named


def test_a_side_resolved_to_a_page_its_title_does_not_name_is_a_named_thing_instead():
    hits = sourced(APT, APT_GET, ("06.09-automatic-upgrades.md", "The last source of interactions, and the hardest "
                                  "to get rid of, is the configuration scripts run by dpkg."))
    sides = (Side(name="apt", title="Automatic Upgrades", source="06.09-automatic-upgrades.md"),
             Side(name="apt-get", title="aptitude, apt-get, and apt Commands", source=APT[0]))
    state = State.of("How does apt differ from apt-get?", hits=hits, query_type="compare", sides=sides)
    text = extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]
    assert "Automatic Upgrades" not in text and "apt is a second command-line" in blocks(text, "On “apt”:")[0], text


def test_a_titles_command_names_its_page_and_a_hyphenated_name_may_be_said_with_a_space():
    documents = {s: {"source": s, "title": t} for s, t in [
        ("09.07-scheduling-tasks-with-cron-and-atd.md", "Scheduling Tasks with cron and atd"),
        ("09.08-scheduling-asynchronous-tasks-anacron.md", "Scheduling Asynchronous Tasks: anacron"),
        ("06.03-the-apt-cache-command.md", "The apt-cache Command"),
        ("06.04-the-apt-file-command.md", "The apt-file Command"),
        ("14.04-introduction-to-apparmor.md", "Introduction to AppArmor"),
        ("14.05-introduction-to-selinux.md", "Introduction to SELinux"),
        ("man/update-alternatives.md", "update-alternatives")]}
    names = DocumentNames(documents, [])
    for query, sources in [
            ("Compare cron and anacron: which one should I use on a laptop?", ["09.07", "09.08"]),
            ("apt-cache or apt-file: which one finds the package that ships a given file?", ["06.03", "06.04"]),
            ("How do AppArmor and SELinux differ?", ["14.04", "14.05"]),
            ("What does update alternatives do?", ["man/update-alternatives.md"])]:
        assert [s.source[:len(sources[0]) if len(sources) > 1 else None] for s in names.named(query)] == sources
    assert names.named("How do I schedule tasks at night?") == ()     # an everyday word of a title names nothing


def test_a_word_most_documents_hold_names_no_document_even_as_one_documents_heading():
    # 分区 is one page's heading in an installation guide whose pages all speak of partitions: "是只分一个 / 分区好，
    # 还是把 /home 单独分出来好" compares two schemes, not that page (install-guide-zh-cn test c05)
    from lambdarag.skills.store.corpus import Chunk

    pages = [("60.04-preseed.md", "预置文件的内容", "分区", "d-i partman-auto/method string lvm，预置分区方案")]
    pages += [(f"66.{i:02}-page.md", f"第{i}页", "", f"第{i}页讲的是分区和挂载点") for i in range(1, 12)]
    pages += [("05.01-boot.md", "引导安装程序", "LVM 卷组", "引导参数")]
    documents = {s: {"source": s, "title": t} for s, t, _, _ in pages}
    chunks = [Chunk(id=s, doc_id=s, text=x, source=s, title=t, section=h) for s, t, h, x in pages]
    names = DocumentNames(documents, chunks)
    assert names.named("新手装系统，是只分一个 / 分区好，还是把 /home 单独分出来好？") == ()
    assert [s.source for s in names.named("LVM 卷组和普通分区有什么区别？")] == ["05.01-boot.md"]
    small = DocumentNames(documents, chunks[:4])        # in a handful of pages a shared word still names its page
    assert [s.source for s in small.named("新手装系统，是只分一个 / 分区好，还是把 /home 单独分出来好？")] == ["60.04-preseed.md"]


def test_a_name_inside_a_longer_word_does_not_make_it_a_subject_word():
    # every page says "details", so counting "tails" inside it made Tails no name: "Compare Devuan with Tails"
    # lost its Tails side (handbook-en dev hc13, round 19's merged tree)
    from lambdarag.skills.store.corpus import Chunk

    pages = [("107.07-tails.md", "Tails", "", "Tails OS aims at providing a live system that preserves anonymity.")]
    pages += [(f"02.{i:02}-page.md", f"Page {i}", "", f"See the details of step {i}.") for i in range(1, 13)]
    documents = {s: {"source": s, "title": t} for s, t, _, _ in pages}
    chunks = [Chunk(id=s, doc_id=s, text=x, source=s, title=t, section=h) for s, t, h, x in pages]
    names = DocumentNames(documents, chunks)
    assert [s.source for s in names.named("Compare Devuan with Tails: what is each one for?")] == ["107.07-tails.md"]


def test_a_command_named_in_a_table_cell_or_as_a_manual_page_is_a_side():
    hits = sourced(("01.04-the-basic-unix-like-work-environment.md",
                    '| bzip2 foo | compress "foo" to create "foo.bz2" using the Burrows-Wheeler block sorting text '
                    "compression algorithm, and Huffman coding (better compression than gzip) |"),
                   ("10.01-sharing-copying-and-archiving.md", "The compressed files are read with zcat(1) and "
                    "gzip(1) handles the .gz files."))
    assert commands("How does bzip2 differ from gzip when compressing a file?", hits) == ["bzip2", "gzip"]
    assert commands("How does compressing differ from archiving a file?", hits) == []


def test_a_word_said_as_the_head_of_an_indefinite_noun_phrase_is_no_partner():
    """"marking a message and tagging messages": the connective joins `message` to the side tagging, but "a message"
    is a common noun, no side (mutt-manual-en dev c06 labelled a block `message`); "a cron job or a timer" still pairs
    cron with timer."""
    assert partners("What is the difference between marking a message and tagging messages?", ["marking", "tagging"],
                    "message, tagging") == []
    assert partners("Should I use cron or a timer?", ["cron"], "cron, timer") == []
    assert partners("Should I use cron or timer?", ["cron"], "cron, timer") == ["timer"]


def test_a_named_thing_no_document_resolves_keeps_a_place_in_the_evidence(tmp_path, monkeypatch):
    from lambdarag.domains.corpus import build_index
    from lambdarag.skills.store.corpus import to_hits

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    index = build_index(FIXTURES / "debian-reference", "debian-slice", dense=False, progress=False, domain="generic")
    crowded = to_hits(index.bm25("sudo group password root", 6), "bm25")
    assert not any("PolicyKit" in h.text for h in crowded[:3])
    state = State.of("How do sudo and PolicyKit differ?", hits=crowded, sides=())
    ctx = Context(resources={"index": index, "profile": profile_named("generic")})
    out = build("side_search", {}).run(state, ctx)
    assert any("PolicyKit" in h.text for h in out.hits[:3]), [h.text[:60] for h in out.hits[:3]]


@pytest.mark.parametrize("hit", [Hit(chunk_id="x#0", text="x", source="x.md", score=1.0)])
def test_no_side_and_no_named_thing_keeps_the_ranking(hit):
    state = State.of("How are these two configured differently?", hits=(hit,), sides=())
    out = build("side_search", {}).run(state, Context(resources={"index": None, "profile": GENERIC}))
    assert out.hits == (hit,)


def test_a_hyphenated_page_is_the_side_a_question_names_with_a_space():
    hits = sourced(("apt-get.md", "apt-get - APT package handling utility -- command-line interface"),
                   ("apt-cache.md", "apt-cache - query the APT cache"))
    hits = tuple(h.model_copy(update={"title": h.source.removesuffix(".md") + "(8)"}) for h in hits)
    sides = tuple(Side(name=n, title=h.title, source=h.source) for n, h in zip(("apt get", "apt cache"), hits))
    state = State.of("How does apt get differ from apt cache?", hits=hits, query_type="compare", sides=sides)
    text = extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]
    get, cache = blocks(text, "On “apt get”:", "On “apt cache”:")
    assert "APT package handling utility" in get and "[source: apt-get.md" in get, text
    assert "query the APT cache" in cache and "[source: apt-cache.md" in cache, text


def statute_answer(query: str, *statutes: tuple[str, str, str]) -> str:
    """Returns the statute pack's offline compare answer over one hit per (source, title, text), each a side."""
    from lambdarag.domains.prc_statutes import StatuteProfile

    hits = tuple(Hit(chunk_id=f"{s}#1", text=t, source=s, title=n, section="", score=1.0 - i / 10)
                 for i, (s, n, t) in enumerate(statutes))
    sides = tuple(Side(name=n, title=n, source=s) for s, n, _ in statutes)
    state = State.of(query, hits=hits, query_type="compare", sides=sides)
    return extractive_answer(state, Context(resources={"profile": StatuteProfile()}))["answer"]


def test_a_statute_side_quotes_the_paragraph_saying_the_aspects_strongest_cue_first_stated():
    a = ("行政法规/甲船舶条例(2017-03-01).md", "甲船舶条例",
         "第四条 县级以上人民政府环境保护部门负责组织协调本条例的实施，并主管港区水域外的船舶管理工作。\n\n"
         "国家渔港监督管理部门主管渔港水域的船舶管理工作，负责监督渔业水域。\n\n"
         "前两款所列部门，简称“甲船舶管理的主管部门”。")
    b = ("行政法规/乙船舶条例(2018-03-09).md", "乙船舶条例",
         "第四条 海事管理机构依照本条例规定具体负责乙船舶管理的监督管理工作。\n\n"
         "国务院交通运输主管部门主管所辖港区水域内乙船舶的管理工作。")
    text = statute_answer("甲船舶条例和乙船舶条例的主管部门有什么不同？", a, b)
    first, second = blocks(text, "《甲船舶条例》", "《乙船舶条例》")
    assert "县级以上人民政府环境保护部门负责组织协调" in first, text    # 主管 before 负责, first paragraph first
    assert "国务院交通运输主管部门主管所辖港区" in second.splitlines()[0], text  # 主管 over a higher-ranked 负责


def test_a_statute_aspect_no_side_states_gets_no_heading_and_no_keyword_verdict_follows_the_quotes():
    a = ("行政法/甲安全法(2021-04-29).md", "甲安全法",
         "第三十八条 在保障海上生命安全和防治船舶污染方面，船长有权独立作出决定。\n\n"
         "第四条 国务院交通运输主管部门主管全国海上交通安全工作。")
    b = ("行政法/乙防治法(2017-06-27).md", "乙防治法",
         "第九条 县级以上人民政府环境保护主管部门对水污染防治实施统一监督管理。\n\n"
         "第五十九条 从事海洋航运的船舶进入内河和港口的，应当遵守内河的船舶污染物排放标准。")
    text = statute_answer("甲安全法与乙防治法在船舶管理方面有何异同？", a, b)
    assert "【立法目的】" not in text and "【适用范围】" not in text, text    # no unit says 为了…制定本 or 适用本
    assert "【主管部门】" in text and "国务院交通运输主管部门主管全国" in text, text   # both state who is in charge
    # what each side "stresses" as a list of words (侧重县级、以上、人民政府) is no sentence a reader can use
    assert "侧重" not in text and "不同：" not in text and "相同：" not in text, text
    assert "船长有权" not in text, text      # what no aspect asks is not quoted under an aspect's heading


@pytest.mark.parametrize("query, pairs, label, quoted, other", [
    ("How does apt differ from apt-get?",
     [("06.02-aptitude-apt-get-and-apt-commands.md", "apt is a second command-line based front end provided by APT "
       "which overcomes some design mistakes of apt-get. apt-get is the first front end, command-line based, which "
       "was developed within the project. The default behavior of apt has been improved for interactive use. "
       "Conversely, the public interface of apt-get is well defined and will not change in any backwards "
       "incompatible way.")],
     "On “apt-get”:", "Conversely, the public interface of apt-get", "On “apt”:"),
    ("ssh 和 telnet 相比好在哪里？",
     [("06.03-服务器远程访问和工具-ssh.md", "ssh 是安全的远程登录程序，用于登录远程主机。不像 telnet 命令，ssh 命令不会在遇到 "
       "telnet 的退出字符时停止。"), ("06.06-其它网络应用客户端.md", "telnet 是 TELNET 协议的客户端程序。")],
     "关于「ssh」：", "不像 telnet 命令", "关于「telnet」："),
])
def test_a_side_quotes_its_definition_and_the_unit_setting_it_against_the_other_side_follows_between_them(
        query, pairs, label, quoted, other):
    text = answer(query, sourced(*pairs), "compare")
    between = "Between them:" if query.isascii() else "两者之间："
    assert between in text and quoted in text.split(between, 1)[1], text
    assert quoted not in text.split(between, 1)[0], text    # in no side's block: it speaks from both sides


def on_their_pages(query: str, apparmor: tuple[str, str], selinux: tuple[str, str]) -> str:
    """Returns the compare answer of `query` with AppArmor and SELinux as document sides, each page titled by it."""
    hits = tuple(h.model_copy(update={"title": f"Introduction to {n}"})
                 for n, h in zip(("AppArmor", "SELinux"), sourced(apparmor, selinux)))
    sides = tuple(Side(name=n, title=h.title, source=h.source) for n, h in zip(("AppArmor", "SELinux"), hits))
    state = State.of(query, hits=hits, query_type="compare", sides=sides)
    return extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]


def test_a_page_sentence_contrary_to_the_other_side_speaks_for_the_page_not_for_the_side_it_names():
    apparmor = ("14.04-introduction-to-apparmor.md", "AppArmor is a Mandatory Access Control (MAC) system built on "
                "Linux's LSM interface. Contrary to SELinux, the rules applied do not depend on the user.")
    selinux = ("14.05-introduction-to-selinux.md", "SELinux (Security Enhanced Linux) is a Mandatory Access Control "
               "system built on Linux's LSM interface.")
    text = on_their_pages("How do AppArmor and SELinux differ in what decides a process's rights?", apparmor, selinux)
    first, second = blocks(text, "On “AppArmor”:", "On “SELinux”:")
    assert "Contrary to SELinux" in text and "Contrary to SELinux" not in second.split("Between them:")[0], text


def test_a_conversely_after_a_sentence_on_the_same_side_sets_nothing_against_the_other():
    text = answer("Compare cron and anacron: which one should I use on a laptop?", sourced(
        ("09.07-scheduling-tasks-with-cron-and-atd.md", "cron is the daemon responsible for executing scheduled and "
         "recurring commands. To allow a few users to use cron, list them in /etc/cron.allow. Conversely, to only "
         "block one or two troublemakers, you could write their username in /etc/cron.deny."),
        ("09.08-scheduling-asynchronous-tasks-anacron.md", "anacron is the daemon that completes cron for computers "
         "that are not on at all times.")), "compare")
    assert "cron is the daemon responsible" in blocks(text, "On “cron”:", "On “anacron”:")[0], text


def test_on_its_own_page_a_side_quotes_the_unit_stating_the_compared_aspect_over_one_naming_it():
    apparmor = ("14.04-introduction-to-apparmor.md", "AppArmor is a Mandatory Access Control (MAC) system built on "
                "Linux's LSM interface. The profile applied by the kernel depends on the installation path of the "
                "program being executed.")
    selinux = ("14.05-introduction-to-selinux.md", "With SELinux, the management of rights is completely different "
               "from traditional Unix systems. The rights of a process depend on its security context.")
    text = on_their_pages("How do AppArmor and SELinux differ in what decides a process's rights?", apparmor, selinux)
    assert "The rights of a process depend on its security context" in blocks(text, "On “SELinux”:")[0], text
    plain = on_their_pages("How do AppArmor and SELinux differ?", apparmor, selinux)
    assert "AppArmor is a Mandatory Access Control" in blocks(plain, "On “AppArmor”:", "On “SELinux”:")[0], plain


def test_a_side_opening_the_question_is_joined_to_its_pair_by_the_connective():
    hits = sourced(("05.01-overview.md", "Cachegrind simulates how your program interacts with a machine's cache "
                    "hierarchy."), ("06.01-overview.md", "Callgrind is a profiling tool that records the call history "
                    "among functions in a program's run as a call-graph."))
    text = answer("Cachegrind or Callgrind: which one records the call graph of my program?", hits, "compare")
    cache, call = blocks(text, "On “Cachegrind”:", "On “Callgrind”:")
    assert "Cachegrind simulates" in cache and "Callgrind is a profiling tool" in call, text
    assert partners("Exim4 vs Postfix: which is the default?", ["Postfix"]) == ["Exim4"]
    assert partners("How do you and Postfix compare?", ["Postfix"]) == []     # a stop word is no side


def test_each_side_quotes_what_defines_it_a_bracketed_gloss_or_a_table_row_keyed_by_it():
    text = answer("NFS vs Samba: what does each one share files with?", sourced(
        ("11.04-nfs-file-server.md", "NFS shares are mounted with the nfs-common package."),
        ("11.04-nfs-file-server.md", "NFS (Network File System) is a protocol allowing remote access to a filesystem "
         "through the network."),
        ("11.05-samba.md", "Samba is a suite of tools handling the SMB protocol on Linux.")), "compare")
    assert "NFS (Network File System) is a protocol" in blocks(text, "On “NFS”:", "On “Samba”:")[0], text
    rows = answer("How do screen and tmux differ as terminal multiplexers?", sourced(
        ("09.01-the-console-tips.md", "| ^A ? | show a help screen (display key bindings) |"),
        ("09.01-the-console-tips.md", "| [ screen ](http://packages.debian.org/sid/screen) | V:91 | terminal "
         "multiplexer with VT100/ANSI terminal emulation |"),
        ("09.01-the-console-tips.md", "| [ tmux ](http://packages.debian.org/sid/tmux) | V:39 | terminal multiplexer "
         "alternative |")), "compare")
    assert "VT100/ANSI terminal emulation" in blocks(rows, "On “screen”:", "On “tmux”:")[0], rows


def test_the_first_unit_of_a_sides_own_page_or_heading_speaks_for_it_though_it_does_not_repeat_the_name():
    pages = sourced(("06.05-测试版-包含什么.md", "在 unstable 中经过了一定测试的软件包会进入“testing”目录。"),
                    ("06.06-不稳定版-包含什么.md", "“unstable”目录包含了当前处于开发中的系统的快照。我们欢迎用户使用和测试"
                     "这些软件包。使用“不稳定版”的优点是您可以一直跟随最新技术。"))
    pages = tuple(h.model_copy(update={"title": t}) for h, t in zip(pages, ("“测试版”包含什么？", "“不稳定版”包含什么？")))
    text = answer("“测试版”和“不稳定版”有什么不同？", pages, "compare")
    assert "“unstable”目录包含了当前处于开发中的系统的快照" in blocks(text, "关于「不稳定版」：")[0], text
    heading = sourced(("08.01-管理程序.md", "## dpkg\n这是主要的软件包管理程序。dpkg 支持很多选项。"),
                      ("08.01-管理程序.md", "## APT\nAPT 是高级包管理工具，提供了 apt-get 程序。"))
    text = answer("dpkg 和 APT 有什么区别？", heading, "compare")
    assert "这是主要的软件包管理程序" in blocks(text, "关于「dpkg」：", "关于「APT」：")[0], text


def test_a_link_alone_in_a_list_item_is_the_term_its_nested_item_defines():
    hit = sourced(("01.02-unix-like-filesystem.md", "## Links\n- [Hard link](https://en.wikipedia.org/wiki/Hard_link)"
                   "\n  - Duplicate name for an existing file\n- [Symbolic link or symlink](https://en.wikipedia.org/"
                   "wiki/Symbolic_link)\n  - Special file that points to another file by name\n"))
    text = answer("What is the difference between a hard link and a symbolic link?", hit, "compare")
    hard, symbolic = blocks(text, "On “hard link”:", "On “symbolic link”:")
    assert "Duplicate name for an existing file" in hard and "points to another file by name" in symbolic, text


def test_a_sides_defining_chunk_outside_the_ranking_is_searched_for_on_its_own(tmp_path, monkeypatch):
    from lambdarag.domains.corpus import build_index
    from lambdarag.skills.sides import defining_ranking

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "massif-usage.md").write_text("# Using Massif\n" + "Run Massif on the program. " * 3
                                            + "Massif output is read with ms_print.\n", encoding="utf-8")
    (folder / "overview.md").write_text("# Overview\nThe tools differ.\n- Massif is a heap profiler. It measures how "
                                        "much heap memory your program uses.\n", encoding="utf-8")
    index = build_index(folder, "tools", dense=False, progress=False, domain="generic")
    assert [h.source for h in defining_ranking(index, "Massif", None, 8)] == ["overview.md"]


def test_two_lower_case_words_a_connective_joins_are_sides_when_the_text_says_both():
    assert partners("What sets iptables and nftables apart?", [], "iptables rules; nftables tables") == [
        "iptables", "nftables"]
    assert partners("What sets iptables and nftables apart?", [], "iptables rules") == []
    assert partners("Is it better to compress or to encrypt?", [], "compress, to encrypt") == []   # no pair of words
    assert partners("Which tools schedule tasks, both recurring and one-off?", ["one-off"], "recurring one-off") == []


def test_a_chinese_term_ending_in_a_sides_name_glosses_no_definition_of_it():
    text = answer("软件包的“依赖”和“推荐”有什么不同？", sourced(
        ("07.10-预依赖-是什么意思.md", "“预依赖（Pre-Depend）”是一种特殊的依赖关系。"),
        ("07.09-依赖-推荐.md", "如果运行软件包 A 前必须先安装软件包 B，那么 A 依赖（depend）B。如果大多数用户不会愿意安装软件包 A，"
         "那么 A 推荐（recommend）B。")), "compare")
    assert "A 依赖（depend）B" in blocks(text, "关于「依赖」：", "关于「推荐」：")[0], text


@pytest.mark.parametrize("text, name, says", [
    ("NFS (Network File System) is a protocol allowing remote access.", "NFS", True),
    ("| [ tmux ](http://packages.debian.org/sid/tmux) | terminal multiplexer alternative |", "tmux", True),
    ("There are minor tools: Lackey is an example tool; and Nulgrind is the minimal tool.", "Lackey", True),
    ("dpkg 程序员手册和 Debian 政策文档。", "dpkg", False),
    ("After running this program under Massif, the output begins.", "Massif", False),
    ("| unstable | 1 | 2 |", "unstable", False),        # a row of bare names and numbers says nothing of it
    ("| unstable | sid | 2 |", "unstable", False),
    ("| tmux | 终端复用器 |", "tmux", True),
])
def test_a_text_defines_a_name_where_a_unit_or_clause_opens_with_it_before_a_copula_a_colon_or_a_cell(text, name,
                                                                                                      says):
    assert defines_in(text, name) is says


def test_a_chinese_side_is_the_latin_name_with_its_kind_and_a_name_qualifying_it_through_de_is_none():
    assert named_things("Debian 计划和自由软件基金会的 GNU 计划有什么异同？", [], profile_named("generic")) == [
        "Debian 计划", "GNU 计划"]
    assert named_things("dpkg 和 APT 有什么区别？", [], profile_named("generic")) == ["dpkg", "APT"]


def test_a_statute_side_with_no_unit_stating_the_aspect_is_said_missing_not_quoted_under_its_heading():
    a = ("行政法/甲安全法(2021-04-29).md", "甲安全法",
         "第二条 在中华人民共和国管辖海域内从事航行、停泊、作业以及其他与海上交通安全有关的活动，适用本法。")
    b = ("行政法/乙防治法(2017-06-27).md", "乙防治法",
         "第九条 交通主管部门的海事管理机构对船舶污染水域的防治实施监督管理。")
    text = statute_answer("甲安全法与乙防治法的适用范围有何不同？", a, b)
    scope = text.split("【适用范围】", 1)[1]
    assert "适用本法" in scope and "未找到依据：《乙防治法》关于适用范围" in scope, text
    assert "海事管理机构对船舶污染水域" not in scope, text    # who supervises is no scope: not under its heading


def test_a_title_word_inside_a_path_names_no_page():
    documents = {s: {"source": s, "title": t} for s, t in [
        ("03.00-modifying-the-source.md", "Modifying the source"),
        ("05.14-package-source-lintian-overrides.md", "{package.,source/}lintian-overrides")]}
    names = DocumentNames(documents, [])
    assert names.named("How does package.lintian-overrides differ from source/lintian-overrides?") == ()
    assert [s.source for s in names.named("Where is the source of a package?")] == ["03.00-modifying-the-source.md"]


def test_a_chinese_side_ends_with_the_head_it_shares_with_the_other_side():
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("图形安装程序和文本安装程序用起来有什么不同？") == ("图形安装程序", "文本安装程序")
    assert query_entities("硬链接和符号链接有什么区别？") == ("硬链接", "符号链接")


def test_a_chinese_side_ends_before_an_adverb_of_the_question():
    # kicad-pcb-zh-cn dev c02: the second side was 埋孔到底, called missing beside the sentence defining 埋孔
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("盲孔和埋孔到底有什么区别？") == ("盲孔", "埋孔")
    assert query_entities("进程和线程究竟有什么不同？") == ("进程", "线程")


def test_an_english_side_drops_a_shared_action_but_keeps_a_shared_command_word():
    # texts write "declares Breaks", never "declaring Breaks"; but they write "apt purge", the command's own name
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("What is the difference between declaring Breaks and declaring Conflicts?") == (
        "Breaks", "Conflicts")
    assert query_entities("What is the difference between apt remove and apt purge?") == ("apt remove", "apt purge")


def test_two_actions_done_to_one_object_are_the_sides():
    # mutt-manual-en dev c06: "marking a message" and "tagging messages" were both called missing; the text says
    # "Message marking is…" and "tagging"
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("What is the difference between marking a message and tagging messages?") == (
        "marking", "tagging")
    assert query_entities("What is the difference between signing a file and encrypting the file?") == (
        "signing", "encrypting")
    assert query_entities("What is the difference between signing a file and encrypting a mail?") == (
        "signing a file", "encrypting a mail")


def test_asking_whether_two_things_are_the_same_names_both_as_sides():
    """"Are A and B the same thing?" compares A with B, as "between A and B" does: each side is its noun phrase
    without the article (configuration file, not configuration; policy-en dev c06 quoted a side labelled
    configuration)."""
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("Aren't a configuration file and a conffile the same thing?") == (
        "configuration file", "conffile")
    assert query_entities("Are the stable suite and the testing suite equivalent?") == ("stable suite", "testing suite")
    assert query_entities("Is a dead key and a compose key interchangeable here?") == ("dead key", "compose key")


SALVAGING = ("05.12-package-salvaging.md",
             "Package salvaging is the process by which one attempts to save a package that, while not officially "
             "orphaned, appears poorly maintained or completely unmaintained. You should close the salvage bug in the "
             "changelog. If you only want to fix certain things, but not take over the package, you must use the NMU "
             "process, even if the package would be eligible for salvaging.")
NMUS = ("05.11-non-maintainer-uploads-nmus.md",
        "Receiving an NMU on a package is not a bad thing; it just means that the package is interesting enough for "
        "other people to work on it.")


def test_a_question_word_a_text_opens_a_clause_with_is_no_command():
    hits = sourced(("06.08-common-packaging-situations.md", "should, except where impossible for legal reasons, "
                    "preserve the entire building and portability infrastructure provided by the upstream author."))
    assert commands("When should I do an NMU rather than a source-only upload?", hits) == []


def test_the_two_clauses_around_rather_than_each_give_a_side():
    hits = sourced(SALVAGING, NMUS)
    assert named_things("When should I salvage a package rather than just do an NMU on it?", hits, GENERIC) == [
        "salvage", "NMU"]
    assert named_things("Why use tar instead of cpio for backups?", (), GENERIC) == ["tar", "cpio"]


def test_a_verb_side_is_named_in_another_form_by_the_sentence_relating_the_sides():
    text = answer("When should I salvage a package rather than just do an NMU on it?", sourced(SALVAGING, NMUS),
                  "compare")
    salvage, nmu, between = blocks(text, "On “salvage”:", "On “NMU”:", "Between them:")
    assert "05.12-package-salvaging.md" in salvage and "05.11-non-maintainer-uploads-nmus.md" in nmu, text
    assert "eligible for salvaging" in between, text


def test_a_cross_reference_in_brackets_after_a_latin_name_is_no_gloss_defining_it():
    text = answer("What does piuparts test that lintian does not?", sourced(
        ("01.02-package-lint-tools.md", "piuparts is the .deb package installation, upgrading, and removal testing "
         "tool."),
        ("07.05-interacting-with-prospective-debian-deve.md", "Run lintian (see [lintian](01.02-package-lint-tools.md))."
         " It will catch many common problems."),
        ("01.02-package-lint-tools.md", "lintian dissects Debian packages and emits information about bugs and policy "
         "violations.")), "compare")
    assert "lintian dissects Debian packages" in blocks(text, "On “piuparts”:", "On “lintian”:")[1], text


def test_a_name_said_twice_after_two_words_makes_two_kinds_of_it_the_sides():
    hits = sourced(("05.11-non-maintainer-uploads-nmus.md", "The full name of an NMU is source NMU. There is also another "
                    "type, namely the binary-only NMU, or binNMU."))
    assert named_things("How does a binary-only NMU differ from a source NMU?", hits, GENERIC) == [
        "binary-only NMU", "source NMU"]
    text = answer("How does a binary-only NMU differ from a source NMU?", hits, "compare")
    assert "On “binary-only NMU”:" in text and "On “source NMU”:" in text, text


@pytest.mark.parametrize("query, texts, mta, mda", [
    ("邮件系统里的 MTA 和 MDA 各管什么？",
     ["在邮件系统里，如果使用 exim4 作为 MTA，MTA 管理 /etc/email-addresses 里的条目。",
      "然后是 Mail Transfer Agent (MTA)，用来将邮件从一台计算机传递到另一台。",
      "最后是 Mail Delivery Agent (MDA)，用于将收到的邮件投递到用户的收件箱。"], "关于「MTA」：", "关于「MDA」："),
    ("What do the MTA and the MDA of a mail system each do?",
     ["If the mail system uses exim4 as its MTA, the MTA can add an entry to /etc/email-addresses.",
      "Then comes the Mail Transfer Agent (MTA), which passes mail from one computer to another.",
      "Last comes the Mail Delivery Agent (MDA), which puts received mail into the user's inbox."], "On “MTA”:",
     "On “MDA”:")], ids=["zh", "en"])
def test_a_unit_spelling_an_acronym_side_out_defines_it(query, texts, mta, mda):
    """然后是 Mail Transfer Agent (MTA)，用来… introduces MTA though it opens with 然后是 (Then comes…); a unit only
    using the name (如果使用 exim4 作为 MTA…) says nothing of what it is."""
    text = answer(query, sourced(*(("08.04-mail.md", t) for t in texts)), "compare")
    assert "Mail Transfer Agent (MTA)" in blocks(text, mta, mda)[0], text


@pytest.mark.parametrize("alike", [
    "固件加载操作系统的方式在经典 BIOS 和原生 UEFI 之间完全不同。",
    "The way firmware loads a system is completely different in classic BIOS and native UEFI."], ids=["zh", "en"])
def test_the_unit_between_the_sides_is_one_saying_how_they_compare(alike):
    """Of the units naming both sides and scoring near the best of them, 在经典 BIOS 和原生 UEFI 之间完全不同 (completely
    different in…) says how they compare; a settings menu named after both does not. Far below it, it is not."""
    from lambdarag.skills.evidence import Candidate, Scored
    from lambdarag.skills.layouts import naming_all

    hit = Hit(chunk_id="a#1", source="a.md", text="")
    menu = "系统提供了 BIOS/UEFI 设置菜单，通过它可以配置 BIOS/UEFI。"
    sides = [("BIOS", ()), ("UEFI", ())]
    ranking = [Scored(Candidate(t, hit=hit, rank=0), score, 0.5, 0.5) for t, score in ((menu, 1.0), (alike, 0.9))]
    assert [s.text for s in naming_all(ranking, sides, set())] == [alike]
    far = [ranking[0], Scored(ranking[1].candidate, 0.5, 0.5, 0.5)]
    assert [s.text for s in naming_all(far, sides, set())] == [menu]


def test_a_name_glued_to_a_prefix_is_one_kind_of_the_name_said_after_another_word():
    """binNMU and source NMU are the sides, not NMU (inside binNMU) and source (a command some hit opens with)."""
    hits = sourced(("05.11-non-maintainer-uploads-nmus.md", "source is the package the NMU rebuilds. A binNMU is also a "
                    "package upload by someone other than the package's maintainer."))
    assert named_things("How is a binNMU different from a normal source NMU?", hits, GENERIC) == [
        "binNMU", "source NMU"]


def test_a_name_inside_a_hyphenated_side_is_placed_where_it_is_said_on_its_own():
    """The `stable` of "…to stable users" is no side between stable-updates and stable-backports: placed where
    stable-updates opens, it was paired with stable-backports by the "and" after it."""
    hits = sourced(("05.05-picking-a-distribution.md", "stable is the distribution users run. Updates reach stable "
                    "users through the stable-updates suite."))
    assert named_things("How do stable-updates and stable-backports differ in what they deliver to stable users?",
                        hits, GENERIC) == ["stable-updates", "stable-backports"]


@pytest.mark.parametrize("query, piuparts, lintian", [
    ("What does piuparts test that lintian does not?", "On “piuparts”:", "On “lintian”:"),
    ("piuparts 测试哪些 lintian 不测试的内容？", "关于「piuparts」：", "关于「lintian」："),
], ids=["en", "zh"])
def test_a_sides_quote_is_the_unit_saying_it_does_what_the_question_asks_of_it_over_one_defining_it(
        query, piuparts, lintian):
    """What piuparts tests is said by "piuparts tests that…" (piuparts 测试…), not by the sentence defining it as a
    testing tool, which names the aspect without stating it."""
    en = query.isascii()
    hits = sourced(("01.02-package-lint-tools.md",
                    "piuparts is the .deb package installation, upgrading, and removal testing tool. piuparts tests "
                    "that .deb packages handle installation, upgrading, and removal correctly." if en else
                    "piuparts 是 .deb 软件包安装、升级和删除的检验工具。piuparts 测试 .deb 软件包能否正确地安装、升级和删除。"),
                   ("01.02-package-lint-tools.md",
                    "lintian dissects Debian packages and emits information about bugs and policy violations." if en
                    else "lintian 剖析 Debian 软件包并报告缺陷和违反政策之处。"))
    text = answer(query, hits, "compare")
    said = blocks(text, piuparts, lintian)[0]
    assert ("piuparts tests that" if en else "piuparts 测试 .deb") in said, text


def test_the_word_a_question_asks_a_side_does_is_its_verb_never_a_noun_after_its_name():
    from lambdarag.skills.layouts import asked_of

    assert asked_of("What does piuparts test that lintian does not?", ["piuparts", "lintian"]) == ["test"]
    assert asked_of("piuparts 测试哪些 lintian 不测试的内容？", ["piuparts", "lintian"]) == ["测试"]
    assert asked_of("How does Wayland differ from the X Window System core protocol?",
                    ["Wayland", "X Window System"]) == []     # core protocol: the side's noun phrase, no verb


def test_a_latin_name_with_its_chinese_kind_is_found_by_its_latin_name_in_english_text():
    # kicad-pcb-zh-cn dev c06: the book's paragraphs are English; "SMD 焊盘" was called missing beside "SMD pads are…"
    hits = sourced(("pads.md", "Pad type: this setting controls which features are enabled for the pad:\n"
                               "SMD pads are electrically-connected and have no hole.\n"
                               "Through-hole pads are electrically-connected and have a plated hole."),
                   ("placement.md", "使用通孔焊盘排除所有封装：启用时，如果封装包含任何通孔焊盘，也将从放置文件中排除封装。"))
    text = answer("焊盘类型里 SMD 焊盘和通孔焊盘有什么差别？", hits, "compare")
    assert "未找到" not in text, text
    smd, _ = blocks(text, "关于「SMD 焊盘」：", "关于「通孔焊盘」：")
    assert "SMD pads are electrically-connected and have no hole.[来源: pads.md" in smd, text    # its own full stop


def test_a_side_shares_the_block_whose_unit_defines_it_too():
    # kicad-pcb-zh-cn dev c02: one table row defines both kinds of via; 埋孔 quoted a hotkey line instead
    hits = sourced(("rules.md", "| 设置 | 说明 |\n|---|---|\n| 允许盲孔/埋孔 | 必须先启用此设置，然后才能放置盲孔或埋孔。"
                                "盲孔是机械钻孔，从外层铜层之一开始，到内层之一结束。埋孔是机械钻孔，在内部铜层开始和结束。 |"),
                   ("routing.md", "使用热键 Ctrl+V 来放置微孔，Alt+Shift+V 来放置盲/埋孔。"))
    text = answer("盲孔和埋孔到底有什么区别？", hits, "compare")
    assert "关于「盲孔、埋孔」：" in text and "Alt+Shift+V" not in text, text


BUDGETS = sourced(("budgets.md", "The draft budget is the one the treasurer proposes in March."),
                  ("budgets.md", "The revised budget is the draft after the members have commented on it."),
                  ("budgets.md", "The final budget is the one the assembly votes in June."))
"""Three kinds of one thing, each defined by a sentence of its own (a club's handbook, written for this test)."""


@pytest.mark.parametrize("query", [
    "What is the difference between the draft budget, the revised budget and the final budget?",
    "Explain the differences between the draft budget, the revised budget, and the final budget.",
])
def test_a_comparison_listing_three_sides_gives_each_its_block(query):
    """"A, B and C" sets three things side by side: the connective joins the last two, the commas the others; the
    first is no part of the second's name, nor left out."""
    assert named_things(query, BUDGETS, GENERIC) == ["draft budget", "revised budget", "final budget"]
    draft, revised, final = blocks(answer(query, BUDGETS, "compare"), "On “draft budget”:", "On “revised budget”:",
                                   "On “final budget”:")
    assert "treasurer proposes" in draft and "members have commented" in revised and "assembly votes" in final


def test_a_latin_side_with_its_bracketed_qualifier_is_one_name_and_the_shorter_is_not_said_by_it():
    """A Chinese question comparing a UI option with its bracketed variant (To Cell, To Cell (resize with cell) in a
    spreadsheet guide): the bracket belongs to the second name, and a unit naming the variant does not speak for the
    plain option (a printing guide's text, written for this test)."""
    hits = sourced(("printing.md", "- Fit Page (keep ratio): the drawing is scaled to the page. In addition, its width "
                                   "and height keep their ratio when the page is smaller."),
                   ("printing.md", "- Fit Page: the drawing is scaled to fill the whole page."))
    query = "打印时用 Fit Page 和 Fit Page (keep ratio) 有什么区别？"
    assert named_things(query, hits, GENERIC) == ["Fit Page", "Fit Page (keep ratio)"]
    plain, kept = blocks(answer(query, hits, "compare"), "关于「Fit Page」：", "关于「Fit Page (keep ratio)」：")
    assert "fill the whole page" in plain and "keep ratio" not in plain
    assert "Fit Page (keep ratio): the drawing" in kept


def test_asking_whether_one_thing_is_the_same_as_another_names_both_as_sides():
    """"Is A the same thing as B?" sets A against B as "Are A and B the same thing?" does (wireshark-guide-en dev c04,
    round 24: only TCP was a side, and the answer fell back to a list with no block per side)."""
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("Is a mail queue the same thing as a mail spool?") == ("mail queue", "mail spool")
    assert query_entities("Isn't the swap file the same as the page file here?") == ("swap file", "page file")


def test_a_place_said_instead_of_another_gives_the_place_of_each_clause():
    """"change it at A instead of in B": with a preposition after "instead of", each side is what its preposition
    governs, not the clause's subject (edu-en dev c04, round 24: the sides were `pupil` and GOsa²)."""
    assert named_things("If a clerk files the form at the front desk instead of in Webdesk, what ends up different?",
                        (), GENERIC) == ["front desk", "Webdesk"]


def test_a_chinese_choice_between_two_things_names_both_without_the_verb_before_them():
    """该装 A 还是 B: 还是 joins two sides as 和 does, and the verb of the choice is no part of the first
    (edu-zh-cn dev c04, round 24: no side was found)."""
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("办公电脑该装桌面版还是服务器版，两者差在哪？") == ("桌面版", "服务器版")
    assert query_entities("备份用磁带机还是移动硬盘？") == ("磁带机", "移动硬盘")


def test_a_side_that_is_a_noun_phrase_is_found_in_the_plural():
    """A text speaks of things in general in the plural ("different mail queues"): a side named "a mail queue" is
    found there rather than called missing (wireshark-guide-en dev c04, round 24: `Not found in the documents: TCP
    endpoint` beside "…are different TCP endpoints.")."""
    text = answer("Is a mail queue the same thing as a mail spool?", sourced(
        ("queues.md", "Messages waiting on different hosts sit in different mail queues."),
        ("spool.md", "A mail spool holds the messages delivered to local users.")), "compare")
    queue, spool = blocks(text, "On “mail queue”:", "On “mail spool”:")
    assert "queues.md" in queue and "spool.md" in spool, text


def test_a_sentence_listing_both_sides_among_others_is_no_line_between_them():
    """A sentence naming the sides only as items of one list ("…for the tools that use it (Lint, Kite, Pyre)…")
    says nothing of how they compare: it does not take the place of a side's second sentence (valgrind-en fresh
    fv02, round 24: "DRD is also a thread error detector." lost "It is similar to Helgrind but…" to such a line)."""
    text = answer("What separates Kite from Pyre?", sourced(
        ("overview.md", "Kite is a type checker."),
        ("overview.md", "Pyre is also a type checker. It is similar to Kite but infers types in another way."),
        ("options.md", "Caching makes startup slower, but for the tools that use it (Lint, Kite, Pyre) it gives more "
                       "precise messages.")), "compare")
    assert "infers types in another way" in blocks(text, "On “Kite”:", "On “Pyre”:")[1], text
    assert "precise messages" not in text, text


def test_a_chinese_still_or_a_pair_of_steps_is_no_choice_between_two_things():
    """还是 before a verb is "still" (为什么别人还是能改), and without a verb of picking the words around it are steps, not
    two things to choose from: neither names a side."""
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("单元格勾了保护，为什么别人还是能改？") == ()
    assert query_entities("启动时先读本地配置还是先读远程配置？") == ()


def test_a_preposition_said_before_one_word_only_joins_no_pair():
    """"for a holiday or for good": the preposition opens only the second operand, so good is no partner of holiday."""
    assert partners("Whether I leave for a holiday or for good?", ["holiday"], "") == []


def test_a_chinese_connective_inside_a_verb_or_a_word_joins_no_sides():
    """跟 of 跟着 (to follow) and 与 of 参与 (to take part) join nothing: 让它跟着电子表格文件的数据更新 set 我想让它 and
    着电子表格文件 side by side (impress-draw-guide-zh-cn dev c04)."""
    from lambdarag.domains.generic.cues import query_entities

    assert named_things("幻灯片里放表格，用本地表格还是 OLE 对象？我想让它跟着电子表格文件的数据更新", (), GENERIC) == [
        "本地表格", "OLE 对象"]
    assert query_entities("只显示两位小数，会影响实际参与计算的数值吗？") == ()
    assert query_entities("盲孔跟埋孔有什么区别？") == ("盲孔", "埋孔")


def test_a_chinese_choice_joined_by_huozhe_after_a_verb_of_setting_names_both_sides():
    """或者 joins the two things a choice picks between as 还是 does, and a verb of setting (设成, 改为, 存成) picks as 用
    does: 曲线接点设成对称或者平滑 sets 对称 against 平滑 (impress-draw-guide-zh-cn dev c06 fell back to a list)."""
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("曲线接点设成对称或者平滑，两者有什么差别？") == ("对称", "平滑")
    assert query_entities("纸张方向设为横向或者纵向，打印出来有什么不同？") == ("横向", "纵向")
    assert query_entities("文件该用快照还是增量备份？") == ("快照", "增量备份")


def test_the_unit_between_the_sides_never_holds_a_sides_quote_again():
    """A list's lead-in read with its items holds the item already quoted for a side (可以应用三种不同的切换方式…:「对称」
    锚点…, impress-draw-guide-zh-cn dev c06): quoted again between the sides, it says nothing new."""
    from lambdarag.skills.evidence import Candidate, Scored
    from lambdarag.skills.layouts import naming_all

    hit = Hit(chunk_id="a#1", source="a.md", text="")
    item = "「对称」锚点两侧的线曲率相同。"
    lead = "可以应用两种不同的方式连结线段:" + item + "「平滑」锚点两侧的线曲率可能不同。"
    other = "「对称」和「平滑」都可以在「编辑接点」栏上切换。"
    sides = [("对称", ()), ("平滑", ())]
    ranking = [Scored(Candidate(t, hit=hit, rank=0), score, 0.5, 0.5) for t, score in ((lead, 1.0), (other, 0.9))]
    assert [s.text for s in naming_all(ranking, sides, {item})] == [other]


def test_a_unit_opening_with_a_sides_quoted_name_speaks_for_it_on_the_other_sides_page():
    """「精细」保留… defines 精细 though it sits on the page titled 草稿模式 (both modes described there): it is 精细's own
    sentence, not a citation of the other side's page, and goes before a passing mention of 精细 on a third page
    (office-guide-zh-cn dev c02 quoted a printer page's 如果灰度变换… over 「灰度」将所有颜色转换成…)."""
    hits = sourced(("草稿模式.md", "「草稿」丢弃部分细节以减小文件。「精细」保留图片的全部像素信息。"),
                   ("导出设置.md", "如果精细文件太大，请改用其它格式。"))
    text = answer("导出图片选精细还是草稿？两者效果有什么不同", hits, "compare")
    assert "「精细」保留图片的全部像素信息" in blocks(text, "关于「精细」：", "关于「草稿」：")[0], text


@pytest.mark.parametrize("query, pages, labels, stated", [
    ("Do files opened from FTP and SMB servers show the lock button?",
     [("ftp.md", "You can open and save documents stored on an FTP server. Files opened from FTP show no lock button, "
       "so two people may edit them at once."),
      ("smb.md", "You can open and save documents stored on an SMB share. Files opened from SMB are locked with the "
       "lock button while you edit them.")],
     ("On “FTP”:", "On “SMB”:"), "Files opened from FTP show no lock button"),
    ("从 FTP 和 SMB 服务器打开的文件会显示锁定按钮吗？",
     [("ftp.md", "您可以打开和保存 FTP 服务器上的文档。从 FTP 打开的文件不显示锁定按钮，两人可能同时编辑。"),
      ("smb.md", "您可以打开和保存 SMB 共享上的文档。从 SMB 打开的文件在编辑时由锁定按钮锁定。")],
     ("关于「FTP」：", "关于「SMB」："), "从 FTP 打开的文件不显示锁定按钮"),
], ids=["en", "zh"])
def test_a_named_sides_quote_states_the_compared_aspect_over_its_pages_opening(query, pages, labels, stated):
    """Asked whether the lock button shows, the FTP block quotes the sentence saying so for FTP, not the opening of
    FTP's page, which is the first thing said about it but says nothing of the aspect (office-guide-zh-cn dev c06
    quoted the opening of the WebDAV page over `对于 Windows 共享、WebDAV、FTP…，不会显示检出/检入控件。`)."""
    text = answer(query, sourced(*pages), "compare")
    assert stated in blocks(text, *labels)[0], text


def test_a_side_holding_no_content_word_is_never_named():
    """A preposition said again after "or" (…with trust-policy or with manual key management?) is no side: bind-arm-en
    dev c06, round 26, had a block labelled On “with”, a word no text can say anything of."""
    from lambdarag.skills.sentences import keywords

    from lambdarag.domains.generic.cues import query_entities

    hits = sourced(("signing.md", "zone files are signed by the server. Use trust-policy to sign a zone unattended."),
                   ("manual.md", "Manual key management suits special needs only."))
    query = "Should I sign my zone with trust-policy or with manual key management?"
    entities = query_entities(query)     # what the classifier hands on as the question's entities
    assert all(keywords(n) for n in named_things(query, hits, GENERIC, entities))
    state = State.of(query, hits=hits, query_type="compare", entities=entities)
    assert "“with”" not in extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]


def test_a_preposition_said_again_after_or_sets_what_each_governs_side_by_side():
    """"with A or with B": the two things the repeated preposition governs are the sides, each whole up to the end of
    its clause (manual key management, R CMD BATCH), and they go before a pair an earlier bare "with" makes (zone with
    trust-policy: a sentence opening with zone makes it a name too)."""
    from lambdarag.domains.generic.cues import query_entities

    query = "Should I run my script with R CMD BATCH or with Rscript?"
    assert named_things(query, (), GENERIC, query_entities(query)) == ["R CMD BATCH", "Rscript"]
    hits = sourced(("signing.md", "zone files are signed by the server. Use trust-policy to sign a zone unattended."),
                   ("manual.md", "Manual key management suits special needs only."))
    query = "Should I sign my zone with trust-policy or with manual key management?"
    assert named_things(query, hits, GENERIC, query_entities(query)) == ["trust-policy", "manual key management"]


def test_a_chinese_pair_whose_sides_each_follow_a_verb_of_picking_names_what_is_picked():
    """选 A 和选 B: the verb said again before the second side picks both, and jieba may glue it to the word before the
    first (误差线选, 时选): chart-help-zh-cn dev c04, round 26, named 误差线选标准偏差 and 选标准误差, found neither and
    refused though the page defining both was ranked first."""
    from lambdarag.domains.generic.cues import query_entities

    assert query_entities("误差线选标准偏差和选标准误差有什么区别？") == ("标准偏差", "标准误差")
    assert query_entities("排序时选升序和选降序有什么区别？") == ("升序", "降序")
    text = answer("排序时选升序和选降序有什么区别？", sourced(
        ("sort.md", "升序: 从小到大排列数据。"), ("sort.md", "降序: 从大到小排列数据。")), "compare")
    ascending, descending = blocks(text, "关于「升序」：", "关于「降序」：")
    assert "从小到大" in ascending and "从大到小" in descending, text


@pytest.mark.parametrize("text, sets_against", [
    ("Where Pinto reads the archive on every query, resulting in slow lookups, Quill keeps it in memory.", True),
    ("Whereas Pinto reads the archive on every query, Quill keeps it in memory.", True),
    ("While Pinto reads the archive, Quill keeps it in memory.", True),
    ("Where the archive is missing, Quill reports an error.", False),     # a condition, no side set against
    ("Quill keeps the archive in memory where Pinto is slow.", False),    # no clause opening on the other side
])
def test_a_unit_opening_with_where_and_the_other_side_sets_its_side_against_it(text, sets_against):
    """"Where DLZ translates DNS queries into…, a DynDB module can pre-load…" says how the two differ as "Unlike DLZ, …"
    does (bind-arm-en dev c02 quoted "Unlike DLZ, a DynDB module provides a full-featured…" between the sides, not
    the labelled sentence ranked above it)."""
    from lambdarag.skills.evidence import Candidate, Scored
    from lambdarag.skills.layouts import contrasts

    unit = Scored(Candidate(text, hit=Hit(chunk_id="q#1", source="quill.md", text=text), rank=0), 1.0, 0.5, 0.5)
    assert contrasts(unit, "Quill", ["Pinto", "Quill"]) is sets_against


def test_two_operators_a_connective_joins_are_the_sides():
    """"should I use & or &&?": operators are names, though they hold no word (r-intro-en dev c02 named no side and
    answered with a fact's list); the longer one is no saying of the shorter (`&` is not said by `&&`)."""
    query = "In an if condition, should I use & or &&?"
    assert named_things(query, (), GENERIC) == ["&", "&&"]
    text = answer(query, sourced(
        ("ops.md", "The operator & compares two vectors element by element."),
        ("ops.md", "The short-circuit operator && is used in the condition of an if statement."),
        ("ops.md", "Whereas & and | apply element-wise to vectors, && and || look at one value only.")), "compare")
    amp, amps = blocks(text, "On “&”:", "On “&&”:")
    assert "element by element" in amp and "short-circuit" in amps, text


@pytest.mark.parametrize("query, sides", [
    ("What is the difference between WHERE and HAVING?", ["WHERE", "HAVING"]),
    ("Should I test membership with IN or with ANY?", ["IN", "ANY"]),
])
def test_a_function_word_written_in_capitals_is_a_keyword_and_names_a_side(query, sides):
    """A word a text writes in capitals (WHERE, HAVING, IN: a query language's keywords) names a thing a manual says
    something of, though its lower-case form is a function word (round 27's filter of function-word sides dropped
    such sides on a blind SQL half)."""
    from lambdarag.domains.generic.cues import query_entities

    hits = sourced(("filter.md", "WHERE selects input rows before groups are formed."),
                   ("groups.md", "HAVING selects group rows after groups and aggregates are computed."))
    assert named_things(query, hits, GENERIC, query_entities(query)) == sides


def test_a_sentence_of_a_paragraph_headed_by_a_side_speaks_for_it_though_the_cut_left_the_heading_a_piece_before():
    # a definition list flattened to paragraphs (`Journal. Data and…`), cut at a sentence end: the piece holding the
    # side's own sentence on the asked matter opens inside the paragraph and never says the side's name
    src = "journal-modes.md"
    pieces = [("~3", "A file written when the power fails is either complete or absent after the replay, which means "
                     "that no check is needed and lost data is very unlikely. Journal mode writes everything twice, so "
                     "it is the slowest on large writes.\nWriteback. Only metadata goes through the journal. Writeback "
                     "mode is the fastest, but a file written just before a crash may hold stale blocks afterwards."),
              ("~2", "The mount option data= sets how file contents are protected.\nJournal. Data and metadata both go "
                     "through the journal before they reach their place on disk. ")]
    hits = tuple(Hit(chunk_id=f"{src}#text{piece}", text=t, source=src, title="Journal modes", score=1.0 - i / 10)
                 for i, (piece, t) in enumerate(pieces))
    text = answer("Should I mount with Journal or Writeback if the power may fail during a write?", hits, "compare")
    journal, _ = blocks(text, "On “Journal”:", "On “Writeback”:")
    assert "A file written when the power fails is either complete" in journal, text
    alone = answer("Should I mount with Journal or Writeback if the power may fail during a write?", hits[:1],
                   "compare")    # without the piece before, nothing says whose paragraph it is
    assert "A file written when the power fails" not in blocks(alone, "On “Journal”:", "On “Writeback”:")[0], alone
    ended = (hits[0], hits[1].model_copy(update={"text": hits[1].text.rstrip()}))   # the piece before ends its paragraph
    apart = answer("Should I mount with Journal or Writeback if the power may fail during a write?", ended, "compare")
    assert "A file written when the power fails" not in blocks(apart, "On “Journal”:", "On “Writeback”:")[0], apart
