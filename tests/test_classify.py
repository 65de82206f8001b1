"""Offline classification under the statute profile: rules on the labelled maritime questions, learned rules,
the rules → LLM → default term."""
import json
import re
from pathlib import Path

import pytest

from lambdarag import Context, State
from lambdarag.errors import ConfigError
from lambdarag.providers.llm import OpenAIChat
from lambdarag.skills import classify as classify_module
from lambdarag.domains.prc_statutes import StatuteProfile
from lambdarag.domains.prc_statutes.cues import CUES, query_entities
from lambdarag.skills import classify as classifiers
from lambdarag.skills import build
from tests.scripted_server import Reply

PROFILE = StatuteProfile()


def statutes(**kw) -> Context:
    """Returns a context whose corpus profile is the statute pack's."""
    return Context(resources={"profile": PROFILE}, **kw)


def rule_classify(query, rules=()):
    return classifiers.rule_classify(query, rules, PROFILE)


def learned_classify(query, config):
    return classifiers.learned_classify(query, config, PROFILE)

DATA = Path(__file__).parent / "data"


def labelled(name):
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def half(name, questions="routing"):
    path = Path(__file__).parents[1] / "bench" / "data" / questions / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def accuracy(rows, config=None):
    term = build("classify_offline", config or {})
    return sum(term.run(r["query"], statutes()).query_type == r["type"] for r in rows) / len(rows)


def test_every_rule_cue_is_high_precision_on_the_dev_halves():
    # A cue earns its place by evidence, not by one memorised question: on the dev halves it must
    # decide at least two questions and only questions of its type. It decides where it fires and
    # no earlier type's cue does (the cues are ordered: 2018年版…多少个 is temporal before fact).
    rows = [r for questions in ("routing", "maritime") for name in ("dev", "dev2") for r in half(name, questions)]
    for i, (kind, _, cues) in enumerate(CUES):
        earlier = [re.compile("|".join(c)) for _, _, c in CUES[:i]]
        for cue in cues:
            hits = [r["type"] for r in rows
                    if re.search(cue, r["query"]) and not any(e.search(r["query"]) for e in earlier)]
            assert len(hits) >= 2 and set(hits) == {kind}, (kind, cue, hits)


def test_surveys_listing_fields_or_asking_for_laws_are_synthesis():
    # dev2 questions the old cues sent to relation (由哪… read as "which body"); they ask for laws.
    for query in ("空气、水、土壤、垃圾、噪音污染分别由哪些法律来管？", "妇女、老人、残疾人的权益分别由哪些法律保障？"):
        assert rule_classify(query).type == "synthesis", query
    assert rule_classify("外国人入境签证由哪些部门负责签发和管理？").type == "relation"
    assert rule_classify("船舶、设施、人员的检查由哪个部门负责？").type == "relation"   # a list, but a body is asked for


def test_a_question_asking_for_one_provisions_list_is_no_survey():
    # the learned classifier, left alone, calls both surveys (maritime dev2, m2f05 and m2f06)
    for query in ("船被撞以后全损和部分损坏，赔偿分别包括哪些？", "买了一条二手船，去办船舶所有权登记有哪些材料要交？"):
        found = learned_classify(query, {})
        assert (found.stage, found.type) == ("exemplars", "fact"), query
    assert learned_classify("海上交通安全管理的法规体系梳理", {"learned": True}).type == "synthesis"
    assert rule_classify("海关统计条例是依据哪些法律制定的？").type == "relation"


@pytest.mark.slow
def test_learned_classifier_generalises_to_held_out_questions():
    # classify_extra.jsonl is neither an exemplar nor used to choose anything; the old rules got 13/20 (0.65).
    assert accuracy(labelled("classify_extra.jsonl")) >= 0.8


def test_exemplars_never_include_the_frozen_test_half():
    assert not {q for q, _ in PROFILE.classifier.exemplars} & {r["query"] for r in half("test")}


@pytest.mark.slow
def test_type_accuracy_on_the_frozen_test_half():
    # Reported, never tuned on (bench/data/routing/README.md).
    assert accuracy(half("test")) >= 0.9


def test_extra_exemplars_change_the_learned_decision():
    query = "琼州海峡定线制的船舶有哪些要求"
    before = learned_classify(query, {})
    other = next(t for t in ("relation", "compare") if t != before.type)
    extra = [{"query": query, "type": other}, {"query": "琼州海峡定线制的船舶要求", "type": other}]
    after = learned_classify(query, {"exemplars": extra})
    assert (before.stage, after.type) == ("exemplars", other)


def test_two_profiles_of_one_name_reading_other_exemplars_get_classifiers_of_their_own(tmp_path):
    # a leave-one-book-out fit (bench/classify_types.py --lobo) reads another file under the generic profile's name
    import copy
    from dataclasses import replace
    from lambdarag.domains import profile_named

    generic = profile_named("generic")
    fewer = tmp_path / "classify_exemplars.jsonl"
    fewer.write_text(json.dumps({"query": "What changed in version 2?", "type": "temporal"}) + "\n", encoding="utf-8")
    other = copy.copy(generic)
    other.classifier = replace(generic.classifier, exemplars_file=fewer)
    assert len(classifiers.exemplar_classifier((), generic).queries) > 1
    assert classifiers.exemplar_classifier((), other).queries == ["What changed in version 2?"]


def test_bad_exemplar_names_the_problem():
    with pytest.raises(ConfigError, match="needs a non-empty 'query'"):
        build("classify", {"exemplars": [{"query": "x", "type": "weird"}]})


@pytest.mark.parametrize("query, kind", [
    ("海上交通安全法与水污染防治法在船舶管理方面有何异同？", "compare"),
    ("修订后的海上交通安全法什么时候施行？", "temporal"),
    ("梳理一下我国防治船舶污染的法律法规体系", "synthesis"),
    ("全国船员管理工作由哪个部门主管？", "relation"),
    ("船舶国籍证书的有效期是几年？", "fact"),
])
def test_each_type_has_a_rule(query, kind):
    c = rule_classify(query)
    assert c.type == kind and c.stage == "rules" and 0 < c.confidence <= 1


def test_unsure_returns_none():
    assert rule_classify("你好") is None


def test_learned_rules_win_over_builtin_ones():
    rules = [{"pattern": "定线制", "type": "temporal"}]
    assert rule_classify("琼州海峡定线制的船舶有多少要求").type == "fact"
    c = rule_classify("琼州海峡定线制的船舶有多少要求", rules)
    assert (c.type, c.stage) == ("temporal", "learned")


def test_bad_learned_rule_names_the_problem():
    with pytest.raises(ConfigError, match="type must be one of"):
        rule_classify("x", [{"pattern": "x", "type": "weird"}])


def test_entities_are_the_laws_named():
    assert query_entities("海洋环境保护法与防治船舶污染海洋环境管理条例在船舶污染事故报告要求上有什么不同？") == (
        "海洋环境保护法", "防治船舶污染海洋环境管理条例")


def test_classify_offline_uses_the_configured_default_when_the_learned_classifier_is_off():
    s = build("classify", {"default": "synthesis", "learned": False}).run("你好", statutes())
    assert s.query_type == "synthesis" and s.classification.stage == "default"
    assert build("classify", {"default": "synthesis"}).run("你好", statutes()).classification.stage in ("exemplars", "llm")


def test_classify_asks_the_llm_only_when_rules_and_learned_classifier_are_unsure(llm_server, monkeypatch):
    llm_server.script.script(Reply(text='{"type": "relation", "entities": ["海事局"], "confidence": 0.7}'))
    ctx = statutes(llm=OpenAIChat(llm_server.url, "m", timeout=2))
    monkeypatch.setattr(classify_module, "SURE", 0.0)   # the learned classifier is always sure
    s = build("classify", {}).run("海事局这个单位怎么样", ctx)
    assert s.classification.stage == "exemplars" and llm_server.script.requests == []
    monkeypatch.setattr(classify_module, "SURE", 1.01)  # never sure
    term = build("classify", {})
    s = term.run("全国船员管理工作由哪个部门主管？", ctx)
    assert s.classification.stage == "rules" and llm_server.script.requests == []
    s = term.run("海事局这个单位怎么样", ctx)
    assert (s.query_type, s.entities, s.classification.stage) == ("relation", ("海事局",), "llm")
    assert "海事局这个单位怎么样" in llm_server.script.requests[0]["body"]["messages"][-1]["content"]


def test_classify_llm_invalid_type_twice_falls_back_to_default(llm_server):
    llm_server.script.script(Reply(text='{"type": "opinion"}'), Reply(text="not json"))
    ctx = statutes(llm=OpenAIChat(llm_server.url, "m", timeout=2))
    s = build("classify", {"default": "fact", "learned": False}).run(State.of("海事局这个单位怎么样"), ctx)
    assert s.classification.stage == "default"
    assert any("classify_llm" == f["term"] for f in ctx.trace.fallbacks())


GENERIC_RELATIONS = [  # written for this test (issue 41), about no corpus of any benchmark
    "Which option decides how long the proxy keeps idle connections?",
    "What variable controls the language of the installer?",
    "Which configuration file determines the order of the boot entries?",
    "Is the spell checker part of the editor or a plugin?",
    "How long the proxy keeps idle connections is controlled by which setting?",
    "代理保持空闲连接的时间由哪个选项决定？",
    "安装程序的语言由哪些环境变量控制？",
    "启动项的顺序受哪个配置文件控制？",
    "哪个参数决定备份保留几份？",
    "拼写检查是编辑器的一部分吗？",
    # what reads, calls, runs or relates to what (issue 41, round 9)
    "Which file defines the upstream mirrors the proxy uses?",
    "Which script calls the cleanup hook after an upgrade?",
    "Which programs read the netrc file?",
    "Which files does the shell read when a login session starts?",
    "What does the indexer depend on to find new documents?",
    "What does the scheduler rely on to wake up on time?",
    "Which subsystem do both sandboxing tools build on?",
    "How does the cache daemon work with the resolver?",
    "What role does the staging area play in a commit?",
    "打印服务和扫描服务之间的关系是什么？",
    "缓存守护进程与解析器是什么联系？",
    "哪些程序会读取这个配置文件？",
    "登录 shell 启动时读取哪些文件？",
    "暂存区在提交过程中起什么作用？",
    "这个沙盒工具是基于哪个内核机制的？",
    "What does the pull command run under the hood?",
    "Which helper is used by the garbage collector to pack objects?",
    "What is the short command a shorthand for?",
    "Is the graphical tool a front end for the command-line client?",
    "Which environment variables affect the pager?",
    "哪些环境变量会影响分页程序的行为？",
    "这个图形工具是命令行客户端的前端吗？",
    "守护进程通过什么和客户端通信？",
    # what handles, needs or acts on what (issue 41, round 10)
    "Which daemon handles the requests that the client sends?",
    "Which kernel module must be loaded for the sound card to work?",
    "Which package needs to be installed for the spell checker to work?",
    "The thumbnail cache is managed by which service?",
    "Which jobs does the scheduler act on by default?",
    "这个工具使用哪个库来渲染字体？",
    "要让声卡工作，必须加载哪个内核模块？",
    "哪个守护进程处理客户端发来的请求？",
    "这个选项默认作用于哪些任务？",
    "Which package contains the mount helper?",
    "What does the verbose flag affect?",
    "Which settings does the indexer take into account?",
    "这个程序包含在哪个软件包中？",
    "修改这个参数会影响到哪些服务？",
    "这个环境变量控制什么？",
    "哪个服务会启动这个守护进程？",
    "What launches the session manager?",
    "Which libraries does the image viewer need?",
    "这个插件需要哪些软件包？",
    "这个命令来自哪个软件包？",
    "这个脚本在哪个软件包里？",
    # relationships named as such, parts asked last, what a thing hands on or overrides (issue 41, round 11)
    "What is the cache's relationship to the index?",
    "What relationship is there between sessions and transactions?",
    "What is the connection between locales and collations?",
    "What is the index builder part of?",
    "What is the lock file used by?",
    "Who reads the pid file?",
    "Which setting does the --force option override?",
    "Which options are implied by the --all flag?",
    "Which daemon does the client contact to resolve names?",
    "Which options does the archive command pass on to the compressor?",
    "Which service is started when the socket receives a connection?",
    "Is the quick command a shortcut for two other commands?",
    "What does the printing system use to convert documents?",
    "哪个环境变量决定临时文件的位置？",
    "默认编辑器由什么决定？",
    "哪些设置会影响服务器的内存占用？",
    "这个命令会读取哪些环境变量？",
    "--all 选项隐含了哪些选项？",
    "这个选项会覆盖哪个配置项？",
    "邮件客户端把邮件交给哪个程序投递？",
    "打印系统靠什么来转换文档？",
    "显示手册页用的是哪个程序？",
    "这个包装脚本在底层调用了什么？",
    "Which program writes the lock file?",
    "What provides the default font configuration?",
    "Where does the resolver get its list of name servers from?",
    "哪个程序负责写锁文件？",
    "解析器从哪个文件获取名称服务器列表？",
    "挂载单元还需要哪些其他单元？",
    "哪些因素决定了缓存的大小？",
    "下载器选择哪个镜像由什么决定？",
    "Which tool is the heap profiler based on?",
    "Which of the tool's options affect the speed of the run?",
    "What tool does the profiler hand its output to for display?",
    "Which kernel feature does the container tool use to isolate processes?",
    "Which user does the mail daemon run as?",
    "Which tool interprets the suppression files?",
    "安装程序用哪个工具下载软件包？",
    "容器工具用内核的哪个特性来隔离进程？",
    "引导程序查阅哪个文件来找到内核？",
    "哪个工具负责解释抑制文件？",
    "Which key in the settings file chooses the theme?",
    "What is the name of the option that controls the log rotation?",
    "Which setting is used to pick the merge strategy?",
    "Which services must be started before the network comes up?",
    "In which file is the prompt colour configured?",
    "哪些选项会影响编译速度？",
    "提示符的颜色在哪个文件里配置？",
    "启动网络服务之前需要先启动哪些服务？",
    # what must be listed where for something to work (issue 41, round 13)
    "Which library must be listed in the build requirements for the plugin to compile?",
    "Which package has to be added to the dependencies to use the spell checker?",
]


LOOKALIKE_FACTS = [  # how-to and where-is questions that share a relation question's words
    "Which command do I use to list the files of an installed package?",
    "What command do you run to rebuild the index?",
    "How do I connect to the database server?",
    "Which command can be used to run the tests?",
    "Which flag tells the archiver to compress with gzip?",
    "用什么命令启动这个服务？",
    "查看日志用哪个命令？",
    "What is used by default when no editor is set?",
    "Which command is used to create a new branch?",
    "What does this error message imply?",
    "哪个命令可以查询已安装的软件包？",
    "运行什么命令可以查看日志？",
    "这个接口用的是什么认证方式？",
    "What does the --verbose option do?",
    "怎样决定缓存的大小？",
    "重启网络服务用哪个命令？",
    "What options does the command accept?",
    "Which options do I need to build the docs?",
    "How do I change where the cache is stored?",
    "提示符的颜色怎么修改？",
    "Which script sets up the nightly cleanup job?",
]


@pytest.mark.parametrize("query,relation",
                         [(q, True) for q in GENERIC_RELATIONS] + [(q, False) for q in LOOKALIKE_FACTS])
def test_generic_rules_tell_relations_from_how_to_questions_in_both_languages(query, relation):
    from lambdarag.domains import profile_named

    c = classifiers.rule_classify(query, (), profile_named("generic"))
    if relation:
        assert c is not None and c.type == "relation" and c.stage == "rules", c
    else:
        assert c is None or c.type != "relation", c


GENERIC_TIMES_AND_SURVEYS = [  # written for this test (issue 41, round 10), about no corpus of any benchmark
    ("In which release of the editor did the option first appear?", "temporal"),
    ("From which compiler version on is the new file format supported?", "temporal"),
    ("What version of the server first added the flag?", "temporal"),
    ("How long is the expected lifetime of a long-term release?", "temporal"),
    ("How often do new major versions come out?", "temporal"),
    ("这个选项是在哪个版本首次出现的？", "temporal"),
    ("长期支持版的生命周期有多长？", "temporal"),
    ("What are the different web servers the guide sets up?", "synthesis"),
    ("Which tools does the manual describe for monitoring disks?", "synthesis"),
    ("有哪些选项可以压缩备份？", "synthesis"),
    # a survey asked first, whatever it goes on to ask; what an old format did (issue 41, round 13)
    ("Summarize how a release is published and what decides its version number.", "synthesis"),
    ("Give an overview of the plugins and which settings control them.", "synthesis"),
    ("总结一下备份的流程，以及由哪个选项决定保留几份。", "synthesis"),
    ("What did the old config format use for comments?", "temporal"),
    ("What is the code name of release 4.2?", "temporal"),
    ("2.0 版的代号是什么？", "temporal"),
    ("How long does the build take?", "fact"),
    ("多久备份一次？", "fact"),
]


GENERIC_CUES_ROUND_14 = [  # written for this test (issue 41, round 14), about no corpus of any benchmark
    # a span between two versions, or changes that break, is temporal before any survey over kinds of things
    ("Which settings were renamed between 3.1 and 3.4?", "temporal"),
    ("List the breaking changes of the new storage format.", "temporal"),
    ("3.1 到 3.4 之间哪些设置改了默认值？", "temporal"),
    ("新的存储格式带来了哪些不兼容的改动？", "temporal"),
    # a release's life, what a version changed, what still gets fixes; 什么时候用 asks for a use, not a date
    ("Does the 2.x branch still get bug fixes?", "temporal"),
    ("How long is a long-term support release of the database maintained?", "temporal"),
    ("第 4 版的插件接口有什么变化？", "temporal"),
    ("旧的 1.x 分支还有安全更新吗？", "temporal"),
    ("归档格式自上一个大版本以来有什么改动？", "temporal"),
    ("Describe the lifecycle of a message from the queue to the consumer.", None),
    ("How do I revert a change in the spreadsheet?", None),
    # choosing one of two, one unlike or the same as the other
    ("Should we pick the embedded database or a separate server?", "compare"),
    ("Why prefer the streaming parser over the tree parser?", "compare"),
    ("Explain how a shallow copy is unlike a deep copy.", "compare"),
    ("Is a symlink to a directory the same as a bind mount?", "compare"),
    ("Are the short and the long option names interchangeable?", "compare"),
    ("How do the two journaling modes behave after a power cut?", "compare"),
    ("Which exit status does the checker return when the checksums differ?", None),
    ("浅拷贝和深拷贝分别适合什么场景？", "compare"),
    ("长选项和短选项是一回事吗？", "compare"),
    ("同步复制与异步复制有哪些共同点？", "compare"),
    ("日志放本地磁盘还是网络存储更可靠？", "compare"),
    ("为什么推荐用流式解析器而不用树形解析器？", "compare"),
    ("内嵌数据库和独立服务器什么时候用哪个？", "compare"),
    # what one thing implies, references, draws on or runs, and 受…限制, 根据哪些, 从哪里获取
    ("Which flag of the archiver implies --recursive?", "relation"),
    ("Which tables reference the invoices table?", "relation"),
    ("Which function does the hook module call before each commit?", "relation"),
    ("上传大小受哪些参数限制？", "relation"),
    ("备份程序根据哪些变量决定目标目录？", "relation"),
    ("同步工具从哪里读取排除规则？", "relation"),
    ("安装软件包之后会运行哪些脚本？", "relation"),
    ("这个阅读器用哪个库解析 EPUB 文件？", "relation"),
    ("哪个服务派生这些工作进程？", "relation"),
    ("What does the --no-load switch of the builder do?", None),
    ("我从哪里获取安装镜像？", None),
    # a whole process, a practice across the whole code, 列举, 都讲了什么
    ("Walk through the complete deployment workflow of the service.", "synthesis"),
    ("How are translations handled across the codebase?", "synthesis"),
    ("请描述一次构建的完整过程。", "synthesis"),
    ("整个项目里是怎样记录日志的？", "synthesis"),
    ("列举导入数据的所有途径。", "synthesis"),
    ("教程在权限管理方面都讲了什么？", "synthesis"),
    ("总体来说，文档对数据库调优给了什么建议？", "synthesis"),
]


GENERIC_CUES_ROUND_15 = [  # written for this test (issue 41, round 15), about no corpus of any benchmark
    # the ways to do something are a survey, whatever the things listed before the ways relate or compare
    ("What are the ways to compare two snapshots of a disk?", "synthesis"),
    ("What are the different tools for watching the queue's length?", "synthesis"),
    ("想知道某个进程打开了哪些文件、某个端口属于哪个进程，都有什么办法？", "synthesis"),
    ("备份数据库都有什么办法？", "synthesis"),
    ("升级时想保留本地改动，有哪些做法可以不被覆盖？", "synthesis"),
    ("What are the options to control the cache size?", "relation"),
    ("有哪些选项可以控制缓存大小？", "relation"),
    # three or more things listed, each asked about, or listed as examples of what the question covers
    ("模块之间有哪些依赖关系：强依赖、可选依赖和构建依赖分别是什么？", "synthesis"),
    ("What can slow the server down, such as swapping, full disks and too many open files?", "synthesis"),
    ("服务器变慢时该怎么办，比如内存不足、磁盘写满和连接数太多？", "synthesis"),
    ("模块 A 和模块 B 分别是什么？", None),
    # what a thing goes through to reach another
    ("Which file gives shells their aliases, and through which module is it read?", "relation"),
]


GENERIC_CUES_ROUND_16 = [  # written for this test (issue 41, round 16), about no corpus of any benchmark
    # a survey: what the documents say about each of several things, a list after a colon, the kinds of a thing,
    # the differences among all of several things, two questions in one, what a book says about a topic
    ("Which storage backends does the manual describe, and what does it say about each?", "synthesis"),
    ("Which files does the plugin template ship, and what is each one for?", "synthesis"),
    ("Which checks does the linter run before a release: style, type errors and unused imports?", "synthesis"),
    ("What does the handbook say about backing up the mail server?", "synthesis"),
    ("How can reports be generated every night without anyone logging in, and what alerts the team when one fails?",
     "synthesis"),
    ("What kinds of caches does the browser keep?", "synthesis"),
    ("What output formats are available?", "synthesis"),
    ("What are the differences between the various log levels?", "synthesis"),
    ("数据库的各种隔离级别（读未提交、读已提交、可重复读、串行化）有什么区别？", "synthesis"),
    ("发布前要做哪些检查：代码风格、类型检查和单元测试？", "synthesis"),
    ("这个编辑器有哪几类插件？", "synthesis"),
    ("Which tool installs the plugin, and where is it installed?", None),
    # a relation: what changes, corresponds to, wins over, conflicts with, is consulted by or decides what
    ("Which environment variables change the default output format of the report tool?", "relation"),
    ("Which setting corresponds to the --max-age option?", "relation"),
    ("If both the flag and the variable are set, which one takes precedence?", "relation"),
    ("Which options conflict with --dry-run?", "relation"),
    ("Which configuration file is consulted when the resolver starts?", "relation"),
    ("Is the thumbnailer service activated by the file manager?", "relation"),
    ("What does the pager have to do with the LESS variable?", "relation"),
    ("How does the installer decide which disks to format?", "relation"),
    ("How does enabling the cache change what the proxy does with stale pages?", "relation"),
    ("What does the strict flag in the project file mean for the build order?", "relation"),
    ("Where does the status bar get the battery level it shows?", "relation"),
    ("What effect does the locale setting have on sorting?", "relation"),
    ("哪个配置文件里可以设置默认的时区？", "relation"),
    ("--max-age 选项对应哪个配置项？", "relation"),
    ("哪些环境变量会改变报表工具的输出格式？", "relation"),
    ("哪些选项与 --dry-run 互斥？", "relation"),
    ("同时设置了参数和环境变量时，哪个优先？", "relation"),
    ("守护进程通过哪个套接字接收请求？", "relation"),
    ("加载器是如何决定哪些模块需要加载的？", "relation"),
    ("压缩级别对备份速度有什么影响？", "relation"),
    # how-to look-alikes: a command that changes something, a way to see a list, the asker deciding
    ("如何查看哪些用户登录过系统？", "fact"),
    ("Which command changes the owner of a file?", None),
    ("哪个命令可以改变文件的权限？", None),
    ("通过哪个命令可以查看磁盘用量？", None),
    ("How do I decide which disk to format?", None),
    ("我怎么确定哪个磁盘是系统盘？", None),
    ("Where do I get the installer image?", None),
    ("How do I change the prompt colour?", None),
    ("Name all the tools that check a package before it is uploaded.", "synthesis"),
]


GENERIC_CUES_ROUND_17 = [  # written for this test (issue 41, round 17), about no corpus of any benchmark
    # a comparison: what one thing does that the other does not, what each of two things does
    ("What can rsync do that scp can't?", "compare"),
    ("Which checks does mypy run that pylint does not?", "compare"),
    ("What do cron and anacron each do?", "compare"),
    ("nginx 和 Apache 各自负责什么？", "compare"),
    ("rsync 能断点续传而 scp 不能，还有别的区别吗？", "compare"),
    # a relation: a part asked for at a clause's end, what a thing is steered or made by (由 X 控制的)
    ("Is the kernel part of the base system, and can I remove it?", "relation"),
    ("Which plugin suite is the linter part of, and where is it documented?", "relation"),
    ("哪些文件是由安装程序生成的？", "relation"),
    ("哪些端口是由防火墙控制的，不能随便打开？", "relation"),
    # a survey: a process asked over its span (…, from X to Y?)
    ("How is a release prepared, from freezing to the announcement?", "synthesis"),
    ("发布是怎么准备的，从冻结到发布公告？", "synthesis"),
]
ROUND_17_LOOK_ALIKES = [  # (question, the type the new cues must not give it)
    ("What happens to files that apt does not remove?", "compare"),
    ("What does the daemon do that I did not ask for?", "compare"),
    ("What do Postfix, Dovecot and procmail each do?", "compare"),
    ("Postfix、Dovecot 和 procmail 各管什么？", "compare"),
    ("为什么能 ping 通而浏览器打不开网页？", "compare"),
    ("Which step is the longest part of the installation?", "relation"),
    ("由我自己设置的密码忘了怎么办？", "relation"),
    ("How do I copy the files, from the old disk to the new one?", "synthesis"),
    ("How do I convert a file from PNG to JPEG?", "synthesis"),
    ("我该怎么拷贝文件，从旧硬盘到新硬盘？", "synthesis"),
    ("如何从 bullseye 升级到 bookworm？", "synthesis"),
]


GENERIC_CUES_ROUND_18 = [  # written for this test (issue 41, round 18), about no corpus of any benchmark
    # a relation asked yes or no (does X decide which Y), what a thing generates, 会不会影响
    ("Does the locale setting decide which date format the report uses?", "relation"),
    ("Does the umask control whether new files are world-readable?", "relation"),
    ("Which files does the installer generate for the boot loader?", "relation"),
    ("时区设置会不会影响日志里的时间戳？", "relation"),
    # a survey over the tools that help with several tasks, over 哪些介质或方式
    ("Which tools help me profile memory, find leaks or trace calls?", "synthesis"),
    ("可以用哪些介质或途径来备份数据库？", "synthesis"),
    # a time: how long something waits before an event
    ("How many days must a bug report wait before it is closed automatically?", "temporal"),
    ("How long does a mirror sit behind the archive before it syncs again?", "temporal"),
]
ROUND_18_LOOK_ALIKES = [  # (question, the type the new cues must not give it)
    ("Do I decide which disk to format?", "relation"),
    ("Does the installer format the disk?", "relation"),
    ("我是否需要设置密码？", "relation"),
    ("Which tool helps me profile memory?", "synthesis"),
    ("How long does the key need to be?", "temporal"),
    ("How many days does the trial licence last?", "temporal"),
]


GENERIC_CUES_ROUND_19 = [  # written for this test (issue 41, round 19), about no corpus of any benchmark
    # a choice between two courses ("…, or do we need …", "…吗，还是得…"), one thing done instead of another
    ("Can we keep the old RAID controller, or do we need a new one for the larger disks?", "compare"),
    ("Should I stay on the LTS kernel, or do I switch to the backports one?", "compare"),
    ("这台旧打印机直接插 USB 就能用吗，还是得先装驱动？", "compare"),
    ("用静态地址好不好，还是交给 DHCP 分配？", "compare"),
    ("If I mount the share over NFS instead of SMB, what works differently?", "compare"),
    ("What is different when the job runs as root rather than as a normal user?", "compare"),
    # a survey over what one can do, over the jobs that recur
    ("The build machine keeps running out of memory; what are my options?", "synthesis"),
    ("Our mail queue is stuck. What are the alternatives?", "synthesis"),
    ("Which tasks does the backup server run each night?", "synthesis"),
    # a relation: what one thing needs from another, what must act for a change to take effect, does B follow A
    ("What does a thin client need from the boot server to start?", "relation"),
    ("Which service has to be restarted for the new firewall rules to take effect?", "relation"),
    ("改了 DNS 配置以后，要重启哪个服务才能生效？", "relation"),
    ("改了主机名以后，证书里的名字会跟着变吗？", "relation"),
    ("要在哪个配置文件里把默认语言改成中文？", "relation"),
]
ROUND_19_LOOK_ALIKES = [  # (question, the type the new cues must not give it)
    ("Can I install it from a USB stick, or is that not supported?", "compare"),
    ("重启以后，还是连不上网怎么办？", "compare"),
    ("What is different in version 2?", "compare"),
    ("What are the options of the tar command?", "synthesis"),
    ("Which job runs every hour?", "synthesis"),
    ("What do I need from the store to build it?", "relation"),
    ("Which command has to be run to install the package?", "relation"),
    ("这个服务会随系统启动吗？", "relation"),
]


GENERIC_CUES_ROUND_21 = [  # written for this test (issue 41, round 21), about no corpus of any benchmark
    # a relation: whether two things are tied ("有关系吗"), whether a change forces another step, which setting overrides
    ("Is the thumbnail size tied to the display resolution?", "relation"),
    ("日志级别和构建配置有关系吗？", "relation"),
    ("导出的单位和工程设置有没有关系？", "relation"),
    ("代理设置跟系统的网络配置有关吗？", "relation"),
    ("After changing the schema, do I have to rebuild the search index?", "relation"),
    ("Once I rotate the signing key, do I need to re-sign the old packages?", "relation"),
    ("After an upgrade, do I need to restart the mail daemon?", "relation"),
    ("改了数据库结构以后，还要重建索引吗？", "relation"),
    ("换了签名密钥之后，旧的软件包需要重新签名吗？", "relation"),
    ("升级内核之后，要不要重新编译这个驱动？", "relation"),
    ("可以用哪个环境变量临时改掉默认编辑器？", "relation"),
    ("用哪个选项可以临时覆盖日志目录？", "relation"),
    ("索引没重建的话，搜索结果还准吗？", "relation"),
    ("If the cache was not cleared, are the benchmark figures still accurate?", "relation"),
    ("Does the network manager override the settings in the interfaces file?", "relation"),
    ("网络管理器会覆盖 interfaces 文件里的设置吗？", "relation"),
    ("If I change the hostname, does the mail setup need to change too?", "relation"),
    ("安装程序会把哪些参数传给引导加载器？", "relation"),
    # a time: set against earlier versions, a wait before a promotion
    ("和以前的版本相比，保存文件的方式有什么变化？", "temporal"),
    ("How does the new release handle saving compared to older versions?", "temporal"),
    ("新功能至少要在测试版里待几个月，才能进入稳定版？", "temporal"),
    # a number on a scale is a fact, a choice between two destinations a comparison (reference-zh-cn, faq-zh-cn,
    # developers-reference-en dev, which the exemplars decided only while fitted on them)
    ("系统日志一共分几级？", "fact"),
    ("安全模式的默认级别是几？", "fact"),
    ("Should local patches go to the main branch or to a feature branch?", "compare"),
    ("Should the cache files live in /var or in /tmp?", "compare"),
]
ROUND_21_LOOK_ALIKES = [  # (question, the type the new cues or the narrowed ones must not give it)
    ("What UID range is set aside for system services?", "relation"),       # set aside steers nothing
    ("重建索引用哪个命令？", "relation"),                                       # 索引 + 用 is no 引用
    ("LTSP 服务器升级以后，需要重新生成什么？", "relation"),                      # an open question, no yes-or-no
    ("和这个问题有关系的日志文件在哪里？", "relation"),
    ("升级以后，怎么重新启动服务？", "relation"),
    ("After installing, should I read the release notes?", "relation"),
    ("How do I rebuild the search index after changing the schema?", "relation"),
    ("文件在回收站里放几天会被删除？", "temporal"),
    ("这个时间还准吗？", "relation"),
    ("怎么把日志文件传给另一台机器？", "relation"),
    ("Does the backup tool overwrite old archives?", "relation"),
    ("日志有哪几级？", "fact"),
    ("Should I be worried or not?", "compare"),
    ("Is the 2019 certificate still valid?", "relation"),
    ("和 PDF 相比，SVG 导出有什么好处？", "temporal"),
]


@pytest.mark.parametrize("query,kind", GENERIC_CUES_ROUND_17 + GENERIC_CUES_ROUND_18 + GENERIC_CUES_ROUND_19
                         + GENERIC_CUES_ROUND_21)
def test_round_17_to_21_cues_type_their_questions(query, kind):
    # round 17: what one thing does that another does not, spans; round 18: yes-or-no relations, tool surveys, waits;
    # round 19: choices between two courses, "what are my options", recurring jobs, what a thing needs or follows;
    # round 21 (from harden-en, kicad-pcb-zh-cn and handbook-zh-cn dev): ties, steps a change forces, overrides, versions
    from lambdarag.domains import profile_named

    c = classifiers.rule_classify(query, (), profile_named("generic"))
    assert c is not None and (c.type, c.stage) == (kind, "rules"), c


@pytest.mark.parametrize("query,kind", ROUND_17_LOOK_ALIKES + ROUND_18_LOOK_ALIKES + ROUND_19_LOOK_ALIKES
                         + ROUND_21_LOOK_ALIKES)
def test_round_17_to_21_cues_leave_their_look_alikes_alone(query, kind):
    from lambdarag.domains import profile_named

    c = classifiers.rule_classify(query, (), profile_named("generic"))
    assert c is None or c.type != kind, c


@pytest.mark.parametrize("query", ["Name the command that lists open ports.",
                                   "Name the file that holds a user's cron jobs."])
def test_naming_one_thing_is_no_survey(query):
    # "name the X" asks for one thing; "name all", "list the", "enumerate the" ask for several
    from lambdarag.domains import profile_named

    c = classifiers.rule_classify(query, (), profile_named("generic"))
    assert c is None or c.type != "synthesis", c


@pytest.mark.parametrize("query,kind", GENERIC_TIMES_AND_SURVEYS + GENERIC_CUES_ROUND_14 + GENERIC_CUES_ROUND_15
                         + GENERIC_CUES_ROUND_16)
def test_generic_rules_tell_each_cue_family_from_look_alikes_in_both_languages(query, kind):
    # kind None: a look-alike no cue may call a relation, a comparison or a time (a flag's -run, 从哪里 of the
    # asker, files that differ, a change in a document)
    from lambdarag.domains import profile_named

    c = classifiers.rule_classify(query, (), profile_named("generic"))
    if kind is None:
        assert c is None or c.type not in ("relation", "compare", "temporal"), c
    else:
        assert c is not None and (c.type, c.stage) == (kind, "rules"), c


@pytest.mark.parametrize("corpus", ["reference-en", "reference-zh-cn", "faq-zh-cn", "handbook-en", "valgrind-en",
                                    "maint-guide-en"])
def test_generic_type_accuracy_on_the_dev_half_of_each_documentation_corpus(corpus):
    # issue 41 asks relation >= 0.85 and overall >= 0.90 per corpus; tuned on dev, the frozen test half is
    # reported by bench/classify_types.py only
    from lambdarag.domains import profile_named

    term, ctx = build("classify_offline", {}), Context(resources={"profile": profile_named("generic")})
    rows = half("dev", f"domains/{corpus}")
    got = [(r["type"], term.run(r["query"], ctx).query_type) for r in rows]
    relation = [kind == "relation" for gold, kind in got if gold == "relation"]
    assert sum(gold == kind for gold, kind in got) / len(got) >= 0.9, got
    assert sum(relation) / len(relation) >= 0.85, got



def test_classify_types_reads_only_the_halves_it_is_given(monkeypatch):
    # a held-out corpus's test half must never be loaded by a run on its dev half (bench/classify_types.py --halves)
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "bench"))
    import classify_types

    read = []
    monkeypatch.setattr(classify_types, "load_domain", lambda name, h: read.append(h) or [])
    assert list(classify_types.halves("maint-guide-en", ("dev", "dev3"))) == ["dev", "dev3"]
    assert read == ["dev", "dev3"]
    assert list(classify_types.halves("maint-guide-en")) == ["dev", "test", "dev2", "dev3"]


def test_a_leave_one_book_out_fit_holds_no_question_of_its_book_and_reads_no_frozen_half(monkeypatch, tmp_path):
    # bench/classify_types.py --lobo: the estimate for a book nobody labelled (issue 41); both languages of a book
    # leave together, and a dev-opened corpus's frozen test half is never loaded to find its questions
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "bench"))
    import classify_types
    from domain_data import DEV_OPENED, book_of, open_halves

    read = []
    load = classify_types.load_domain
    monkeypatch.setattr(classify_types, "load_domain", lambda name, h: read.append((name, h)) or load(name, h))
    shipped = {q for q, _ in classify_types.profile_named("generic").classifier.exemplars}
    for book in sorted({book_of(c) for c in classify_types.LOBO_SETS}):
        corpora = [c for c in classify_types.LOBO_SETS if book_of(c) == book]
        asked = {r["query"] for c in corpora for h in open_halves(c) for r in load(c, h)}
        kept = {q for q, _ in classify_types.lobo_profile(book, tmp_path).classifier.exemplars}
        assert not kept & asked, (book, kept & asked)
        assert shipped - kept <= asked and len(kept) >= len(shipped) - len(asked)
    assert shipped & {r["query"] for r in load("handbook-zh-cn", "dev")}     # a leak would show: the fit holds them
    assert not {(c, "test") for c in DEV_OPENED} & set(read)


def test_a_leave_one_book_out_run_drops_the_cues_that_fire_on_its_book_alone(monkeypatch):
    # --lobo (round 22): a cue firing on one book's questions and no other's may have been written on that book, so
    # its run classifies without it; a cue another book fires on too is kept. Questions written for this test.
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "bench"))
    import classify_types
    from lambdarag.domains import profile_named

    read = {"alpha-en": {"dev": [{"query": "Who is in charge of the mirror network?"}]},
            "beta-en": {"dev": [{"query": "What does the scheduler depend on?"}]},
            "gamma-zh-cn": {"dev": [{"query": "Which service depends on the clock daemon?"}]}}
    fired = classify_types.cue_books(read)
    generic = profile_named("generic")
    alone = classifiers.rule_classify("Who is in charge of the mirror network?", (),
                                      classify_types.without_cues(generic, classify_types.own_cues(fired, "alpha")))
    shared = classifiers.rule_classify("What does the scheduler depend on?", (),
                                       classify_types.without_cues(generic, classify_types.own_cues(fired, "beta")))
    assert classifiers.rule_classify("Who is in charge of the mirror network?", (), generic).rule == "in charge of"
    assert alone is None or alone.rule != "in charge of", alone
    assert (shared.type, shared.rule) == ("relation", "depend on"), shared


RELATION_SHAPES_ROUND_22 = [  # written for this test (issue 41, round 22), about no corpus of any benchmark
    # two ends tied by a verb, one asked for or the tie asked yes or no: main called them compare or nothing
    ("What does the backup job compare to decide that a file has changed?", "relation"),
    ("Which part of the compositor does the screen reader hook into?", "relation"),
    ("Does enabling compression in the proxy change the cache keys?", "relation"),
    ("Will raising the thread limit in the pool affect the request timeout?", "relation"),
    ("开启压缩以后会影响缓存命中率吗？", "relation"),
    # the asker acts, a time is asked, or the asker's own things change: no tie between two things
    ("How do I configure the print spooler to share a queue?", None),
    ("Which command do I use to list the loaded modules?", None),
    ("Can I change the default shell without root?", None),
    ("Does the installer change my partition table?", None),
    ("Since which version can the editor read compressed files?", "temporal"),
    ("源文件改了以后，缩略图什么时候才会跟着更新？", "temporal"),
]


def assert_shape(query: str, kind: str | None, unlike: tuple[str, ...]) -> None:
    """Asserts that the generic rules type `query` as `kind`, or, for a look-alike (`kind` None), as none of `unlike`."""
    from lambdarag.domains import profile_named

    c = classifiers.rule_classify(query, (), profile_named("generic"))
    if kind is None:
        assert c is None or c.type not in unlike, c
    else:
        assert c is not None and (c.type, c.stage) == (kind, "rules"), c


@pytest.mark.parametrize("query,kind", RELATION_SHAPES_ROUND_22)
def test_a_relation_is_recognised_by_its_shape_not_a_books_wording(query, kind):
    # domains/generic/ties.py: one lexicon of tying verbs under a few question shapes, in both languages
    assert_shape(query, kind, ("relation",))


GENERIC_EXEMPLAR_CASES_ROUND_20 = [  # written for this test (issue 41, round 20), about no corpus of any benchmark
    # no cue settles these: the learned classifier fitted with the dev halves' questions decides (main: fact)
    ("一个补丁至少要在测试分支里待几天，才能合进主分支？", "temporal"),
    ("想给这个开源项目出力，可以怎么参与：写代码、做测试还是捐钱？", "synthesis"),
    ("If my plugin calls a helper from the core package, do I still have to declare that package as a requirement?",
     "relation"),
    # how-to and where-is look-alikes stay facts
    ("How do I restart the print spooler?", "fact"),
    ("打印队列的配置文件放在哪个目录？", "fact"),
    ("What exit code does the backup tool return by default when a file was skipped?", "fact"),
]


@pytest.mark.parametrize("query,kind", GENERIC_EXEMPLAR_CASES_ROUND_20)
def test_generic_questions_no_cue_settles_get_their_type_from_the_exemplars(query, kind):
    from lambdarag.domains import profile_named

    c = build("classify_offline", {}).run(query, Context(resources={"profile": profile_named("generic")})).classification
    assert c.type == kind, c


def test_the_generic_exemplars_hold_every_dev_question_but_relations_and_no_test_half(monkeypatch):
    # scripts/classify_exemplars.py writes them; a test half (frozen or held out) never becomes an exemplar
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "scripts"))
    import classify_exemplars
    from lambdarag.domains.generic import EXEMPLARS

    rows = [json.loads(line) for line in EXEMPLARS.read_text(encoding="utf-8").splitlines() if line.strip()]
    sourced = [r for r in rows if "source" in r]
    assert sourced == classify_exemplars.labelled_rows()
    assert {r["source"].split("/")[1] for r in sourced} <= {"dev", "dev2", "dev3"}
    assert "relation" not in {r["type"] for r in sourced}
    from domain_data import HELD_OUT                       # on the path through classify_exemplars
    assert not {r["source"].split("/")[0] for r in sourced} & set(HELD_OUT)   # held out: not even their dev half


def test_no_exemplar_is_a_question_of_a_test_half_or_of_a_held_out_corpus(monkeypatch):
    # by text, whatever source a row names: the frozen test halves and every half of a held-out corpus stay unseen
    # by the learned classifier (the count only is reported: a frozen question is never printed)
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "bench"))
    from domain_data import HELD_OUT, LABELLED, halves_of, load
    from lambdarag.domains.generic import EXEMPLARS

    shipped = {json.loads(line)["query"] for line in EXEMPLARS.read_text(encoding="utf-8").splitlines() if line.strip()}
    frozen = {r["query"] for c in LABELLED for h in halves_of(c) if h == "test" or c in HELD_OUT for r in load(c, h)}
    assert len(frozen) > 100 and len(shipped & frozen) == 0, len(shipped & frozen)


@pytest.mark.parametrize("query,relation", [("What does the Sources section of the manual link to?", True),
                                            ("Which page does the FAQ refer to?", True),
                                            ("How do I link to a static library?", False)])
def test_a_question_ending_at_what_a_thing_links_to_is_a_relation(query, relation):
    # no exemplar decides it any more: the dev questions among the exemplars took "link to" to fact
    from lambdarag.domains import profile_named

    c = classifiers.rule_classify(query, (), profile_named("generic"))
    assert (c is not None and (c.type, c.stage) == ("relation", "rules")) == relation, c


TYPE_SHAPES_ROUND_23 = [  # written for this test (issue 41, round 23), about no corpus of any benchmark
    # the order in which steps happen is a time, in either language: main called them fact or compare
    ("In what order does the build tool apply the patches to the source tree?", "temporal"),
    ("Which order do the startup scripts run in?", "temporal"),
    ("装双系统的话，先装哪一个、后装哪一个？", "temporal"),
    ("备份和升级的先后顺序是什么？", "temporal"),
    # a time asked of plural releases: which ones, not what kinds
    ("Which Ubuntu releases does the tutorial apply to?", "temporal"),
    # a choice of which of two to use or pick: a comparison, whatever it goes on to ask
    ("做个人博客该用 SQLite 还是 MySQL，哪个维护起来省事？", "compare"),
    ("家里的路由器选有线回程还是无线回程？", "compare"),
    # look-alikes: one thing's steps, one release's date, a how-to with 还是 about a single thing
    ("What order of magnitude is the default cache size?", None),
    ("Which Ubuntu release came out in April?", "temporal"),
    ("重装以后还是连不上网，怎么办？", None),
]


@pytest.mark.parametrize("query,kind", TYPE_SHAPES_ROUND_23)
def test_order_plural_releases_and_a_choice_of_two_are_recognised_by_their_shape(query, kind):
    # domains/generic/cues.py: the order of steps is a time, "which releases" a time, "用 A 还是 B" a comparison
    assert_shape(query, kind, ("temporal", "compare"))


@pytest.mark.parametrize("query,relation", [  # written for this test (issue 41, round 23), about no corpus
    ("Can a user on the guest account change the wallpaper?", False),
    ("Can someone without sudo change the hostname?", False),
    ("Does a user's umask change the mode of new files?", True),
    ("Can the proxy's cache size change the response time?", True),
    ("Which daemon runs the cleanup job every night?", True),       # a thing runs another: a tie
    ("Which command do I run to empty the cache?", False),
])
def test_a_person_who_can_change_something_asks_no_tie(query, relation):
    # ties.py: as with the asker, a person as the subject of a yes-or-no acts; two things are not tied
    assert_shape(query, "relation" if relation else None, ("relation",))


GENERIC_EXEMPLAR_CASES_ROUND_23 = [  # written for this test (issue 41, round 23), about no corpus of any benchmark
    # what a change forces or leaves stale, asked in words no cue knows: the exemplars call it a relation (main: fact)
    ("After migrating the mailboxes to the new server, do I have to re-create the spam filter rules?", "relation"),
    # how-to and where-is look-alikes stay facts
    ("After a kernel upgrade, how do I rebuild the driver module?", "fact"),
    ("升级数据库以后怎么重新配置备份脚本？", "fact"),
    ("Where does the backup tool write its log?", "fact"),
]


@pytest.mark.parametrize("query,kind", GENERIC_EXEMPLAR_CASES_ROUND_23)
def test_what_a_change_forces_is_a_relation_to_the_exemplars(query, kind):
    from lambdarag.domains import profile_named

    c = build("classify_offline", {}).run(query, Context(resources={"profile": profile_named("generic")})).classification
    assert (c.type, c.stage) == (kind, "exemplars"), c


TIME_SHAPES_ROUND_24 = [  # written for this test (issue 41, round 24), about no corpus of any benchmark
    # what follows an event, on a book with no versions: main left them to the exemplars, which called them fact
    ("What happens to the open tabs when the browser restarts?", "temporal"),
    ("What happens if the disk fills up while the backup is running?", "temporal"),
    ("下载到一半断网了会怎样？", "temporal"),
    ("关机的时候正在写入的文件会发生什么？", "temporal"),
    # which of two steps or things comes first
    ("Should I flash the firmware first or reset the settings first?", "temporal"),
    ("Do I pair the headphones before or after installing the app?", "temporal"),
    ("Once the mailbox is full, which message is dropped first?", "temporal"),
    ("先升级固件还是先重置设置？", "temporal"),
    ("回收站满了以后，系统先清掉哪个文件？", "temporal"),
    # when an event occurs, whether a thing changes later, what holds before it happens
    ("When exactly does the screensaver lock the session?", "temporal"),
    ("The contact's photo was changed on the phone - does the laptop's copy update later?", "temporal"),
    ("还没连上网络的时候，状态栏显示什么？", "temporal"),
    ("同步完成以后，手机上的记录还会再变吗？", "temporal"),
    # look-alikes: the asker's when, the first of a list, a how-to in two steps, what decides the order or must run first
    ("When do I need a static IP address?", None),
    ("What is the first option in the menu?", None),
    ("先装好驱动，再怎么设置打印机？", None),
    ("开机时先挂载网络盘还是先启动数据库，由哪个文件决定？", "relation"),
    ("装打印机驱动之前需要先启动哪些服务？", "relation"),
]


@pytest.mark.parametrize("query,kind", TIME_SHAPES_ROUND_24)
def test_a_time_is_recognised_by_the_order_of_events_without_a_version(query, kind):
    # domains/generic/times.py: what follows an event, which comes first, when it happens are times on any book
    assert_shape(query, kind, ("temporal",))


SHAPES_ROUND_24 = [  # written for this test (issue 41, round 24), about no corpus of any benchmark
    # whether a thing follows a change, whether one setting can be overridden in another place: relations
    ("换了主题以后，图标会跟着换颜色吗？", "relation"),
    ("在系统设置里定好的代理，可以在浏览器的选项页里覆盖吗？", "relation"),
    ("Can a proxy set in the system settings be overridden in the browser?", "relation"),
    # which options a thing offers, what one can customise about it: surveys
    ("Which sharing and printing options does the photo app give me?", "synthesis"),
    ("What can I customise about the login screen?", "synthesis"),
    # look-alikes: a single option, a how-to that follows a tutorial
    ("Which option does the photo app give for the date format?", None),
    ("跟着教程装完驱动，还要重启吗？", None),
]


@pytest.mark.parametrize("query,kind", SHAPES_ROUND_24)
def test_a_following_change_an_override_in_place_and_a_things_options_are_recognised(query, kind):
    # ties.py and cues.py (round 24)
    assert_shape(query, kind, ("relation", "synthesis"))


@pytest.mark.parametrize("query,relation", [  # written for this test (issue 41, round 24), about no corpus
    ("Does emptying the trash delete the files from the cloud backup?", True),
    ("Does resetting the router erase the port forwarding rules?", True),
    ("If the signature check fails, is the update still installed?", True),
    ("Does it delete the files?", False),                        # no thing acts: "it" is the asker's
    ("Can someone remove the shared folder?", False),            # a person acts, as the asker does
    ("If the disk is full, how do I still save the file?", False),
])
def test_what_one_thing_removes_from_another_or_leaves_in_place_is_a_relation(query, relation):
    # ties.py: removing is a tie as changing is; cues.py: what a condition still leaves done
    assert_shape(query, "relation" if relation else None, ("relation",))


SHAPES_ROUND_25 = [  # written for this test (issue 41, round 25), about no corpus of any benchmark
    # what a condition still leaves done, asked of a thing's action: relations (main: no rule)
    ("If I set a proxy but connect through a VPN, does the browser still use the proxy?", "relation"),
    ("When the laptop runs on battery, does the indexer still scan the home folder?", "relation"),
    ("如果关掉了自动同步，相册还会上传新照片吗？", "relation"),
    # whether one thing stops or prevents another
    ("Can a screen saver or a power plan stop the download manager from finishing?", "relation"),
    ("Does the firewall prevent the printer from reaching the update server?", "relation"),
    # what a conversion leaves possible: whether the converted thing can still be edited or turned back
    ("After converting the table to plain text, can I still sort its rows?", "relation"),
    ("把图层合并成一张图片以后，还能再单独移动里面的图层吗？", "relation"),
    ("视频转成 GIF 之后，还可以恢复声音吗？", "relation"),
    # look-alikes: the asker acts, a how-to under a condition, a person stops something, a plain conversion how-to
    ("If the disk is full, do I still get a warning?", None),
    ("If the network is down, how can I still print?", None),
    ("如果没联网，我还能安装吗？", None),
    ("Can I stop the download manager from the tray?", None),
    ("Can someone stop the backup job?", None),
    ("How do I convert the table to plain text?", None),
    ("怎么把图层合并成一张图片？", None),
    # whether ticking a setting moves or changes a thing: a relation; an event's later change stays a time
    ("导出时勾选“嵌入字体”，文档里的行距会不会变？", "relation"),
    ("同步完成以后，手机上的记录还会再变吗？", None),
    # 对 inside a word (对象, 对话框) is no "对…有什么作用" (what X does to Y): a key's use is a fact
    ("拖动对象的时候按住 Alt 键有什么作用？", None),
    ("对话框里的“应用”按钮有什么作用？", None),
]


@pytest.mark.parametrize("query,kind", [  # written for this test (issue 41, round 25), about no corpus
    ("I renamed the shared folder — when does the sync client pick up the new name?", "temporal"),
    ("The printer was unplugged: when does the queue drop the waiting jobs?", "temporal"),
    ("I moved to a new flat — when do I need to update my address?", None),   # the asker's when
])
def test_an_events_when_after_a_dash_or_colon_is_a_time(query, kind):
    # times.py: "when does X happen" after the clause that sets the scene, as at the question's start
    assert_shape(query, kind, ("temporal",))


@pytest.mark.parametrize("query,kind", SHAPES_ROUND_25)
def test_a_condition_a_stop_and_a_conversion_that_leave_a_thing_done_or_possible_are_relations(query, kind):
    # ties.py and cues.py (round 25)
    assert_shape(query, kind, ("relation",))


SHAPES_ROUND_26 = [  # written for this test (issue 41, round 26), about no corpus of any benchmark
    # why a thing still acts after a change or despite a setting: a tie the change did not cut (main: no rule)
    ("Why does the firewall still let traffic through port 8080 after I removed the rule?", "relation"),
    ("Why is the old wallpaper still shown on the lock screen?", "relation"),
    ("为什么关掉了自动备份，网盘里还是有新的备份文件？", "relation"),
    # round 23's why-still cases, the exemplars' until the shape knew them
    ("Why does the browser still use the old proxy after I changed the system proxy setting?", "relation"),
    ("为什么改了系统代理设置，浏览器还是走旧的代理？", "relation"),
    # what a condition still leaves possible, the thing named by a pronoun: a relation (main: no rule)
    ("If the printer runs in power-saving mode, can it still wake up for jobs sent over the network?", "relation"),
    ("When the database is read-only, does it still accept new connections?", "relation"),
    # whether doing one thing lets another happen (as removing it does, round 24)
    ("Does enabling guest access let visitors see the shared calendars?", "relation"),
    ("Does pinning a tab allow the browser to unload it in the background?", "relation"),
    # look-alikes: the asker acts, asks why in general, or asks a tool's own permission
    ("Why do I still see the old version after updating?", None),
    ("Why is the default port 8080?", None),
    ("If the network is down, can I still print?", None),
    ("Does the editor let me undo a deleted paragraph?", None),
    ("为什么我的密码还是不对？", None),
]


@pytest.mark.parametrize("query,kind", SHAPES_ROUND_26)
def test_why_a_thing_still_acts_what_a_condition_leaves_possible_and_what_doing_one_thing_lets_are_relations(
        query, kind):
    # ties.py and cues.py (round 26): shapes firing on the questions of several books, not on one book's phrase
    assert_shape(query, kind, ("relation",))


def test_a_relation_cue_wins_on_a_book_whose_question_it_alone_types_right(monkeypatch):
    # --lobo (round 26): a relation cue's worth on the honest run is the books whose questions lose their right type
    # without it (wins) or gain it (losses); questions written for this test, the learned classifier off (fact)
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "bench"))
    import copy
    import classify_types
    from dataclasses import replace
    from lambdarag.domains import profile_named
    from lambdarag.domains.generic.cues import CUES

    read = {"alpha-en": {"dev": [{"query": "Who is in charge of the mirror network?", "type": "relation"}]},
            "beta-en": {"dev": [{"query": "Is anyone in charge of the release notes?", "type": "fact"}],
                        "test": [{"query": "Who is in charge of the build farm?", "type": "relation"}]}}
    plain = copy.copy(profile_named("generic"))
    plain.classifier = replace(plain.classifier, exemplars_file=None)
    found = {r["cue"]: r for r in classify_types.relation_cue_wins(read, {"alpha": plain, "beta": plain},
                                                                   {"alpha": set(), "beta": set()})}
    cue = next(c for kind, _, group in CUES if kind == "relation" for c in group if c == r"\bin charge of\b")
    assert (found[cue]["fires_on"], found[cue]["wins"], found[cue]["losses"]) == (["alpha", "beta"], ["alpha"], ["beta"]), \
        found[cue]
    assert all(not r["wins"] for c, r in found.items() if c != cue and "alpha" not in r["fires_on"])


SHAPES_ROUND_27 = [  # written for this test (issue 41, round 27), about no corpus of any benchmark
    # what a named thing or doing one thing does to another, asked yes or no: a tie (main: no rule)
    ("Will save_image() overwrite an existing file of the same name?", "relation"),
    ("Does importing utils.io put its helpers on the global path?", "relation"),
    ("Does enabling --strict add the skipped tests to the report?", "relation"),
    ("Does calling fs::sync put the journal on the disk?", "relation"),
    # what a change forces again: the asker must repeat a step for a thing
    ("If I passed a seed to the first run, do I need to pass it again to resume()?", "relation"),
    # 会不会 / 会把…吗 of a thing, and what a clause about a thing still leaves possible
    ("在列表里拖动图层的顺序，会不会改动画布上图形的叠放？", "relation"),
    ("导出的时候会把隐藏的工作表也算进去吗？", "relation"),
    ("表格是从网页复制过来的，还能直接按列排序吗？", "relation"),
    # which of two comes first, what happens at the end of something: times (main: a relation or no rule)
    ("What loads first when the editor opens, the user theme or the project settings?", "temporal"),
    ("What happens to unsaved drafts at the end of a session?", "temporal"),
    ("插件和主题哪个先加载？", "temporal"),
    # two things that behave differently: a comparison (main: no rule)
    ("Does a frozen list behave any differently from a regular one?", "compare"),
    # look-alikes: a tool's own work, the asker or a pronoun acts, a version's later use, what runs a thing
    ("Does the backup tool overwrite old archives?", None),
    ("Will it overwrite the file?", None),
    ("After installing, should I read the release notes?", None),
    ("如果我没保存，还能找回吗？", None),
    ("升级到新版以后，旧插件还能用吗？", None),
    ("我会不会丢掉数据？", None),
    ("What runs the backup every night?", "relation"),
]


@pytest.mark.parametrize("query,kind", SHAPES_ROUND_27)
def test_effects_on_a_named_thing_are_relations_and_which_comes_first_a_time(query, kind):
    # ties.py, times.py and cues.py (round 27): the shape of the question, widening shapes that fire on other books
    assert_shape(query, kind, ("relation",))
