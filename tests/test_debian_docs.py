"""bench/debian_docs.py: DocBook HTML pages become one markdown file per section, structure and links kept."""
from bench.debian_docs import markdown_files, slug, toc_order

CHAPTER = """<html><head><title>Chapter 3. Boot</title></head><body>
<div class="navheader"><table><tr><th>Chapter 3. Boot</th></tr></table></div>
<div class="chapter"><h1 class="title"><a id="_boot"/>Chapter 3. Boot</h1>
<div class="toc"><p>3.1. Stages</p></div>
<p>How the system starts.</p>
<div class="section"><h2 class="title"><a id="_stages"/>3.1. Stages</h2>
<p>The boot is a <em>four-stage</em>
rocket, see <a class="xref" href="ch04.en.html#_login">Section 4.1</a> and <a href="https://x.org/a?b=1&amp;c=2">X</a>.</p>
<div class="section"><h3 class="title"><a id="_uefi"/>3.1.1. Stage 1: the UEFI</h3>
<ul><li><p>first item</p></li><li><p>second</p><ul><li><p>nested</p></li></ul></li></ul>
<pre class="screen"># grub-install /dev/sda
$ echo "&lt;done&gt;"</pre>
<table><tr><th>entity</th><th>text</th></tr><tr><td>&amp;lt;</td><td>a | b</td></tr></table>
</div></div></div>
<div class="navfooter"><p>Prev Next</p></div></body></html>"""

LOGIN = """<html><body><div class="chapter"><h1 class="title">Chapter 4. Login</h1>
<div class="section"><h2 class="title"><a id="_login"/>4.1. Login</h2><p>Back to <a href="ch03.en.html#_uefi">UEFI</a>
and to <a href="ch09.en.html#_nowhere">a page not converted</a>.</p></div></div></body></html>"""


def files():
    return markdown_files([CHAPTER, LOGIN], split=2)


def test_one_file_per_section_named_by_number_and_title_with_the_chapter_intro_apart():
    assert sorted(files()) == ["03.00-boot.md", "03.01-stages.md", "04.01-login.md"]
    assert files()["03.00-boot.md"] == "# Boot\nHow the system starts.\n"


def test_headings_lists_code_and_tables_become_markdown_and_navigation_is_dropped():
    text = files()["03.01-stages.md"]
    assert text.startswith("# Stages\nThe boot is a four-stage rocket, see [Section 4.1](04.01-login.md) and "
                           "[X](https://x.org/a?b=1&c=2).\n## Stage 1: the UEFI\n- first item\n- second\n  - nested\n")
    assert '```\n# grub-install /dev/sda\n$ echo "<done>"\n```' in text
    assert "| entity | text |\n|---|---|\n| &lt; | a \\| b |" in text
    assert "Prev" not in text and "Chapter" not in text and "3.1" not in text


def test_links_inside_the_corpus_point_at_files_and_other_links_keep_only_their_text():
    assert files()["04.01-login.md"] == "# Login\nBack to [UEFI](03.01-stages.md) and to a page not converted.\n"


def test_slugs_keep_letters_of_any_script_and_are_bounded():
    assert slug("Systemd init") == "systemd-init"
    assert slug("什么是 Debian GNU/Linux？") == "什么是-debian-gnu-linux"
    assert len(slug("x" * 100)) == 40 and slug("？！") == "section"


MANUAL = """<html><body><div class="article"><div class="titlepage"><h2 class="title"><a id="idm1"></a>Edu Manual</h2>
<h3 class="subtitle"><em>Publish date: 2024-01-31</em></h3></div>
<div class="section"><h2 class="title"><a id="idm5"></a>1. About</h2><p>This is the manual.</p></div>
<div class="section"><h2 class="title"><a id="Arch"></a>3. Architecture</h2>
<div class="section"><h3 class="title"><a id="Net"></a>3.1. Network</h3><p>One subnet.</p>
<div class="section"><h4 class="title">3.1.1. Main server</h4><p>It runs <a href="#Adm">admin</a>.</p></div></div>
<div class="section"><h3 class="title"><a id="Adm"></a>3.2. Administration</h3><p>GOsa.</p></div></div>
</div></body></html>"""


def test_a_one_page_manual_splits_at_its_third_level_chapters_numbered_from_their_h2_headings():
    manual = markdown_files([MANUAL], split=3)
    assert sorted(manual) == ["01.00-about.md", "03.01-network.md", "03.02-administration.md"]
    assert manual["03.01-network.md"] == "# Network\nOne subnet.\n## Main server\nIt runs [admin](03.02-administration.md).\n"


HANDBOOK_CHAPTER = """<html><body><div id="banner"><a href="http://x"><span class="text">Download the ebook</span></a></div>
<p id="title"><a class="left" href="http://www.debian.org"><img alt="Product Site" src="i.png"/></a></p>
<ul class="docnav top"><li class="previous"><a href="a.html"><strong>Prev</strong></a></li></ul>
<div class="chapter"><h1 class="title">Chapter 6. APT</h1><div class="section"><h2 class="title">6.1. Sources</h2>
<div class="para">One line per source.</div></div></div>
<ul class="docnav"><li class="next"><a href="b.html"><strong>Next</strong>6.2. apt</a></li></ul></body></html>"""

HANDBOOK_SECTION = """<html><body><ul class="docnav top"><li>Prev</li></ul>
<div class="section"><h2 class="title">Frontends</h2><div class="para">Use <code>apt</code>.</div></div></body></html>"""


def test_handbook_pages_drop_banner_and_navigation_and_a_section_page_goes_on_numbering_its_chapter():
    got = markdown_files([HANDBOOK_CHAPTER, HANDBOOK_SECTION], split=2)
    assert got == {"06.01-sources.md": "# Sources\nOne line per source.\n",
                   "06.02-frontends.md": "# Frontends\nUse apt.\n"}


def test_a_table_of_contents_page_gives_the_reading_order(tmp_path):
    toc = tmp_path / "index.html"
    toc.write_text('<a href="preface.html">P</a><a href="apt.html#x">6</a><a href="sect.apt-get.html">6.2</a>'
                   '<a href="apt.html">6 again</a><a href="https://debian.org/x.html">out</a>', encoding="utf-8")
    pages = [tmp_path / n for n in ("sect.apt-get.html", "zzz.html", "apt.html", "preface.html")]
    assert [p.name for p in sorted(pages, key=toc_order(toc))] == [
        "preface.html", "apt.html", "sect.apt-get.html", "zzz.html"]
