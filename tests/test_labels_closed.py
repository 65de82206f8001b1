"""Labels fail closed: front matter is found wherever a stray blank line, space or BOM puts it, and labels the schema
cannot read keep their document from everyone, with a warning naming the file and the key."""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from lambdarag import User
from lambdarag.orchestration.cli import main
from lambdarag.skills.store.index import open_index
from tests.test_crash_safety import home   # noqa: F401  (a fixture: a data home of its own, feedback off)

BODY = "# 内部通报{n}\n\n本通报编号甲{n}乙，仅限人事处阅读。\n"
MISLABELLED = {   # twelve ways an author meant a document restricted and a reader might have made it public
    "blank-line.md": "\n---\ndepartment: 人事处\n---\n",
    "space.md": " ---\ndepartment: 人事处\nsecurity_level: 1\n ---\n",
    "bom.md": "\ufeff---\ndepartment: 人事处\n---\n",
    "blank-bom.md": "\n\ufeff---\nsecurity_level: 2\n---\n",
    "tab.md": "\t---\ndepartment: 人事处\n---\n",
    "nested.md": "---\nmetadata:\n  department: 人事处\n  security_level: 2\n---\n",
    "acl.md": "---\nacl: [人事处]\n---\n",
    "private.md": "---\nprivate: true\n---\n",
    "list.md": "---\ndepartment: [人事处, 安保处]\n---\n",
    "word-level.md": "---\nsecurity_level: high\n---\n",
    "empty.md": "---\ndepartment: ''\n---\n",
    "access-typo.md": "---\naccess:\n  departments: 人事处\n---\n",
}
SKIPPED = {"nested.md": "metadata.department", "acl.md": "'acl'", "private.md": "'private'", "list.md": "department",
           "word-level.md": "security_level", "empty.md": "department", "access-typo.md": "access.departments"}


def test_none_of_twelve_mislabelled_documents_is_served_to_the_public(home):
    corpus = home / "docs"
    corpus.mkdir()
    for n, (name, head) in enumerate(MISLABELLED.items()):
        (corpus / name).write_text(head + BODY.format(n=n), encoding="utf-8")
    (corpus / "public.md").write_text("# 公开须知\n\n本须知编号甲99乙，人人可读。\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["index", "--corpus", str(corpus), "--name", "kb", "--no-dense", "--no-wiki"]) == 0
    for name, key in SKIPPED.items():
        line = next((x for x in err.getvalue().splitlines() if x.startswith(f"skipped {name}:")), "")
        assert key in line and "nobody may read it until its access labels are fixed" in line, (name, err.getvalue())
    printed = out.getvalue()
    assert "restricted: 5 of 6 documents" in printed
    assert "readable by: public 1, department=人事处 6, security_level=1 1, security_level=2 2" in printed
    assert "unreadable to everyone: 7 document(s)" in printed
    index = open_index("kb")
    public = {c.source for c, _ in index.bm25("内部通报 编号 人事处 阅读", 50, user=None)}
    assert public == {"public.md"}     # 0 of the twelve; the public document is searchable
    hr = {c.source for c, _ in index.bm25("内部通报 编号 人事处 阅读", 50, user=User(departments=("人事处",),
                                                                                 security_level=2))}
    assert hr == set(MISLABELLED) - set(SKIPPED) | {"public.md"}   # the labels a stray space hid are read
