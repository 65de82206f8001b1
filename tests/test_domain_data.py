"""The non-statute question sets validate: labels name real corpus files, passages are verbatim, halves are the split."""
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from bench import debian_docs, domain_data


def records(corpus, halves=domain_data.HALVES):
    return [r for half in halves for r in domain_data.load(corpus, half)]


@pytest.mark.parametrize("corpus", domain_data.LABELLED)
def test_labels_name_files_of_the_manifest(corpus):
    files = set(domain_data.manifest(corpus)["sha256"])
    assert domain_data.problems(records(corpus, domain_data.halves_of(corpus)), files) == []


@pytest.mark.parametrize("corpus", domain_data.LABELLED)
def test_forty_questions_eight_per_type_and_the_halves_are_the_seeded_split(corpus):
    rows = records(corpus)
    per_type = 8 if corpus in domain_data.CORPORA else 6   # the held-out corpora (rounds 16, 18-27): 30, 6 a type
    assert len(rows) >= 5 * per_type and min(Counter(r["type"] for r in rows).values()) >= per_type
    assert set(Counter(r["type"] for r in rows)) == set(domain_data.TYPES)
    dev, test = domain_data.split(sorted(rows, key=lambda r: r["qid"]), domain_data.seed_of(corpus))
    assert {r["qid"] for r in dev} == {r["qid"] for r in domain_data.load(corpus, "dev")}
    assert {r["qid"] for r in test} == {r["qid"] for r in domain_data.load(corpus, "test")}
    assert {r["lang"] for r in rows} == {"en" if corpus.endswith("-en") else "zh"}


def test_problems_name_what_is_wrong():
    files = {"a.md", "b.md"}
    bad = [{"qid": "x", "query": "how do apt and dpkg differ", "type": "compare", "lang": "en",
            "relevant": ["a.md", "c.md"], "evidence": {"a.md": "apt"}, "named": ["apt", "rpm"]},
           {"qid": "x", "query": "q", "type": "survey", "lang": "fr", "relevant": ["b.md"], "evidence": {"b.md": "q"}}]
    found = domain_data.problems(bad, files)
    assert "x: no file c.md" in found and "x: relevant c.md has no evidence" in found
    assert "x: named 'rpm' is not in the query" in found and "x: duplicate qid" in found
    assert any("type 'survey'" in p for p in found) and any("lang 'fr'" in p for p in found)


def test_a_passage_missing_from_its_file_is_reported(tmp_path):
    (tmp_path / "a.md").write_text("# Links\nA hard link is a duplicate\nname for a file.\n", encoding="utf-8")
    good = {"qid": "f", "query": "q", "type": "fact", "lang": "en", "relevant": ["a.md"],
            "evidence": {"a.md": "a duplicate name for"}}
    assert domain_data.problems([good], {"a.md"}, tmp_path) == []
    assert domain_data.problems([good | {"evidence": {"a.md": "a symlink"}}], {"a.md"}, tmp_path) == [
        "f: a.md does not contain 'a symlink'"]


def installed(package):
    return shutil.which("dpkg-query") and subprocess.run(["dpkg-query", "-W", package], capture_output=True).returncode == 0


@pytest.mark.parametrize("corpus", domain_data.LABELLED)
def test_the_converter_reproduces_the_labelled_corpus_and_every_passage_is_in_it(corpus, tmp_path):
    if corpus not in debian_docs.SOURCES:
        pytest.skip(f"bench/debian_docs.py has no converter for {corpus}")
    package = debian_docs.SOURCES[corpus].package
    if not installed(package):
        pytest.skip(f"{package} is not installed (apt-get install {package})")
    got = debian_docs.write(corpus, tmp_path / corpus)
    want = domain_data.manifest(corpus)
    if got["version"] != want["version"]:
        pytest.skip(f"{package} {got['version']} installed, the questions were labelled on {want['version']}")
    assert got["sha256"] == want["sha256"]
    assert domain_data.problems(records(corpus, domain_data.halves_of(corpus)), set(got["sha256"]), tmp_path / corpus) == []


def test_default_runs_leave_the_held_out_corpora_out():
    held_out = (domain_data.OPENED, domain_data.DEV_OPENED, domain_data.HELD_OUT)
    assert not set().union(*held_out) & set(domain_data.CORPORA)
    assert set(domain_data.LABELLED) == set(domain_data.CORPORA).union(*held_out)
    assert len(domain_data.LABELLED) == len(domain_data.CORPORA) + sum(map(len, held_out))   # no corpus in two tuples


def test_classify_types_by_default_leaves_every_held_out_corpus_out_and_takes_the_tuned_ones():
    from bench import classify_types
    held_out = set(domain_data.OPENED + domain_data.DEV_OPENED + domain_data.HELD_OUT)
    assert {"postgres-sql-en", "wizards-zh-cn", "r-intro-en", "chart-help-zh-cn", "bind-arm-en", "office-guide-zh-cn",
            "mutt-manual-en", "impress-draw-guide-zh-cn", "wireshark-guide-en", "kicad-tools-zh-cn", "bash-ref-en",
            "writer-guide-zh-cn", "kernel-handbook-en", "calc-guide-zh-cn", "harden-en", "kicad-pcb-zh-cn", "policy-en",
            "handbook-zh-cn", "edu-en", "edu-zh-cn"} <= held_out
    assert not held_out & set(classify_types.DEFAULT_SETS)
    assert set(domain_data.CORPORA) <= set(classify_types.DEFAULT_SETS)


def test_a_sphinx_page_loses_its_navigation_and_its_headings_their_permalinks():
    page = ('<div class="related"><ul><li><a href="index.html">developers-reference 12.18 documentation</a></li></ul></div>'
            '<section id="pkgs"><h1><span class="section-number">5. </span>Managing Packages'
            '<a class="headerlink" href="#pkgs" title="Permalink to this heading">¶</a></h1>'
            '<section id="new"><h2><span class="section-number">5.1. </span>New packages'
            '<a class="headerlink" href="#new" title="Permalink to this heading">¶</a></h2>'
            '<p>File an ITP bug first.</p></section></section>'
            '<div class="sphinxsidebar"><h3>Navigation</h3></div><div class="footer">© Copyright</div>')
    files = debian_docs.markdown_files([page], 2)
    assert files == {"05.01-new-packages.md": "# New packages\nFile an ITP bug first.\n"}


def test_a_read_the_docs_permalink_icon_is_left_out_of_headings_and_of_the_terms_it_follows():
    link = '<a class="headerlink" href="#{0}" title="Permalink to this {1}">\uf0c1</a>'   # the theme's link glyph
    page = (f'<section id="ops"><h1><span class="section-number">4. </span>Operations{link.format("ops", "heading")}</h1>'
            f'<section id="sig"><h2><span class="section-number">4.2. </span>Signals{link.format("sig", "heading")}</h2>'
            f'<dl><dt id="opt-port"><span class="pre">default-port</span>{link.format("opt-port", "definition")}</dt>'
            '<dd><p>The port rndc connects to.</p></dd></dl></section></section>'
            '<footer><div class="rst-footer-buttons" role="navigation"><a href="ch5.html">Next</a></div>'
            '<p>© Copyright 2026.</p></footer>')
    files = debian_docs.markdown_files([page], 2)
    assert files == {"04.02-signals.md": "# Signals\ndefault-port\nThe port rndc connects to.\n"}


def test_a_numbered_chapter_heading_numbers_its_files_and_navigation_tables_are_left_out():
    page = ('<div><table class="nav"><tr><th>Valgrind User Manual</th></tr></table></div>'
            '<div class="chapter"><h1 class="title">4. Memcheck: a memory error detector</h1>'
            '<h2 class="title">4.1. Overview</h2><p>Memcheck is a memory error detector.</p>'
            '<table class="nav" summary="Navigation footer"><tr><td>&lt;&lt; 3. Core</td><td>5. Cachegrind &gt;&gt;</td>'
            '</tr></table></div>')
    files = debian_docs.markdown_files([page], 2)
    assert list(files) == ["04.01-overview.md"]
    assert files["04.01-overview.md"] == "# Overview\nMemcheck is a memory error detector.\n"


def test_a_link_to_a_headings_own_id_points_at_the_file_that_heading_starts():
    page = ('<div class="sect1"><h2 id="_edit">1. Editing</h2><div class="sectionbody">'
            '<div class="sect2"><h3 id="_zones">1.1. Zones</h3><p>Zones keep clearance, see <a href="#_rules">rules</a>.</p>'
            '</div><div class="sect2"><h3 id="_rules">1.2. Rules</h3><p>Rules are checked last first.</p></div></div></div>')
    files = debian_docs.markdown_files([page], 3)   # asciidoctor's shape (kicad-pcb-zh-cn): the id is on the <h3>
    assert files == {"01.01-zones.md": "# Zones\nZones keep clearance, see [rules](01.02-rules.md).\n",
                     "01.02-rules.md": "# Rules\nRules are checked last first.\n"}


def test_with_split_1_every_help_page_is_one_file_and_its_debug_box_is_left_out():
    pages = ['<header><p>LibreOffice 7.4 帮助</p></header><h1 id="hd_a">添加自动筛选</h1><p>选择要添加自动筛选的列。</p>'
             '<h2>示例</h2><p>见<a href="zh-CN/text/scalc/guide/b.html#b">数据排序</a>。</p>'
             '<footer><div id="DEBUG" class="debug"><h3 class="bug">Help content debug info:</h3>'
             '<p>This page is: a.xhp</p></div></footer>',
             '<h1 id="hd_b"><a name="b"></a>数据排序</h1><p>选择「数据 - 排序」。</p>']
    files = debian_docs.markdown_files(pages, 1)   # LibreOffice help's shape (calc-guide-zh-cn): one h1 a page
    assert files == {"00.01-添加自动筛选.md": "# 添加自动筛选\n选择要添加自动筛选的列。\n## 示例\n见[数据排序](00.02-数据排序.md)。\n",
                     "00.02-数据排序.md": "# 数据排序\n选择「数据 - 排序」。\n"}


def test_preparing_a_corpus_stops_when_its_index_fails_to_build(monkeypatch):
    """A failed `lambdarag index` must stop the benchmark, not leave it to run on a half-built index."""
    from bench import domain_bench

    corpus = domain_data.CORPORA[0]
    monkeypatch.setattr(domain_bench, "default_out", lambda c: domain_bench.Path("/nonexistent") / c)
    monkeypatch.setattr(domain_bench, "manifest", lambda c: {"sha256": {}, "package": "p", "version": "1"})
    monkeypatch.setattr(domain_bench, "write", lambda c, folder: {"sha256": {}, "package": "p", "version": "1"})
    monkeypatch.setattr(domain_bench, "cli", lambda argv: 2)
    with pytest.raises(SystemExit, match=f"{corpus}: `lambdarag index` failed"):
        domain_bench.prepare(corpus)


def test_a_texinfo_page_numbers_its_files_from_headings_without_a_dot_and_links_reach_the_heading_after_the_anchor():
    page = ('<div class="Contents_element" id="SEC_Contents"><h2 class="contents-heading">Table of Contents</h2>'
            '<div class="contents"><ul class="no-bullet"><li><a href="#Quoting">3.1 Quoting</a></li></ul></div></div>'
            '<div class="chapter" id="Basic-Shell-Features"><div class="header"><p>Next: <a href="#Quoting">Quoting</a>'
            '</p></div><span id="Basic-Shell-Features-1"></span><h2 class="chapter">3 Basic Shell Features</h2>'
            '<p>Bash is a shell.</p><ul class="section-toc"><li><a href="#Quoting">Quoting</a></li></ul><hr>'
            '<div class="section" id="Quoting"><div class="header"><p>Up: <a href="#Basic-Shell-Features">Basic</a>'
            '</p></div><span id="Quoting-1"></span><h3 class="section">3.1 Quoting</h3><p>See <a href="#Expansion">'
            'expansion</a>.</p><h4 class="subsection">3.1.1 Escape Character</h4><p>A backslash.</p></div>'
            '<div class="section" id="Expansion"><span id="Expansion-1"></span><h3 class="section">3.2 Expansion</h3>'
            '<p>Words expand.</p></div></div>'
            '<div class="appendix" id="Indexes"><span id="Indexes-1"></span><h2 class="appendix">Appendix D Indexes</h2>'
            '<p>Every index.</p><table class="index-cp"><tr><td><a href="#Quoting">quoting</a></td></tr></table></div>')
    files = debian_docs.markdown_files([page], 3, ids_lead=True)   # makeinfo's one-page HTML (bash-ref-en)
    assert files == {"03.00-basic-shell-features.md": "# Basic Shell Features\nBash is a shell.\n",
                     "03.01-quoting.md": "# Quoting\nSee [expansion](03.02-expansion.md).\n## Escape Character\n"
                                         "A backslash.\n",
                     "03.02-expansion.md": "# Expansion\nWords expand.\n",
                     "03.00-indexes.md": "# Indexes\nEvery index.\n"}


def test_the_slow_machine_bench_config_is_the_shipped_one_with_a_longer_deadline():
    """bench/timeout600.yml (round 22's held-out answers) may differ from agent-config.yml in the deadline alone, or
    its answers would not be the shipped configuration's."""
    from lambdarag.orchestration.config import load_config

    root = Path(__file__).resolve().parents[1]
    slow, shipped = (load_config(str(root / f)).model_dump() for f in ("bench/timeout600.yml", "agent-config.yml"))
    assert slow["limits"].pop("timeout_seconds") == 600.0
    shipped["limits"].pop("timeout_seconds")
    assert slow == shipped
