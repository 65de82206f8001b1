"""Corpus profiles: the generic default on non-statute documents, selection, a user's own profile, and the statute
vocabulary kept inside the statute pack."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from lambdarag import Context, State
from lambdarag.errors import ConfigError
from lambdarag.orchestration.config import parse_config
from lambdarag.orchestration.declared import import_plugins
from lambdarag.skills import build
from lambdarag.domains import index_profile, load_profile, profile_named
from lambdarag.skills.sentences import split_sentences
from lambdarag.skills.titles import document_names
from lambdarag.skills.store.corpus import Document, chunk_markdown, to_hits
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.store.graph import EntityGraph
from lambdarag.domains.corpus import build_index
from lambdarag.skills.store.records import Hit, Relation
from lambdarag.skills.support import attesting, unsupported
from lambdarag.domains.corpus import compile_wiki
from lambdarag.skills.store.tokenize import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
GENERIC_CODE = ("lambdarag", "skills", "patterns", "orchestration", "qademo", "domains/generic")
ISSUE_29 = (r"法律法规|第[一二三四五六七八九十百千零〇两\dX]+条|第\[[^\]]*\]\+条|海事|条例|主管部门|中华人民共和国"
            r"|《[^》\s]{1,40}》|[\"']《[\"']|\bTYPE_NAMES\b|\bARTICLE_LABEL\b|\bPRC\b")
"""The words of issue 29, an article label however its pattern is spelt (第[…]+条), the state's name, a 《quoted》
title or a lone 《 as a cue, and the names the statute rules had in generic modules."""
DATA = (ROOT / "knowledge", ROOT / "orchestration" / "demo")
"""The bundled demo knowledge base (maritime statutes) and its prebuilt index and wiki: documents, not code."""


SHORTEST_WORD, SHORTEST_PHRASE = 3, 6
"""The guard's length rule, its only exception: a two-character relation name (依据, 涉及, 引用, 规定) is an everyday
word of any Chinese text, and a short stretch of a phrase (的规定) part of any sentence; the compounds and whole
clauses are the statute pack's."""


def statute_words() -> list[str]:
    """Returns the statute pack's own words, read from its data: relation names, a wiki page's section titles, entity
    type names, kinds of document, the words it adds to the risk cues, and the phrases its answers and replies are
    worded with (their stretches between placeholders), each as long as the length rule asks (`SHORTEST_WORD`,
    `SHORTEST_PHRASE`)."""
    from lambdarag.domains.prc_statutes import StatuteProfile, cues, edges, extract, kinds
    from lambdarag.skills.phrasing import ZH

    sheet = StatuteProfile()
    relations = {*sheet.graph.support_cues, *(t for _, types in edges.CUES for t in types)}
    sections = {title for title, _, _ in sheet.graph.page_sections}
    phrases = {part.strip(" -：:，。") for key, text in sheet.wording.phrasing("").items() if ZH.get(key) != text
               for part in re.split(r"\{[^}]*\}", text)}
    risks = {word for alternatives in cues.RISK_WORDS.values() for word in alternatives.split("|")}
    words = {*relations, *sections, *sheet.graph.type_names.values(), *kinds.FOLDERS, *risks}
    return sorted({*(w for w in words if len(w) >= SHORTEST_WORD), *(p for p in phrases if len(p) >= SHORTEST_PHRASE)})


STATUTE_WORDS = re.compile("|".join([ISSUE_29, *map(re.escape, statute_words())]))


def test_generic_code_holds_no_statute_vocabulary():
    """Every statute rule and word lives in domains/prc_statutes (issues 29 and 39); the words come from the pack's
    own data, so a word it adds is guarded too, and a hit elsewhere fails with file and line.

    Rule: a word shorter than SHORTEST_WORD or a phrase stretch shorter than SHORTEST_PHRASE is not guarded; no word
    is exempted by name."""
    assert {"发布机构", "立法依据", "司法解释", "监督指导", "法律责任", "出口管制"} <= set(statute_words())
    assert any("法律法规知识问答助手" in w for w in statute_words())
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}"
            for top in GENERIC_CODE for path in sorted((ROOT / top).rglob("*"))
            if path.is_file() and path.suffix in (".py", ".jsonl", ".txt", ".js", ".html", ".yml") and not any(d in path.parents for d in DATA)
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if STATUTE_WORDS.search(line)]
    assert hits == []


def doc(text: str, source: str = "guide.md") -> Document:
    return Document(id=source, source=source, title="Guide", text=text)


def test_a_profile_is_a_data_sheet_that_never_reaches_a_run():
    """Issue 39: `CorpusProfile` has at most 16 public members, a shipped profile adds no method (a pack's behaviour
    is its own terms), and no function of its sheets takes the run's context, its state, an index or an LLM."""
    import dataclasses
    import inspect

    from lambdarag.domains import profile_named
    from lambdarag.skills.profile import CorpusProfile

    public = [name for name in dir(CorpusProfile) if not name.startswith("_")]
    assert len(public) <= 16, public
    run_parameters = {"ctx", "state", "backend", "index", "kb", "resources", "llm"}   # missing_things' `context` is text
    for name in ("generic", "prc_statutes"):
        profile = profile_named(name)
        own = {k: v for k, v in vars(type(profile)).items() if not k.startswith("_")}
        assert not [k for k, v in own.items() if inspect.isfunction(v) or isinstance(v, (property, classmethod))], own
        for sheet in (getattr(profile, k) for k in public if dataclasses.is_dataclass(getattr(profile, k))):
            for f in dataclasses.fields(sheet):
                value = getattr(sheet, f.name)
                if inspect.isfunction(value) or inspect.ismethod(value):
                    taken = set(inspect.signature(value).parameters) & run_parameters
                    assert not taken, f"{name}: {type(sheet).__name__}.{f.name} takes {sorted(taken)}"


def test_headings_need_no_blank_line_and_fenced_code_never_yields_one():
    text = "## Install\nRun the installer.\n## Configure\nEdit the file:\n\n```sh\n# not a heading\napt update\n```\n"
    chunks = chunk_markdown(doc(text))
    assert [(c.id, c.section) for c in chunks] == [("guide.md#Install", "Install"), ("guide.md#Configure", "Configure")]
    assert chunks[0].text == "Run the installer." and "# not a heading\napt update" in chunks[1].text


def test_english_sentences_end_at_stops_before_whitespace_but_not_after_abbreviations_and_wrapped_lines_join():
    text = "APT reads the list,\ne.g. sources.list, then fetches. Is it fast? Yes!\nDr. Who wrote it."
    assert split_sentences(text) == ["APT reads the list, e.g. sources.list, then fetches.", "Is it fast?",
                                     "Yes! Dr. Who wrote it."] or split_sentences(text)[:2] == [
        "APT reads the list, e.g. sources.list, then fetches.", "Is it fast?"]
    assert split_sentences("第一句。第二句！\n第三句") == ["第一句。", "第二句！", "第三句"]


def test_english_bm25_tokens_are_stemmed_without_stop_words_and_chinese_stays_jieba():
    t = Tokenizer(english="snowball")
    assert t("How are the Packages configured?") == ["packag", "configur"]
    assert t("配置软件包") == Tokenizer()("配置软件包")
    with pytest.raises(ConfigError, match="english must be one of"):
        Tokenizer(english="porter")


@pytest.fixture(scope="module")
def guide(tmp_path_factory):
    home, docs = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("docs")
    (docs / "if.md").write_text("# if\n\nThe if statement runs a block when a condition holds.\n", encoding="utf-8")
    (docs / "apt.md").write_text("# APT\n\n## Sources\nAPT reads sources.list and fetches packages.\n"
                                 "See [dpkg](dpkg.md).\n", encoding="utf-8")
    (docs / "dpkg.md").write_text("# dpkg\n\n**dpkg** is the low-level package tool.\nIt installs .deb files.\n",
                                  encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LAMBDARAG_HOME", str(home))
        yield docs, build_index(docs, "guide", dense=False, progress=False)


def test_auto_picks_generic_for_documentation_and_the_index_records_it(guide):
    docs, index = guide
    assert read_corpus(docs).domain == "generic" and index.domain == "generic"
    assert index_profile(index).name == "generic"
    assert read_corpus(ROOT / "tests" / "fixtures" / "maritime").domain == "prc_statutes"


def test_auto_reads_a_generic_corpus_once(guide, monkeypatch):
    import lambdarag.skills.store.corpus as corpus

    docs, _ = guide
    read, calls = corpus.read_markdown, []
    monkeypatch.setattr(corpus, "read_markdown", lambda path, *a, **k: calls.append(path.name) or read(path, *a, **k))
    assert read_corpus(docs).domain == "generic" and sorted(calls) == ["apt.md", "dpkg.md", "if.md"]


def test_sides_are_titles_on_word_boundaries_never_inside_a_word(guide):
    _, index = guide
    sides = document_names(index).named("What is the difference between APT and dpkg?", 4)
    assert [s.source for s in sides] == ["apt.md", "dpkg.md"]   # "difference" does not name if.md
    assert document_names(index).named("What happens inside the differ tool?", 4) == ()


def test_generic_graph_has_sections_links_and_definitions(guide):
    docs, _ = guide
    facts = profile_named("generic").graph.extract_document(read_corpus(docs).documents[0])
    rels = {(r.head, r.relation, r.tail) for r in facts.relations}
    assert ("APT", "contains", "Sources") in rels and ("Sources", "links_to", "dpkg") in rels
    dpkg = next(d for d in read_corpus(docs).documents if d.source == "dpkg.md")
    assert ("dpkg", "defines", "dpkg") not in {(r.head, r.relation, r.tail)
                                               for r in profile_named("generic").graph.extract_document(dpkg).relations}


def test_generic_graph_says_which_key_configures_what_and_a_steering_question_finds_it():
    # issue 41: option tables and sentences that say a file or key controls something become `configures` edges
    from lambdarag.skills.edges import EdgeTable, asked_relations

    text = ("# Proxy\n\n## Options\n| option | meaning |\n|---|---|\n| idle.timeout | seconds an idle connection "
            "is kept open |\n| --workers | how many worker processes start |\n\n## Files\n"
            "The file /etc/proxy/proxy.conf controls the listening port. It is read at start.\n\n"
            "## 文件\n监听地址由 /etc/proxy/listen.conf 决定。\n")
    doc = Document(id="proxy.md", source="proxy.md", title="Proxy", text=text)
    generic = profile_named("generic")
    edges = [r for r in generic.graph.extract_document(doc).relations if r.relation == "configures"]
    assert {(r.head, r.tail) for r in edges} == {("idle.timeout", "Options"), ("--workers", "Options"),
                                                 ("/etc/proxy/proxy.conf", "Files"), ("/etc/proxy/listen.conf", "文件")}
    assert next(r for r in edges if r.head == "/etc/proxy/proxy.conf").description == \
        "The file /etc/proxy/proxy.conf controls the listening port."
    query = "Which option decides how long an idle connection is kept open?"
    kinds = asked_relations(query, generic.graph.relation_cues)
    assert "configures" in kinds
    found = EdgeTable(edges).best(query, kinds, asking=generic.graph.asking_words)
    assert [rec.head for _, rec in found][:1] == ["idle.timeout"]


def test_name_forms_are_the_profiles_and_only_the_statute_pack_adds_the_state_name():
    # issue 29: the graph, the wiki and the write-back gate write names as the corpus profile says, not as statutes do
    generic, statutes = profile_named("generic"), profile_named("prc_statutes")
    assert generic.names.name_forms("《海商法》") == {"《海商法》", "海商法"}
    assert generic.names.short_name("《中华人民共和国海商法》") == "中华人民共和国海商法"
    assert statutes.names.name_forms("《海商法》", "law") == {"《海商法》", "海商法", "中华人民共和国海商法"}
    assert statutes.names.name_forms("海事局", "agency") == {"海事局"}
    assert statutes.names.short_name("《中华人民共和国海商法》") == "海商法"
    plain, statute = EntityGraph(), EntityGraph(names=statutes.names)
    for graph in (plain, statute):
        graph.add_entity("海商法", type="law")
    assert statute.resolve("《中华人民共和国海商法》") == "海商法"
    assert plain.resolve("《中华人民共和国海商法》") is None and plain.resolve("《海商法》") == "海商法"


def test_the_write_back_gate_takes_name_forms_and_cue_words_from_the_profile():
    hit = Hit(chunk_id="a.md#1", source="a.md", title="船舶管理办法", text="海事局依照海商法监督船舶。")
    fact = Relation(head="海事局", relation="依据", tail="中华人民共和国海商法", source="a.md")
    assert unsupported(fact, [hit], profile_named("prc_statutes")) is None   # short name, and 依照 is a cue of 依据
    assert "no sentence" in unsupported(fact, [hit], profile_named("generic"))
    assert attesting("中华人民共和国海商法", [hit], profile_named("prc_statutes").names) == ("a.md",)
    assert attesting("中华人民共和国海商法", [hit], profile_named("generic").names) == ()


def test_a_generic_knowledge_base_builds_its_graph_with_the_profile_and_answers_relation_questions(guide):
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.knowledge import open_knowledge, wiki_dir_for
    from lambdarag.orchestration.search_unified import search

    docs, _ = guide
    config = load_config()
    report = compile_wiki(docs, wiki_dir_for(config, "guide"), progress=False)
    assert report.domain == "generic" and report.relations >= 2
    kb = open_knowledge(config, "guide")
    assert kb.graph.names is profile_named("generic").names and kb.wiki.names is profile_named("generic").names
    r = search("What does the Sources section of APT link to?", index="guide")
    assert r.query_type == "relation" and ("Sources", "links_to", "dpkg") in {
        (x.head, x.relation, x.tail) for x in r.relations}


def test_the_entity_prompt_says_how_to_write_names_as_the_profile_does():
    lam = build("entity_extract")
    statute = Context(resources={"profile": profile_named("prc_statutes")})
    assert "中华人民共和国" in "".join(m["content"] for m in lam.messages(State.of("海商法的主管部门？"), ctx=statute))
    generic = Context(resources={"profile": profile_named("generic")})
    assert "中华人民共和国" not in lam.messages(State.of("Who maintains APT?"), ctx=generic)[-1]["content"]


def test_an_english_question_gets_an_english_answer_without_statute_wording(guide):
    _, index = guide
    ctx = Context(resources={"index": index, "profile": index_profile(index)})
    hits = to_hits(index.bm25("How does APT fetch packages?", 5), "bm25")
    out = build("answer_generate", {}).run(State.of("How does APT fetch packages?", hits=hits), ctx)
    assert out.answer.startswith("From the documents:") and "[source: apt.md#Sources]" in out.answer
    assert not re.search(r"[\u4e00-\u9fff《》]", out.answer)
    refusal = build("answer_generate", {}).run(State.of("How do I bake bread?", hits=()), ctx).answer
    assert refusal.startswith("The documents do not answer this question") and not re.search(r"[\u4e00-\u9fff]", refusal)


def test_an_english_answer_quotes_the_best_supported_sentence_when_its_words_are_paraphrased(guide):
    # issue 29: "gives", "lowest", "layer", "handling" appear nowhere, yet the dpkg sentence is the answer; the old
    # answer refused and called those words missing from the documents
    _, index = guide
    ctx = Context(resources={"index": index, "profile": index_profile(index)})
    q = "Which tool gives the lowest layer for handling packages?"
    out = build("answer_generate", {}).run(State.of(q, hits=to_hits(index.bm25(q, 5), "bm25")), ctx)
    assert out.answer.startswith("From the documents:") and "low-level package tool" in out.answer
    assert [c.source for c in out.citations] == ["dpkg.md"] and "do not mention" not in out.answer


def test_a_partial_answer_names_as_missing_only_named_things_the_documents_lack(guide):
    _, index = guide
    ctx = Context(resources={"index": index, "profile": index_profile(index)})
    q = "How does dpkg install .deb files, and how does it relate to the flag that gives RPM support?"
    out = build("answer_generate", {}).run(State.of(q, hits=to_hits(index.bm25(q, 5), "bm25")), ctx).answer
    assert "It installs .deb files." in out and "RPM" in out.split("Not found in the documents:")[1]
    assert not re.search(r"\b(?:flag|relate|gives|support)\b", out.split("Not found in the documents:")[1])


@pytest.mark.parametrize("question, refusal", [
    ("How do I bake sourdough bread at home?", "The documents do not answer this question."),
    ("怎样在家里烤制酸面包？", "根据现有资料无法回答该问题。"),
])
def test_an_out_of_scope_question_is_refused_in_its_own_language_whatever_was_retrieved(guide, question, refusal):
    _, index = guide
    ctx = Context(resources={"index": index, "profile": index_profile(index)})
    everything = to_hits([(c, 1.0) for c in index.chunks()], "dense")   # a dense search returns its nearest anyway
    out = build("answer_generate", {}).run(State.of(question, hits=everything), ctx)
    assert out.answer.startswith(refusal) and out.citations == ()
    assert bool(re.search(r"[\u4e00-\u9fff]", out.answer)) == bool(re.search(r"[\u4e00-\u9fff]", question))


def test_domain_must_be_a_shipped_profile_or_a_factory_spec():
    from lambdarag.registry import allow_plugin

    allow_plugin("nowhere")
    assert parse_config("retrieval:\n  domain: generic\n").retrieval.domain == "generic"
    with pytest.raises(ConfigError, match="retrieval.domain must be auto"):
        parse_config("retrieval:\n  domain: statutes\n")
    with pytest.raises(ConfigError, match="cannot load 'nowhere.at_all:Factory'"):
        load_profile("nowhere.at_all:Factory")


def test_the_readme_profile_example_runs_as_written(tmp_path, monkeypatch):
    readme = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- custom-profile:start -->\n```python\n(.*?)```\n<!-- custom-profile:end -->", readme, re.S)
    assert block, "README lost its custom-profile example"
    (tmp_path / "minutes.py").write_text(block.group(1), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "2024-03-meeting.md").write_text("# Meeting 2024-03\n\nWe discussed the budget at length.\n", "utf-8")
    (docs / "decisions-q1.md").write_text("# Decisions Q1\n\nWe decided the budget is frozen.\n", "utf-8")
    import_plugins(["minutes"], tmp_path, lambda loc: None, "<test>")   # what plugins: [minutes] in a config does
    index = build_index(docs, "minutes", dense=False, progress=False, domain="minutes:factory")
    assert index.domain == "minutes:factory" and type(index_profile(index)).__name__ == "MinutesProfile"
    ctx = Context(resources={"index": index, "profile": index_profile(index)})
    hits = to_hits(index.bm25("what about the budget", 5), "bm25")
    assert hits[0].source == "2024-03-meeting.md"   # plain BM25 prefers the meeting…
    ahead = build("decisions_first", {}).run(State.of("what about the budget", hits=hits), ctx).hits
    assert ahead[0].source == "decisions-q1.md"      # …the pack's own prior puts the decisions first
    from lambdarag.orchestration.router import choose
    from lambdarag.skills.profile import packs_of

    packs = packs_of(index_profile(index))
    assert packs[:2] == ("minutes", "generic")       # its own variants first, then the generic pack's
    assert ">> decisions_first >> Guard(" in str(choose(parse_config(""), "fact", pack=packs).term)
    assert ">> survey_documents >> " in str(choose(parse_config(""), "synthesis", pack=packs).term)
    sys.modules.pop("minutes", None)


@pytest.fixture(scope="module")
def backups(tmp_path_factory):
    """Nine pages, three about backups: tar's page says so in its text, rsync's and the snapshots' in their titles only
    (their text is long and about other things); six short pages match the question's other words."""
    home, docs = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("docs")
    filler = " ".join(f"word{i}" for i in range(80))
    pages = {"tar.md": "# Archiving with tar\n\n" + "".join(f"## Step {i}\ntar writes a backup archive of the files, "
                                                              "and a backup of the backup.\n\n" for i in range(2)),
             "rsync.md": "# Backup with rsync\n\nrsync copies over the network: " + filler + "\n",
             "snapshots.md": "# Backup by snapshots\n\nA snapshot freezes a volume: " + filler + "\n"}
    for name in ("makefiles", "fonts", "printing", "mail", "cron", "locale"):
        pages[f"{name}.md"] = f"# {name.title()}\n\nThe {name} files.\n"
    for name, text in pages.items():
        (docs / name).write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:  # only while building: the guide's home stays the module's
        mp.setenv("LAMBDARAG_HOME", str(home))
        index = build_index(docs, "backups", dense=False, progress=False)
    return index


def test_a_survey_on_generic_documents_covers_the_documents_about_its_topic(backups):
    # issue 41: the plain ranking puts six pages that share the question's common words ahead of two of the three
    # about backups; the survey keeps the plain first page first, then the pages whose titles are about backups
    query = "Summarize the ways to make a backup of files"
    plain = list(dict.fromkeys(h.source for h in to_hits(backups.bm25(query, 50), "bm25")))
    assert plain[0] == "tar.md" and not {"rsync.md", "snapshots.md"} & set(plain[:5])
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                          Context(resources={"index": backups, "profile": index_profile(backups)})).hits
    assert list(dict.fromkeys(h.source for h in out))[:3] == ["tar.md", "rsync.md", "snapshots.md"]
    assert len({h.chunk_id for h in out}) == len(out) and set(plain) <= {h.source for h in out}


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    """A numbered manual: chapter 5's page is about networking, its three sections say so in none of their words;
    four pages of other chapters share the question's common words."""
    pages = {"05.00-networking.md": "# Networking\n\nThis chapter is an overview of networking on the system.\n",
             "05.01-wireless.md": "# Wireless\n\nA wireless card joins an access point with a passphrase.\n",
             "05.02-tunnels.md": "# Tunnels\n\nA tunnel carries packets between two sites, encrypted.\n",
             "05.03-bridges.md": "# Bridges\n\nA bridge joins two segments into one.\n",
             "06.00-printing.md": "# Printing\n\nAn overview of printing on the system.\n",
             "07.01-fonts.md": "# Fonts\n\nAn overview of the fonts on the system.\n",
             "07.02-sound.md": "# Sound\n\nAn overview of sound on the system.\n",
             "07.03-mail.md": "# Mail\n\nAn overview of mail on the system.\n"}
    return index_of(tmp_path_factory, "manual", pages)


def index_of(tmp_path_factory, name: str, pages: dict[str, str]):
    """Returns a BM25-only index, built in a home of its own, of markdown `pages` (file name → text)."""
    home, docs = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("docs")
    for file, text in pages.items():
        (docs / file).write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LAMBDARAG_HOME", str(home))
        return build_index(docs, name, dense=False, progress=False)


def test_a_survey_brings_in_the_sections_of_the_chapter_page_about_its_topic(manual):
    # issue 41: a numbered corpus's chapter page is about the topic, its sections are too whatever words they use
    from lambdarag.domains.generic.survey import outline, section_number

    query = "Give an overview of networking on the system"
    assert section_number("05.02-tunnels.md") == (5, 2) and section_number("README.md") is None
    assert outline(manual).sections == {"05.00-networking.md": ["05.01-wireless.md", "05.02-tunnels.md",
                                                                 "05.03-bridges.md"]}
    plain = list(dict.fromkeys(h.source for h in to_hits(manual.bm25(query, 50), "bm25")))
    assert plain[0] == "05.00-networking.md" and not {"05.01-wireless.md", "05.02-tunnels.md"} & set(plain)
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                          Context(resources={"index": manual})).hits
    first = list(dict.fromkeys(h.source for h in out))
    # the question names the chapter's topic (its page leads the headings ranking), so the whole chapter follows it
    assert first[:4] == ["05.00-networking.md", "05.01-wireless.md", "05.02-tunnels.md", "05.03-bridges.md"], first


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """A numbered manual without chapter pages: chapter 3's sections are about running jobs later, its third (anacron)
    says so in none of the question's words; six pages of six other chapters share its common words."""
    pages = {"03.01-cron.md": "# Cron\n\nCron runs jobs at set times: the ways to schedule a job for every hour.\n",
             "03.02-at.md": "# At\n\nThe at command schedules a job once, at a given time.\n",
             "03.03-anacron.md": "# Anacron\n\nAnacron runs periodic commands on machines that are not always on.\n"}
    for i, name in enumerate(("fonts", "printing", "mail", "sound", "locale", "backups")):
        pages[f"0{4 + i}.01-{name}.md"] = f"# {name.title()}\n\nThe ways to set up {name}.\n"
    return index_of(tmp_path_factory, "jobs", pages)


def test_a_survey_brings_in_the_sibling_sections_of_the_chapter_its_first_documents_share(jobs):
    # issue 41: two of the plain ranking's first documents are sections of chapter 3, so its third section is about
    # the topic too, though it shares no word with the question and no chapter page introduces it; it follows
    # hybrid's first five, which no match ranking holds either (round 17: the outline is no stronger evidence)
    query = "Summarize the ways to schedule a job"
    plain = list(dict.fromkeys(h.source for h in to_hits(jobs.bm25(query, 50), "bm25")))
    assert set(plain[:2]) == {"03.01-cron.md", "03.02-at.md"} and "03.03-anacron.md" not in plain
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                          Context(resources={"index": jobs})).hits
    first = list(dict.fromkeys(h.source for h in out))
    assert first[:2] == plain[:2] and "03.03-anacron.md" in first[5:10], first


def test_only_the_first_five_documents_vote_for_their_chapters_siblings(jobs):
    # issue 41: two sections of a long chapter among the second five documents are chance, not its topic
    from lambdarag.domains.generic.survey import outline

    others = ["04.01-fonts.md", "05.01-printing.md", "06.01-mail.md", "07.01-sound.md", "08.01-locale.md"]
    assert outline(jobs).siblings([*others, "03.01-cron.md", "03.02-at.md"]) == []
    assert "03.03-anacron.md" in outline(jobs).siblings(["03.01-cron.md", "03.02-at.md", *others])


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    """A numbered guide: chapter 7's page is about checking a package for errors, its five sections name a tool each
    and say "check" nowhere; eight pages of chapters without a page are about uploading a package, with errors."""
    pages = {"07.00-checking.md": "# Checking the package for errors\n\nThe techniques for checking a package for "
                                  "errors before it is uploaded.\n"}
    for i, tool in enumerate(("debc", "debdiff", "interdiff", "mc", "piuparts")):
        pages[f"07.0{i + 1}-{tool}.md"] = f"# The {tool} command\n\n{tool} lists or compares files of a build.\n"
    for i in range(8):
        pages[f"{11 + i}.01-upload-{i}.md"] = (f"# Uploading step {i}\n\nUploading the package {i}: a package "
                                               "with errors is rejected when uploaded.\n")
    return index_of(tmp_path_factory, "checks", pages)


def test_a_survey_of_a_chapters_topic_covers_every_section_of_the_chapter(checks):
    # issue 41 (round 15, dev3): the question names chapter 7's topic (its page leads the headings ranking, no other
    # chapter's page follows it), so the survey's ten documents hold every section; by their own words they lost
    # to the pages on uploading, which share the question's words
    from lambdarag.domains.generic.survey import outline

    query = "Give an overview of the techniques for checking a package for errors before uploading it"
    sections = [f"07.0{i}-{tool}.md" for i, tool in enumerate(("debc", "debdiff", "interdiff", "mc", "piuparts"), 1)]
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                          Context(resources={"index": checks})).hits
    first = list(dict.fromkeys(h.source for h in out))
    assert first[0] == "07.00-checking.md" and set(sections) <= set(first[:10]), first
    assert outline(checks).files((7,)) == ["07.00-checking.md", *sections]


def test_only_a_chapter_the_question_asks_about_as_a_whole_brings_all_its_files(tmp_path_factory):
    # issue 41: a chapter joins whole when its page leads the headings ranking and no other chapter's page is
    # second (two tools' chapters leading it is a survey across chapters), or when it holds most of the plain first
    # five documents and the question holds every word of its page's title
    from lambdarag.domains.generic.survey import outline

    pages = {"05.00-networking.md": "# Networking\n\nNetworks.\n", "05.01-wireless.md": "# Wireless\n\nCards.\n",
             "05.02-tunnels.md": "# Tunnels\n\nSites.\n", "05.03-bridges.md": "# Bridges\n\nSegments.\n",
             "06.00-printing.md": "# Printing\n\nPrinters.\n", "06.01-queues.md": "# Queues\n\nJobs.\n",
             "07.00-about.md": "# About\n\nThis guide.\n", "07.01-fonts.md": "# Fonts\n\nFaces.\n",
             "07.02-sound.md": "# Sound\n\nCards.\n"}
    table, everything = outline(index_of(tmp_path_factory, "chapters", pages)), lambda title: True
    assert table.files((5,)) == ["05.00-networking.md", "05.01-wireless.md", "05.02-tunnels.md", "05.03-bridges.md"]
    assert table.asked(["05.00-networking.md", "07.01-fonts.md"], [], everything) == [(5,)]
    assert table.asked(["05.00-networking.md", "06.00-printing.md"], [], everything) == []
    assert table.asked(["07.01-fonts.md", "05.00-networking.md"], [], everything) == []
    plain = ["05.01-wireless.md", "05.02-tunnels.md", "07.01-fonts.md", "05.03-bridges.md", "07.02-sound.md"]
    assert table.asked([], plain, everything) == [(5,)]
    assert table.asked([], plain, lambda title: title != "Networking") == []
    assert table.asked([], plain[:2] + plain[4:], everything) == []


def test_a_chapter_whose_files_repeat_a_number_is_no_outline(tmp_path_factory):
    # issue 41: an appendix numbered like the chapter before it (09.00 twice, 09.01 twice) mixes two topics, so
    # neither its chapter page nor its sections bring the others into a survey
    from lambdarag.domains.generic.survey import outline

    pages = {"09.00-uploading.md": "# Uploading\n\nHow to upload.\n",
             "09.00-advanced.md": "# Advanced topics\n\nHints.\n",
             "09.01-upload-tools.md": "# Upload tools\n\nThe upload tools.\n",
             "09.01-libraries.md": "# Libraries\n\nShared libraries.\n",
             "09.02-symbols.md": "# Symbols\n\nSymbol files.\n",
             "10.00-checks.md": "# Checks\n\nChecking.\n", "10.01-linting.md": "# Linting\n\nThe linter.\n",
             "10.02-diffs.md": "# Diffs\n\nComparing packages.\n"}
    table = outline(index_of(tmp_path_factory, "appendix", pages))
    assert table.siblings(["09.01-upload-tools.md", "09.02-symbols.md"]) == []
    assert table.sections_by("09.00-uploading.md", []) == [] and table.sections_by("09.00-advanced.md", []) == []
    assert table.siblings(["10.01-linting.md", "10.02-diffs.md"]) == ["10.01-linting.md", "10.02-diffs.md"]
    assert table.sections_by("10.00-checks.md", []) == ["10.01-linting.md", "10.02-diffs.md"]


def test_a_survey_finds_the_pages_that_speak_of_its_words_anywhere_in_their_text(tmp_path_factory):
    # issue 41: the tools page names the packer in one section and the checker in another, so none of its chunks
    # matches the question better than the page that names the packer once; as a whole it speaks of both
    from lambdarag.domains.generic.survey import mentions, topic_words

    pages = {"01.01-tools.md": "# Tools\n\n## Packing\n\nThe packer bundles files.\n\n## Checking\n\nThe checker reads "
                               "the bundles.\n",
             "02.01-speed.md": "# Speed\n\nThe packer is fast on small files and slow on large ones.\n"}
    pages.update({f"03.0{i}-{name}.md": f"# {name.title()}\n\nThe {name} files.\n"
                  for i, name in enumerate(("fonts", "mail", "sound"), 1)})
    index = index_of(tmp_path_factory, "spread", pages)
    chunks = index.bm25("packer checker", 10)
    assert not any({"packer", "checker"} <= set(index.tokenizer(c.text)) for c, _ in chunks)
    assert mentions(index).ranked(index.tokenizer("packer checker"), 5) == ["01.01-tools.md", "02.01-speed.md"]
    # the question's common words (files: four pages of five) make no page speak of its topic
    assert set(mentions(index).ranked(index.tokenizer("files of the packer"), 5)) == {"01.01-tools.md", "02.01-speed.md"}
    # the topics a question names are its words that a title or heading holds, not the rest of what it asks
    assert topic_words(index, "Give an overview of the packing speed: where is it slow?") == \
        index.tokenizer("packing speed")


@pytest.mark.parametrize("order, named, support, kept", [
    # a sibling section no match ranking holds (s2) gives its place back to plain's third document, which the
    # headings and the whole text hold; the section follows the window
    (["a", "s1", "s2", "x", "y", "z"], [], {"b": 2, "s1": 1}, ["a", "s1", "b", "x", "y", "s2", "z"]),
    # sections no match ranking holds (the outline put them there) give their places back to plain's documents,
    # which none holds either: no evidence is no stronger evidence
    (["a", "s1", "s2", "x", "y"], [], {}, ["a", "c", "b", "x", "y", "s2", "s1"]),
    # as much evidence is not stronger: the survey's order stands
    (["a", "s1", "s2", "x", "y"], [], {"b": 1, "s1": 1, "s2": 1}, ["a", "s1", "s2", "x", "y"]),
    # plain's own first five give way to no document more rankings hold
    (["a", "x", "y", "s1", "s2"], [], {"s1": 3, "s2": 3, "b": 1, "c": 1}, ["a", "x", "y", "s1", "s2"]),
    # a document the survey ranked past its leads comes back all the same; the weakest, latest gives way first
    (["a", "s1", "s2", "s3", "x"], [], {"c": 2, "s1": 1, "s2": 1, "s3": 1}, ["a", "s1", "s2", "c", "x", "s3"]),
    # a document naming a listed thing in its headings takes the place of the weakest but plain's first and the
    # other named ones, plain's own included (the question names it: stronger evidence)
    (["a", "n1", "b", "c", "x", "n2"], ["n1", "n2"], {"b": 3, "c": 2, "x": 2, "n2": 1},
     ["a", "n1", "b", "c", "n2", "x"]),
    # a named document takes the place of the survey's own addition before plain's, though plain's page (b) is
    # held by fewer match rankings: a survey adds, and plain's first five are what it adds to
    (["a", "b", "s1", "c", "x", "n1"], ["n1"], {"s1": 1, "c": 1, "x": 1, "n1": 2}, ["a", "b", "n1", "c", "x", "s1"]),
])
def test_a_survey_keeps_plain_retrievals_first_documents_unless_the_newcomer_holds_stronger_evidence(
        order, named, support, kept):
    # issue 41 §3: routing adds, never subtracts; the outline (a chapter's siblings) or a fused rank alone is no
    # stronger evidence than plain retrieval's own, a document the question names is
    from lambdarag.domains.generic.survey import kept_first

    assert kept_first(order, ["a", "b", "c", "x", "y"], named, support) == kept


@pytest.mark.parametrize("others, placed", [(7, True), (5, False)])
def test_a_survey_places_the_page_its_headings_and_another_match_ranking_find_about_the_topic(
        tmp_path_factory, others, placed):
    # issue 41 (round 21): five sections of a network chapter share the question's words and fill plain retrieval's
    # first five; the page titled for the topic (Sharing a printer) ranks sixth. Its title leads the headings ranking,
    # and when the whole-text ranking holds it too (printer is no common word: `others` pages without it) it takes a
    # place among the survey's first five; by its headings alone it does not
    pages = {f"03.0{i}-{topic}.md": (f"# Network {topic}\n\nShare the network with other machines: the ways to share "
                                     f"{topic} on the network with other machines, and a printer.\n")
             for i, topic in enumerate(("interfaces", "bridges", "tunnels", "routes", "bonding"), 1)}
    pages["07.01-sharing-a-printer.md"] = "# Sharing a printer\n\nCUPS publishes it.\n"
    for i, name in enumerate(("fonts", "mail", "sound", "locale", "backups", "cron", "users")[:others], 8):
        pages[f"{i:02d}.01-{name}.md"] = f"# {name.title()}\n\nThe {name} of the system.\n"
    index = index_of(tmp_path_factory, f"printers{others}", pages)
    query = "Summarize the ways to share a printer with other machines on the network"
    plain = list(dict.fromkeys(h.source for h in to_hits(index.bm25(query, 50), "bm25")))
    assert plain.index("07.01-sharing-a-printer.md") == 5
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                          Context(resources={"index": index})).hits
    first = list(dict.fromkeys(h.source for h in out))
    assert ("07.01-sharing-a-printer.md" in first[:5]) == placed, first
    assert first[0] == plain[0]


def test_a_survey_question_tokenizes_no_chunk_of_the_index(tmp_path_factory):
    # issue 41 (scale): the whole-document ranking sums the index's own counts, so a survey's first question reads
    # the index's titles and headings but tokenizes no chunk's text again (it did: every chunk, once per index)
    from lambdarag.skills.store.base import IndexBackend

    pages = {f"0{i}.01-{name}.md": f"# {name.title()}\n\nThe {name} daemon writes its {name} logs nightly.\n"
             for i, name in enumerate(("cron", "mail", "print", "sound"), 1)}
    index = index_of(tmp_path_factory, "untokenized", pages)
    asked: list[str] = []
    plain = index.tokenizer

    class Recording:
        def __call__(self, text):
            asked.append(text)
            return plain(text)

        def __getattr__(self, name):
            return getattr(plain, name)

    index.tokenizer = Recording()
    out = build("survey_documents", {}).run(State.of("Summarize the logs of cron and mail", hits=(), time_range=None),
                                            Context(resources={"index": index})).hits
    assert {"01.01-cron.md", "02.01-mail.md"} <= {h.source for h in out[:5]}
    texts = [c.text for c in index.chunks()]
    assert asked and not [t for t in texts if any(t in a for a in asked)], asked
    # the summed counts rank as tokenizing each document's chunks would
    sources, whole = index.document_words()
    again, reference = IndexBackend.document_words(index)
    words = plain("cron daemon logs")
    assert sources == again and np.allclose(whole.scores(words), reference.scores(words))


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    """A manual of three tools: the section on each one's file format says so in its heading only (Gamma's names the
    format, and its chapter page the tool), while usage and overview pages repeat the question's words in their
    text."""
    pages = {"05.01-alpha-usage.md": "# Using Alpha\n\nAlpha writes output files. Run Alpha and read its output files.\n",
             "05.02-alpha-internals.md": "# Implementation details\n\n## Alpha's output file format\n\nOne cost per line.\n",
             "06.01-beta-usage.md": "# Using Beta\n\nBeta writes output files. Run Beta and read its output files.\n",
             "06.02-beta-format.md": "# Beta's output file format\n\nPlain text, one snapshot per line.\n",
             "07.00-gamma.md": "# The Gamma tool\n\nGamma writes vectors.\n",
             "07.01-vector-format.md": "# Vector file format\n\nDumped at fixed intervals.\n"}
    for i, name in enumerate(("fonts", "printing", "mail", "sound")):
        pages[f"0{1 + i}.01-{name}.md"] = (f"# {name.title()}\n\nThe {name} tools write output files, and Alpha, Beta "
                                           f"and Gamma read such output files in several file formats.\n")
    return index_of(tmp_path_factory, "formats", pages)


def test_a_survey_leads_with_the_documents_whose_headings_name_a_listed_thing(formats):
    # issue 41: the pages about each listed tool's file format say so in their headings, not in their text; a
    # section whose chapter page names the tool names it too
    from lambdarag.domains.generic.survey import titled_documents

    query = "Summarize the output file formats written by Alpha, Beta and the Gamma tool."
    assert titled_documents(formats, query) == ["05.02-alpha-internals.md", "06.02-beta-format.md",
                                                "07.01-vector-format.md"]
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                          Context(resources={"index": formats})).hits
    first = list(dict.fromkeys(h.source for h in out))
    assert {"05.02-alpha-internals.md", "06.02-beta-format.md", "07.01-vector-format.md"} <= set(first[:6]), first


@pytest.mark.parametrize("query, things", [
    ("Summarize the ways to rotate logs: logrotate, journald and cron jobs.", ["logrotate", "journald", "cron jobs"]),
    ("Give an overview of printing, from the spooler to the driver.", ["the spooler", "the driver"]),
    ("备份有哪些方式：整盘镜像、增量备份和快照？", ["整盘镜像", "增量备份", "快照"]),
    ("Summarize the ways to make a backup of files", []),
    ("Summarize the output file formats written by Cachegrind, Massif and the BBV tool.",
     ["Cachegrind", "Massif", "the BBV tool"]),
    ("Which tools can profile a program's heap memory use, and what do they measure?", []),
    ("Give an overview of the scheduler: where it runs and how its jobs are retried.", []),
    ("Summarize the ways to rotate logs: logrotate, journald, or how cron jobs rotate them.", ["logrotate", "journald"]),
])
def test_a_survey_finds_the_things_its_question_lists(query, things):
    from lambdarag.domains.generic.survey import listed_things

    assert listed_things(query) == things


def test_ask_explain_shows_the_corpus_profile_of_the_index(guide, capsys):
    from lambdarag.orchestration.cli import main

    assert main(["ask", "--explain", "--index", "guide", "How does APT fetch packages?"]) == 0
    out = capsys.readouterr().out
    assert "domain: generic (corpus profile of index 'guide')" in out and "From the documents:" in out


GENERIC_TYPES = [   # written for these tests, about no corpus of the benchmark; the previous generic profile got 7 wrong
    ("fact", "Which flag makes the build reproducible?"), ("fact", "单个附件的大小上限是多少？"),
    ("fact", "How often does the health check run?"), ("fact", "为什么登录页面是白屏？"),
    ("compare", "Is the async client slower than the sync one?"), ("compare", "嵌入模式还是服务器模式更合适？"),
    ("compare", "How do blue-green and canary deployments compare?"), ("compare", "蓝绿发布和灰度发布有哪些不同？"),
    ("relation", "Who reviews changes to the public API?"), ("relation", "公共接口的改动由谁评审？"),
    ("relation", "How does the indexer interact with the query engine?"), ("relation", "索引器和查询引擎之间是怎样配合的？"),
    ("synthesis", "How do the different services report errors?"), ("synthesis", "各个服务是怎么上报错误的？"),
    ("synthesis", "What tools can be used to debug memory leaks?"), ("synthesis", "排查内存泄漏可以用哪些工具？"),
    ("temporal", "Is Python 2 still supported by the build scripts?"), ("temporal", "构建脚本现在还支持 Python 2 吗？"),
    ("temporal", "What changed in the schema last year?"), ("temporal", "去年表结构做了哪些调整？"),
]


def test_the_generic_classifier_knows_every_type_in_both_languages():
    # issue 29: cues for any documentation in English and Chinese, then exemplars of generic question shapes
    out = build("classify_offline", {}).run
    ctx = Context(resources={"profile": profile_named("generic")})
    wrong = [(kind, q, got) for kind, q in GENERIC_TYPES if (got := out(State.of(q), ctx).query_type) != kind]
    assert wrong == []


def test_the_learned_classifier_compares_only_what_a_question_sets_side_by_side():
    from lambdarag.skills.classify import learned_classify

    generic = profile_named("generic")
    assert not generic.classifier.admits_type("compare", "Why can the audit tool not be fully trusted against attacks?")
    assert generic.classifier.admits_type("compare", "apt or aptitude for daily upgrades?")
    assert generic.classifier.admits_type("fact", "Why can the audit tool not be fully trusted against attacks?")
    found = learned_classify("为什么备份期间索引器会暂停？", {}, generic)
    assert found is None or found.type != "compare"


def test_generic_code_lays_out_no_statute_page():
    # a statute page's sections are the statute pack's data (extract.PAGE_SECTIONS), which generic code reads from
    # the profile; their statute-only titles appear nowhere in generic code
    from lambdarag.domains.prc_statutes.extract import PAGE_SECTIONS

    words = {title for title, _, _ in PAGE_SECTIONS if len(title) > 3} | {"发布机构"}
    hits = [f"{path.relative_to(ROOT)}: {word}" for top in GENERIC_CODE for path in sorted((ROOT / top).rglob("*.py"))
            for word in words if word in path.read_text(encoding="utf-8")]
    assert words and hits == []


def test_a_statute_survey_route_prints_the_statute_terms_that_run_and_a_generic_one_prints_none():
    from lambdarag.orchestration.router import choose

    cfg = parse_config("")
    statute, generic, plain = (str(choose(cfg, "synthesis", pack=pack).term) for pack in ("prc_statutes", "generic", ""))
    assert "fan_out_merge(k=60)) >> statute_documents >> statute_topics >> time_filter(undated=latest)" in statute
    # the generic survey's leads are one chunk per file already: no spread by title after them (a manual's sections
    # share titles such as "Overview" without being versions of one document)
    assert "fan_out_merge(k=60)) >> survey_documents >> time_filter(undated=latest), Par(" in generic
    for printed in (generic, plain):
        assert "statute" not in printed and "document_search" not in printed and "topic_search" not in printed
    assert "survey_documents" not in plain
    # the configured routing still decides which patterns a type runs; a pack only varies the ones it names
    routed = parse_config("orchestration:\n  routing:\n    synthesis: [fusion_search]\n")
    assert "statute_documents" not in str(choose(routed, "synthesis", pack="prc_statutes").term)


def test_a_pack_varies_only_a_registered_pattern_and_only_once():
    from lambdarag.patterns.registry import pack_pattern

    with pytest.raises(ConfigError, match="pack 'mine': no pattern 'synthesys' to vary; did you mean 'synthesis'"):
        pack_pattern("mine", "synthesys")
    with pytest.raises(ConfigError, match="pack 'prc_statutes' registers its variant of pattern 'synthesis' twice"):
        pack_pattern("prc_statutes", "synthesis")(lambda settings: None)


@pytest.fixture(scope="module")
def requests_manual(tmp_path_factory):
    """Three pages: one describes two client requests side by side, one is about memory pools and says one of
    them many times, one is about tracing."""
    return index_of(tmp_path_factory, "requests", {
        "heap.md": "# Heap profiling\n\nHeap profiling counts REQ_ALLOC and REQ_FREE blocks.\n",
        "requests.md": "# Client requests\n\nREQ_ALLOC marks a block as allocated; REQ_FREE marks it as freed. "
                       "Each request takes the block's address.\n",
        "pools.md": "# Memory pools\n\nA pool releases its chunks with REQ_FREE. REQ_FREE on a pool chunk, "
                    "REQ_FREE again: each chunk of a pool needs REQ_FREE.\n",
        "trace.md": "# Tracing\n\nTracing prints each request as it happens.\n"})


def test_a_comparison_keeps_its_second_chunk_when_its_first_mentions_every_named_thing(requests_manual):
    # issue 41: the hybrid ranking's first chunk names both requests, so neither needs a chunk of the whole index
    # for it; a search for REQ_FREE alone would put the pools page ahead of the page that describes both
    query = "What do REQ_ALLOC and REQ_FREE each do?"
    hits = tuple(h for page in ("heap.md", "requests.md", "trace.md")      # the question's own ranking
                 for h in to_hits(requests_manual.bm25(query, 1, filters={"source": page}), "bm25"))
    own = [h.source for h in hits]
    ctx = Context(resources={"index": requests_manual, "profile": profile_named("generic")})
    out = build("side_search", {}).run(State.of(query, hits=hits, sides=()), ctx).hits
    assert [h.source for h in out[:2]] == own[:2]


@pytest.fixture(scope="module")
def encryption(tmp_path_factory):
    """Chinese pages: one on encrypting data, one on disk images, one on the lsof and ps tools."""
    return index_of(tmp_path_factory, "encryption", {
        "09.09-加密.md": "# 数据加密\n\n加密磁盘分区可以用 cryptsetup，加密文件可以用 gpg。\n",
        "09.07-磁盘映像.md": "# 磁盘映像\n\n磁盘映像文件可以挂载。磁盘映像也可以写回磁盘。\n",
        "03.06-监控.md": "# 系统监控\n\nlsof 列出打开的文件，ps 列出进程。\n"})


def test_a_survey_searches_listed_things_on_their_own_only_when_one_is_a_name(encryption):
    # issue 41: 磁盘、移动介质和文件 are aspects of the topic, which the question's own ranking covers; a search for
    # 磁盘 alone would lead with the disk image page, which is not about encryption
    from lambdarag.domains.generic.survey import listed_documents
    from lambdarag import User

    assert listed_documents(encryption, "总结一下加密数据的方法：磁盘、移动介质和文件。", User()) == []
    assert "03.06-监控.md" in listed_documents(encryption, "有哪些工具可以观察进程：系统监控、ps 和 lsof？", User())


def test_a_listed_clause_naming_only_the_corpus_subject_is_no_listed_thing(tmp_path_factory):
    # issue 41 (round 15, dev3): every page names Debian, so "总结一下 Debian 系统升级" is a clause about the corpus's
    # own subject, not a thing of its own: searched alone it led a survey of upgrades with pages on neither part
    from lambdarag.domains.generic.survey import listed_documents
    from lambdarag import User

    pages = {"09.01-升级.md": "# 保持最新\n\nDebian 系统用 apt 升级。\n",
             "09.02-单用户.md": "# 单用户模式\n\nDebian 升级软件包不必进入单用户模式。\n",
             "03.06-监控.md": "# 系统监控\n\nDebian 上 lsof 列出打开的文件，ps 列出进程。\n"}
    debian = index_of(tmp_path_factory, "debian", pages)
    assert listed_documents(debian, "总结一下 Debian 系统升级、保持最新状态的方方面面。", User()) == []
    assert "03.06-监控.md" in listed_documents(debian, "有哪些工具可以观察 Debian 上的进程：系统监控、ps 和 lsof？", User())


def test_a_survey_asked_of_the_book_covers_its_topic_not_the_pages_about_the_book(tmp_path_factory):
    # issue 41 (round 16, dev3): "which services does the book set up" matched the handbook's pages about itself
    # (Why this book, Book structure) by their titles, in the heading and whole-text rankings, and they took places
    # among the survey's ten documents that pages sharing the topic's words should hold
    pages = {"01.04-book-structure.md": "# Book structure\n\nThe chapters follow one another, from the first to the last.\n"}
    for i, name in enumerate(("mail", "web", "ftp", "dns", "print", "time"), 1):
        pages[f"11.0{i}-{name}.md"] = f"# {name.upper()}\n\nThe {name} service of the network, as the admins set it up.\n"
    for i, name in enumerate(("fonts", "locale", "sound", "backups", "editors", "shells", "mounts", "kernels", "users",
                              "disks")):
        pages[f"{20 + i}.01-{name}.md"] = f"# {name.title()}\n\nThe {name} files" + ", as the book shows" * (i < 4) + ".\n"
    from lambdarag.domains.generic.survey import topic_of

    index = index_of(tmp_path_factory, "book", pages)
    query = "Which network services does the book set up, and what does it say about each?"
    assert topic_of(query) == "Which network services does set up, and what does it say about each?"
    plain = list(dict.fromkeys(h.source for h in to_hits(index.bm25(query, 50), "bm25")))
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                            Context(resources={"index": index})).hits
    first = list(dict.fromkeys(h.source for h in out))
    assert first[:6] == plain[:6] and "01.04-book-structure.md" not in first[:10], first


@pytest.mark.parametrize("others, kept", [(10, False), (12, True)])
def test_a_long_chapters_sibling_sections_keep_no_place_of_hybrids_pages_they_match_worse(tmp_path_factory, others,
                                                                                          kept):
    # issue 41 §3 (round 24): two sections of a chapter lead plain retrieval, so its sibling sections join the survey
    # and push out the ssh page and the checklist (hybrid's third and fourth), which speak of root logins too. In a
    # chapter of at most `LONG` files the siblings keep those places (a FAQ chapter's answers share its topic); in a
    # longer one two sections among the first five are chance, and a sibling keeps a place only when its chunks match
    # the question better as a whole than the page it displaces (here they do not)
    from lambdarag.domains.generic.survey import LONG, outline

    pages = {"04.01-restricting-console-login.md": "# Restricting console login\n\nKeep root logins off the console: "
                                                   "securetty lists the terminals where root logins are allowed.\n",
             "04.02-restricting-su.md": "# Restricting su\n\nKeep root logins through su to the wheel group: pam_wheel "
                                        "restricts who may become root.\n",
             "05.01-securing-ssh.md": "# Securing ssh\n\nPermitRootLogin no keeps root logins out of ssh.\n",
             "09.01-checklist.md": "# Checklist\n\nA checklist: no root logins on the console, none over ssh.\n"}
    topics = ("reboots", "the magic key", "partitions", "quotas", "tcp wrappers", "logs", "cron", "fonts", "sound",
              "mail", "printing", "users")
    for i, topic in enumerate(topics[:others], 3):
        pages[f"04.{i:02d}-restricting-{topic.replace(' ', '-')}.md"] = (f"# Restricting {topic}\n\nRestricting "
                                                                         f"{topic} keeps the system tidy.\n")
    for i, topic in enumerate(("fonts", "sound", "mail"), 6):
        pages[f"{i:02d}.01-{topic}.md"] = f"# {topic.title()}\n\nThe {topic} of the system.\n"
    index = index_of(tmp_path_factory, f"logins{others}", pages)
    assert (len(outline(index).files((4,))) > LONG) == kept
    query = "Summarize the ways to restrict root logins"
    plain = list(dict.fromkeys(h.source for h in to_hits(index.bm25(query, 50), "bm25")))
    assert plain[:4] == ["04.01-restricting-console-login.md", "04.02-restricting-su.md", "05.01-securing-ssh.md",
                         "09.01-checklist.md"]
    out = build("survey_documents", {}).run(State.of(query, hits=(), time_range=None),
                                          Context(resources={"index": index})).hits
    first = list(dict.fromkeys(h.source for h in out))
    assert ({"05.01-securing-ssh.md", "09.01-checklist.md"} <= set(first[:5])) == kept, first
    assert first[:2] == plain[:2] and set(plain[:10]) <= set(first)


def test_a_document_ranks_as_a_whole_by_the_mean_of_its_best_chunks_in_each_retriever():
    # issue 41 (round 24): a page three of whose chunks match ranks above one with the single best chunk; a document
    # one retriever did not return counts as that retriever's lowest
    from lambdarag.domains.generic.survey import document_ranking
    from lambdarag.skills.store.records import RankedList

    def ranked(retriever, scored):
        return RankedList(retriever=retriever, query="q", hits=tuple(
            Hit(chunk_id=f"{d}#{i}", text="", source=d, score=s, scores={retriever: s})
            for i, (d, s) in enumerate(scored)))

    bm25 = ranked("bm25", [("one.md", 9.0), ("three.md", 6.0), ("three.md", 6.0), ("three.md", 6.0), ("one.md", 1.0),
                           ("one.md", 1.0), ("low.md", 0.5)])
    assert document_ranking([bm25]) == ["three.md", "one.md", "low.md"]
    dense = ranked("dense", [("low.md", 0.9), ("one.md", 0.2), ("three.md", 0.1)])
    assert document_ranking([bm25, dense])[-1] == "one.md"   # low.md: bm25's lowest and dense's best
    assert document_ranking([ranked("dense", [("new.md", 0.5)]), bm25])[-1] == "low.md"
    assert document_ranking([]) == []


@pytest.mark.parametrize("order, fixed, wholes, kept", [
    # the sibling s1 matches worse as a whole than hybrid's c: c takes its place, s1 follows
    (["a", "b", "s1", "d", "e", "f"], {"a", "b", "d", "e"}, ["a", "c", "b", "s1"], ["a", "b", "d", "e", "c", "s1", "f"]),
    # and better: it keeps its place
    (["a", "b", "s1", "d", "e", "f"], {"a", "b", "d", "e"}, ["s1", "a", "c"], ["a", "b", "s1", "d", "e", "f"]),
    # everything fixed: the order stands
    (["a", "s1", "b", "d", "e"], {"a", "s1", "b", "d", "e"}, ["c"], ["a", "s1", "b", "d", "e"]),
])
def test_an_unfixed_addition_keeps_a_place_of_plain_retrievals_only_by_matching_better_as_a_whole(order, fixed, wholes,
                                                                                                  kept):
    from lambdarag.domains.generic.survey import arbitrated

    assert arbitrated(order, ["a", "b", "c", "d", "e"], wholes, fixed) == kept


@pytest.mark.parametrize("order, kept", [
    # c, put back in the place of the addition it displaced, had gone ahead of b: the pages of plain's first five
    # take plain's order in the places they hold, the additions keep theirs
    (["a", "c", "s1", "b", "s2", "x"], ["a", "b", "s1", "c", "s2", "x"]),
    (["s1", "e", "d", "s2", "a", "b"], ["s1", "a", "d", "s2", "e", "b"]),
    (["a", "b", "s1"], ["a", "b", "s1"]),
])
def test_a_survey_adds_to_plain_retrievals_pages_without_reordering_them(order, kept):
    # issue 41 §3 (round 24): install-guide-zh-cn dev s02 put plain's fifth page ahead of its fourth, the answer
    from lambdarag.domains.generic.survey import plain_order

    assert plain_order(order, ["a", "b", "c", "d", "e", "f"]) == kept
