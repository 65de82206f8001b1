"""What a Chinese manual's converted pages give the offline answer to quote (skills.evidence): a table of contents
line of links, a `symbol = meaning` list. Texts written for these tests."""
from __future__ import annotations

from lambdarag import Context, State
from lambdarag.skills.evidence import candidates, stands
from lambdarag.skills.generate import extractive_answer
from lambdarag.domains import profile_named
from lambdarag.skills.store.records import Hit

GENERIC = profile_named("generic")


def hit(text: str, source: str, n: int = 0) -> Hit:
    return Hit(chunk_id=f"{source}#{n}", text=text, source=source, title=source.removesuffix(".md"), section="",
               score=1.0 - n / 10)


def answer_to(query: str, *hits: Hit, query_type: str = "fact") -> str:
    state = State.of(query, hits=hits, query_type=query_type)
    return extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]


def test_a_line_of_links_alone_is_a_table_of_contents_and_never_stands():
    """A converted manual's front page lists its chapters as links (`[1. 简介](01.00-简介.md)。`): such a line names
    where the text is and says nothing, yet it was quoted as an overview's point."""
    assert not stands("[1. 照片浏览器简介](01.00-照片浏览器简介.md)。")
    assert not stands("[3. 使用相册管理器](03.00-使用相册管理器.md) [3.1. 相册窗口](03.01-相册窗口.md)")
    assert not stands("- [Getting started](01-start.md), [Albums](02-albums.md)")
    assert not stands("2. 安装和升级 [2.1. 导入设置](02.01-导入设置.md)")
    assert stands("相册可以按[拍摄日期](02.01-日期.md)排序，也可以按文件名排序。")     # a sentence with a link says it


def test_a_symbol_and_its_meaning_on_a_line_stand_as_one_unit():
    """A list of format symbols written one `symbol = meaning` per line (`%m = 两位数的月份`) under a lead-in: each
    line is a record, too short for a sentence of three words, and the only place saying what the symbol gives."""
    text = ("# 日期格式\n文件名模板里可以使用日期格式代码。\n代码如下：\n%Y = 四位数的年份\n%m = 两位数的月份\n"
            "%d = 月中的第几天\n%H = 小时（24 小时制）\n例：\n“%Y-%m” 显示为“2024-05”")
    page = hit(text, "04.02-日期格式.md")
    found = [c.text for c in candidates([page], GENERIC)]
    assert "%m = 两位数的月份" in found, found
    assert "%m = 两位数的月份" in answer_to("模板里写 %m 会得到什么？", page)
    assert not stands("x = 1") and not stands("=A1*9/5+32")     # an assignment or a formula is no meaning


def test_a_headerless_tables_first_row_is_a_row_too_and_column_names_are_none():
    """A converter writes a table without a header with its first row above the rule (`| *.dxf | AutoCAD 2000 或更高
    版本的 DXF 图纸 |`): a record, not column names, and the only place saying it. Column names (操作 | 默认快捷键)
    stay the rows' heading and are never quoted."""
    formats = hit("# 导入格式\n可以导入下列格式的文件。\n| *.dxf | AutoCAD 2000 或更高版本的 DXF 图纸 |\n|---|---|\n"
                  "| *.svg | 矢量图形 (SVG 1.1) |\n| *.png | 位图 |", "03.02-导入格式.md")
    keys = hit("# 快捷键\n| 操作 | 默认快捷键 | 说明 |\n|---|---|---|\n| 放大 | F1 | 放大视图 |", "05.01-快捷键.md", 1)
    found = [c.text for c in candidates([formats, keys], GENERIC)]
    assert "*.dxf | AutoCAD 2000 或更高版本的 DXF 图纸" in found, found
    assert "*.svg | 矢量图形 (SVG 1.1)" in found and "放大 | F1 | 放大视图" in found
    assert not any(t.startswith("操作 | 默认快捷键") for t in found)
    assert "AutoCAD 2000 或更高版本" in answer_to("能导入 AutoCAD 的 DXF 图纸吗？对版本有要求吗？", formats, keys)



def test_a_cell_holding_only_an_empty_link_is_no_part_of_a_row():
    """An icon a converter left as a link without words (`[](14.04-apparmor.md)`) says nothing: its target must not
    make the row name AppArmor, nor stand in the row's text."""
    steps = hit("# Profiles\n| [](14.04-apparmor.md) | The first event detected is the execution of another program. |\n"
                "|---|---|\n| [](14.04-apparmor.md) | The second event is a file read. |", "14.04-profiles.md")
    found = [c.text for c in candidates([steps], GENERIC)]
    assert "The first event detected is the execution of another program." in found, found
    assert not any("](" in t for t in found), found


def test_a_sentence_a_one_line_code_block_ends_is_quoted_with_it():
    """A Chinese manual's sentence ending in its command (`要查看校验和，请使用` above `$ sha256sum 文件名`) is
    quoted with that line: alone it ends on 请使用 and says nothing."""
    page = hit("# 校验\n要查看下载文件的校验和，请在终端里使用\n```\n$ sha256sum debian.iso\n```\n结果应与网站上的一致。",
               "03.01-校验.md")
    assert [c.text for c in candidates([page], GENERIC)] == [
        "要查看下载文件的校验和，请在终端里使用 sha256sum debian.iso", "$ sha256sum debian.iso", "结果应与网站上的一致。"]
