"""Offline answers on text written as nobody tuned for (the held-out pairs' dev halves: policy-en / handbook-zh-cn
in round 20, harden-en / kicad-pcb-zh-cn and edu-zh-cn in round 21): a definition list's term, a comparison whose
sides share a verb, a question asking when a rule changed, a release's page, a question asking which file."""
from __future__ import annotations

from lambdarag import Context, State
from lambdarag.domains import profile_named
from lambdarag.skills.evidence import candidates
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.store.records import Hit

GENERIC = profile_named("generic")


def answer(query: str, hits: tuple, query_type: str) -> str:
    state = State.of(query, hits=hits, query_type=query_type)
    return extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]


def pages(*pages: tuple[str, str, str]) -> tuple:
    """Returns hits of (file, title, text), best first."""
    return tuple(Hit(chunk_id=f"{s}#{i}", text=t, source=s, title=title, score=1.0 - i / 10)
                 for i, (s, title, t) in enumerate(pages))


CLASSES = ("The UID and GID numbers are divided into classes as follows:\n0-99:\nGlobally allocated by the Debian "
           "project, the same on every Debian system.\n100-999:\nDynamically allocated system users and groups. "
           "Packages which need a user or group, but can have it allocated dynamically, should use adduser --system "
           "to create it.\n1000-59999:\nDynamically allocated user accounts.")


def test_a_definition_lists_term_is_quoted_with_its_definitions_first_sentence():
    """A short line ending in a colon above a flush paragraph (a converted definition list) is the term the
    paragraph's first sentence defines: quoted alone, that sentence has lost the range it is about (policy-en dev
    f04 quoted "Dynamically allocated system users and groups." without 100-999)."""
    units = [c.text for c in candidates(pages(("users.md", "Users and groups", CLASSES)), GENERIC)]
    assert "100-999: Dynamically allocated system users and groups." in units
    assert "Packages which need a user or group, but can have it allocated dynamically, should use adduser " \
           "--system to create it." in units
    assert "1000-59999: Dynamically allocated user accounts." in units
    text = answer("What UID range is set aside for system users that get allocated dynamically?",
                  pages(("users.md", "Users and groups", CLASSES)), "fact")
    assert "- 100-999: Dynamically allocated system users and groups.[source: users.md" in text, text


def test_a_comparisons_sides_are_the_names_after_the_verb_both_share():
    """"between declaring Breaks and declaring Conflicts" compares Breaks and Conflicts; the text never writes
    "declaring Breaks", and the answer called both sides missing (policy-en dev c02)."""
    hits = pages(("breaks.md", "Packages which break other packages - Breaks",
                  "When one binary package declares that it breaks another, dpkg will refuse to allow the package "
                  "which declares Breaks to be unpacked unless the broken package is deconfigured first."),
                 ("conflicts.md", "Conflicting binary packages - Conflicts",
                  "When one binary package declares a conflict with another using a Conflicts field, dpkg will "
                  "refuse to allow them to be unpacked on the system at the same time."))
    text = answer("What's the practical difference between declaring Breaks and declaring Conflicts?", hits, "compare")
    assert "Not found" not in text, text
    breaks, conflicts = text.split("On “Breaks”:")[1].split("On “Conflicts”:")
    assert "which declares Breaks to be unpacked" in breaks and "[source: breaks.md" in breaks, text
    assert "using a Conflicts field" in conflicts and "[source: conflicts.md" in conflicts, text


def test_a_question_asking_whether_a_rule_changed_quotes_the_change_logs_sentence():
    """A page titled with a version (a change log's Version 4.6.0) dates its sentences, which say only what
    changed; and "…, or did that change at some point?" asks one thing, when, not a second question (policy-en dev
    t03 quoted the rule as it stands, from the file-system page, and no version)."""
    hits = pages(("fhs.md", "File system hierarchy",
                  "Packages for 64-bit architectures must not install files in /usr/lib64 or in a subdirectory of it."),
                 ("version-4-6-0.md", "Version 4.6.0",
                  "Released August, 2021.\n\nNo package is allowed to install files in /usr/lib64/. Previously, this "
                  "prohibition only applied to packages for 64-bit architectures."))
    text = answer("Was installing into /usr/lib64 always forbidden on every architecture, or did that change at "
                  "some point?", hits, "temporal")
    assert "No package is allowed to install files in /usr/lib64/.[source: version-4-6-0.md" in text, text


def test_a_page_titled_with_a_release_and_its_subject_does_not_date_its_sentences():
    """Only a change log's entry, titled with its version alone, dates every sentence on it: a release's page
    titled with its date and subject describes the release, and its Samba sentence, scored a little lower, beat
    the upgrade step asked for (edu-zh-cn dev t05, round 20)."""
    from dataclasses import replace

    from lambdarag.skills.evidence import ranked, temporal

    query = "主服务器从 bullseye 升级到 bookworm 的过程中，被问到 Samba 配置时该怎么选？"
    hits = pages(("upgrade.md", "从 Debian Edu Bullseye 升级",
                  "Samba服务器和实用程序:选择“保持当前安装的本地版本”."),
                 ("release.md", "2021 年 8 月 14 日发布的 Debian Edu 11 代号 Bullseye",
                  "Samba 被配置为具有 SMB2/SMB3 支持的‘独立服务器’；以完成域连接。"),
                 ("version.md", "Version 11.1", "Samba 的默认共享现在只读。"))
    units = {u.hit.source: u for u in ranked(query, hits, GENERIC)}
    step, release, entry = (replace(units[s], score=score) for s, score in
                            [("upgrade.md", 0.86), ("release.md", 0.79), ("version.md", 0.79)])
    assert temporal([step, release], query=query)[0] is step
    assert temporal([step, entry], query=query)[0] is entry    # a change log's entry still dates its sentences


def test_a_fact_answers_second_unit_names_the_file_asked_for_when_its_first_does():
    """"Which file decides…": a unit naming no file cannot say which one; it joined the answer over the sentence
    naming /etc/securetty (harden-en dev r03)."""
    from dataclasses import replace

    from lambdarag.skills.evidence import fact, ranked

    query = "Which file decides on which terminals root may log in?"
    hits = pages(("pam.md", "User access control in PAM",
                  "To make sure that the user root can only log into the system from local terminals, the following "
                  "line should be enabled in /etc/pam.d/login:\n\nThen you should modify the list of terminals on "
                  "which direct root login is allowed in /etc/securetty."),
                 ("logs.md", "Log file permissions",
                  "Take a brief look at your log files and decide very carefully which log files to make readable."))
    scores = {"To make": 0.86, "Take a": 0.84, "Then you": 0.8}
    ranking = [replace(u, score=next(v for k, v in scores.items() if u.text.startswith(k)))
               for u in ranked(query, hits, GENERIC)]
    ranking.sort(key=lambda u: (not u.text.startswith("To make"), -u.score))    # the file-naming unit first
    assert [u.text[:8] for u in fact(ranking, query)] == ["To make ", "Then you"]
    assert [u.text[:8] for u in fact(ranking)] == ["To make ", "Take a b"]     # any other question: the score
    long = [replace(u, candidate=replace(u.candidate, text=u.text + " It lists ttys. Edit it with care."))
            if u.text.startswith("Then you") else u for u in ranking]
    assert [u.text[:8] for u in fact(long, query)] == ["To make ", "Take a b"]   # too long to join: as before


def test_the_sides_a_question_joins_win_over_pages_it_names_in_passing():
    """"AppArmor 配置文件的 enforce 模式和 complain 模式区别在哪？" names two pages (AppArmor; 配置文件, resolved to
    the syslog page) but compares enforce with complain: the blocks are enforce's and complain's, each cited to the
    AppArmor page (handbook-zh-cn dev c04 quoted the syslog page for a side)."""
    from lambdarag.skills.titles import Side

    hits = pages(("apparmor.md", "AppArmor 简介",
                  "Each profile can be loaded either in enforcing or complaining mode. In enforce mode the policy is "
                  "enforced and violation attempts are reported. In complain mode the policy is not enforced, but the "
                  "denied system calls are still logged."),
                 ("syslog.md", "syslog 系统事件", "遵守 /etc/rsyslog.conf 配置文件的要求。"))
    sides = (Side(name="AppArmor", title="AppArmor 简介", source="apparmor.md"),
             Side(name="配置文件", title="syslog 系统事件", source="syslog.md"))
    state = State.of("AppArmor 配置文件的 enforce 模式和 complain 模式区别在哪？", hits=hits, query_type="compare",
                     sides=sides)
    text = extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]
    assert "syslog.md" not in text and "rsyslog" not in text, text
    enforce, complain = text.split("关于「enforce」：")[1].split("关于「complain」：")
    assert "In enforce mode" in enforce and "apparmor.md" in enforce, text
    assert "In complain mode" in complain and "apparmor.md" in complain, text


def test_a_chinese_relation_question_names_its_ends_before_shi():
    """"域、角色和身份之间是什么关系？" asks how 角色 and 身份 relate (with 是 after them, not 的 or 有): the answer
    quotes the sentence naming both, not one on SELinux's tools (handbook-zh-cn dev r04)."""
    hits = pages(("selinux.md", "SELinux 简介",
                  "semanage user -l 列出 SELinux 用户身份和允许的角色之间的映射。\n\n权限实际上取决于域，但是在域之间转换由"
                  "角色控制。角色之间的转换取决于身份。"))
    assert GENERIC.names.query_entities("在 SELinux 里，域、角色和身份之间是什么关系？")[-2:] == ("角色", "身份")
    text = answer("在 SELinux 里，域、角色和身份之间是什么关系？", hits, "relation")
    assert "角色之间的转换取决于身份" in text, text
