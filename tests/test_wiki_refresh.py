"""A write-back refreshes the wiki pages it wrote: the store then reads and ranks as one read afresh from the folder,
having re-read and re-tokenised only those pages."""
from __future__ import annotations

import shutil

import pytest

from lambdarag.orchestration.demo_index import PREBUILT
from lambdarag.skills.store.tokenize import default_tokenizer
from lambdarag.skills.store.wiki import WikiStore

QUERIES = ["海事管理机构职责", "船员 培训 发证", "国际海运条例 经营者", "水污染防治", "海上交通安全法 船长"]


class CountingTokenizer:
    """The default tokenizer, counting the texts it tokenises."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.inner = default_tokenizer()

    def __call__(self, text: str) -> list[str]:
        self.texts.append(text)
        return self.inner(text)


def ranking(store: WikiStore) -> list[list[tuple[str, float]]]:
    return [[(p.entity, round(p.score, 9)) for p in store.search(q, k=5)] for q in QUERIES]


@pytest.fixture
def wiki(tmp_path):
    shutil.copytree(PREBUILT / "wiki", tmp_path / "wiki")
    return tmp_path / "wiki"


def test_a_refresh_ranks_and_reads_as_a_fresh_store_tokenising_only_the_pages_written(wiki):
    tokenizer = CountingTokenizer()
    store = WikiStore(wiki, tokenizer)
    before = ranking(store)
    pages = sorted((wiki / "entities").glob("*.md"))
    changed, removed = pages[3], pages[5]
    changed.write_text(changed.read_text(encoding="utf-8") + "\n- 船员 培训 发证 海事管理机构职责\n", encoding="utf-8")
    removed.unlink()
    head, body = pages[7].read_text(encoding="utf-8").split("\n", 1)
    added = wiki / "entities" / "新实体.md"
    old_entity = head.split('"entity": "')[1].split('"')[0]
    added.write_text(head.replace(f'"entity": "{old_entity}"', '"entity": "新实体"') + "\n# 新实体\n\n水污染防治 船长\n",
                     encoding="utf-8")
    tokenizer.texts.clear()
    store.refresh(p.relative_to(wiki).as_posix() for p in (changed, removed, added))
    refreshed = ranking(store)
    assert len(tokenizer.texts) == 2 + len(QUERIES)           # the rewritten and the new page, then the queries

    fresh = WikiStore(wiki, CountingTokenizer())
    assert refreshed == ranking(fresh) and refreshed != before
    assert set(store.pages()) == set(fresh.pages())
    assert store.read("新实体").text == fresh.read("新实体").text
    assert store.read(old_entity).text == fresh.read(old_entity).text


def test_a_refresh_before_any_read_reads_the_folder_as_it_is(wiki):
    store = WikiStore(wiki)
    (wiki / "entities" / sorted(p.name for p in (wiki / "entities").glob("*.md"))[0]).unlink()
    store.refresh(["entities/missing.md"])
    assert set(store.pages()) == set(WikiStore(wiki).pages())
