"""BM25 must score exactly like rank_bm25's BM25Okapi on the same tokens, through an inverted index."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from rank_bm25 import BM25Okapi

from lambdarag.skills.store.corpus import searchable_text
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.store.bm25 import Bm25Index
from lambdarag.skills.store.tokenize import Tokenizer
from tests.conftest import MARITIME, ROOT, STARD

WORDS = list("abcdefgh")


def build(docs):
    index = Bm25Index()
    index.add(docs)
    return index


def test_scores_equal_rank_bm25_with_idf_floor_repeats_and_unknown_terms():
    docs = [["a", "b", "a"], ["a", "c"], ["a", "d", "e"], ["b", "b", "f"], ["a"]]  # "a" in 4/5 docs: negative idf
    ref = BM25Okapi(docs)
    ours = build(docs)
    for query in (["a"], ["a", "a", "b"], ["zzz", "c"], ["b", "f", "e", "a"], []):
        assert np.allclose(ours.scores(query), ref.get_scores(query), rtol=1e-12, atol=1e-12)
    assert ours.idf[ours.vocab["a"]] == pytest.approx(ref.idf["a"]) and ref.idf["a"] > 0  # floored


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), min_size=1, max_size=12),
       st.lists(st.sampled_from(WORDS + ["x"]), max_size=5))
def test_random_corpora_match_rank_bm25(docs, query):
    ref = BM25Okapi(docs).get_scores(query)
    ours = build(docs)
    assert np.allclose(ours.scores(query), ref, rtol=1e-9, atol=1e-12)
    rows, scores = ours.top(query, 3)
    touched = [i for i, d in enumerate(docs) if set(d) & set(query)]
    expected = sorted(touched, key=lambda i: (-ref[i], i))[:3]
    assert len(rows) == len(expected) and set(rows) <= set(touched)
    assert np.allclose(scores, ref[expected], atol=1e-12)  # same best scores (ties may order differently)
    assert np.allclose(ref[rows], scores, atol=1e-12)


def test_real_statutes_match_rank_bm25_and_top_k_is_the_best():
    corpus = read_corpus(MARITIME / "行政法")
    tok = Tokenizer()
    docs = [tok(searchable_text(c)) for c in corpus.chunks]
    ref = BM25Okapi(docs)
    ours = build(docs)
    for q in ("船舶污染海洋环境的法律责任", "海关对进出境运输工具的监管", "海警机构可以使用武器的情形"):
        tokens = tok(q)
        expected = ref.get_scores(tokens)
        assert np.allclose(ours.scores(tokens), expected, rtol=1e-9)
        rows, scores = ours.top(tokens, 10)
        assert np.allclose(scores, np.sort(expected)[::-1][:10])


def test_top_k_of_real_questions_is_rank_bm25s_best_with_ties_to_the_earlier_row():
    """Top-k on the STARD fixture (200 articles, 30 real questions), with and without a permission mask: every
    returned score is rank_bm25's for that row, scores never rise, equal scores keep row order, and no touched
    article left out beats the last one returned."""
    import json

    tok = Tokenizer()
    articles = [json.loads(x) for x in (STARD / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = [tok(a["title"] + "\n" + a["text"]) for a in articles]
    ref, ours = BM25Okapi(docs), build(docs)
    allowed = np.arange(len(docs)) % 3 != 0
    questions = [json.loads(x)["query"] for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    for q in questions:
        tokens = tok(q)
        expected = ref.get_scores(tokens)
        for k, mask in ((10, None), (5, allowed), (len(docs), None)):
            rows, scores = ours.top(tokens, k, mask)
            touched = [i for i, d in enumerate(docs) if set(d) & set(tokens) and (mask is None or mask[i])]
            assert len(rows) == min(k, len(touched)) and set(rows) <= set(touched)
            assert np.allclose(scores, expected[rows], rtol=1e-9, atol=1e-12)
            assert np.array_equal(scores, ours.scores(tokens)[rows])             # top and scores agree bit for bit
            assert all(a > b or (a == b and r < s) for a, b, r, s in zip(scores, scores[1:], rows, rows[1:]))
            left_out = set(touched) - set(rows)
            assert not left_out or expected[list(left_out)].max() <= scores[-1] + 1e-9


def test_add_and_remove_equal_a_fresh_build():
    docs = [["a", "b"], ["b", "c", "c"], ["d"], ["a", "d", "e"]]
    index = build(docs[:2])
    index.add(docs[2:])
    index.keep(np.array([0, 2, 3]))
    fresh = [docs[0], docs[2], docs[3]]
    assert np.allclose(index.scores(["a", "b", "c", "d"]), BM25Okapi(fresh).get_scores(["a", "b", "c", "d"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), st.integers(-1, 3)),
                min_size=1, max_size=12), st.lists(st.sampled_from(WORDS + ["x"]), max_size=5))
def test_grouped_rows_score_as_rank_bm25_over_each_groups_tokens_together(rows, query):
    # issue 41: a survey ranks whole documents from their chunks' counts, with no chunk tokenised again
    present = sorted({g for _, g in rows if g >= 0})
    groups = np.array([present.index(g) if g >= 0 else -1 for _, g in rows])
    joined = [[t for tokens, g in rows if g == group for t in tokens] for group in present]
    whole = build([tokens for tokens, _ in rows]).grouped(groups, len(present))
    assert whole.size == len(present)
    if present:
        assert np.allclose(whole.scores(query), BM25Okapi(joined).get_scores(query), rtol=1e-9, atol=1e-12)


def expanded_reference(docs, rows, extra):
    """Returns rank_bm25 over `docs` with `extra[i]` appended to row `rows[i]`, keeping the original idf and average
    length (a term new to the corpus gets the idf of its frequency among the expanded rows)."""
    from collections import Counter
    ref = BM25Okapi(docs)
    for r, more in zip(rows, extra):
        ref.doc_freqs[r] = Counter(docs[r] + more)
        ref.doc_len[r] = len(docs[r]) + len(more)
    for t in {t for more in extra for t in more} - set(ref.idf):
        df = sum(t in more for more in extra)
        ref.idf[t] = np.log(len(docs) - df + 0.5) - np.log(df + 0.5)
    return ref


def test_scores_with_extra_terms_equal_rank_bm25_on_the_expanded_rows():
    docs = [["a", "b", "a"], ["a", "c"], ["a", "d", "e"], ["b", "b", "f"], ["a"], ["c", "e"]]
    rows, extra = [3, 1, 5], [["c", "q", "q"], [], ["a", "q", "z"]]      # q, z: words no document holds
    ours = build(docs)
    for query in (["a"], ["q", "b"], ["z", "c", "c"], ["e", "f", "x"], []):
        ref = expanded_reference(docs, rows, extra).get_scores(query)[rows]
        assert np.allclose(ours.scores_with(query, np.array(rows), build(extra)), ref, rtol=1e-12, atol=1e-12)


def test_scores_with_questions_appended_rank_real_statutes_as_a_rebuilt_index_does():
    corpus = read_corpus(MARITIME / "行政法")
    tok = Tokenizer()
    docs = [tok(searchable_text(c)) for c in corpus.chunks]
    questions = ["船舶漏油把海水弄脏了要赔多少钱", "海警什么时候可以开枪", "进出境的船要接受谁的检查"]
    rows = np.array([3, 10, 20])
    extra = [tok(q) for q in questions]
    rebuilt = build([d + extra[list(rows).index(i)] if i in rows else d for i, d in enumerate(docs)])
    for q in questions:
        ours = build(docs).scores_with(tok(q), rows, build(extra))
        exact = rebuilt.scores(tok(q))[rows]
        assert np.allclose(ours, exact, rtol=0.02) and list(np.argsort(-ours)) == list(np.argsort(-exact))


def test_allowed_mask_removes_rows():
    index = build([["a"], ["a", "b"], ["b"]])
    rows, _ = index.top(["a", "b"], 5, allowed=np.array([True, False, True]))
    assert set(rows) == {0, 2}


def test_tokenizer_drops_stopwords_and_punctuation_and_keeps_user_words():
    tok = Tokenizer()
    tokens = tok("请问船舶污染海洋环境，怎么处罚？！")
    assert "，" not in tokens and "？" not in tokens and "怎么" not in tokens and "请问" not in tokens
    assert "船舶" in tokens
    assert "琼州海峡定线制" not in tok("琼州海峡定线制什么时候施行")
    custom = Tokenizer(user_words=["琼州海峡定线制"])
    assert "琼州海峡定线制" in custom("琼州海峡定线制什么时候施行")
    assert custom.fingerprint() != tok.fingerprint()
    assert Tokenizer(stopwords=["船舶"])("船舶的污染") == ["的", "污染"]


def test_bm25_search_appends_learned_synonyms_to_the_query(tmp_path):
    from lambdarag import Context, State
    from lambdarag.skills import build as build_skill
    from lambdarag.skills.store.local import LocalBackend

    (tmp_path / "a.md").write_text("# 甲\n\n海员应当持有适任证书。\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# 乙\n\n港口应当设置航标。\n", encoding="utf-8")
    corpus = read_corpus(tmp_path)
    backend = LocalBackend(Tokenizer())
    backend.add(corpus.documents, corpus.chunks)
    search = build_skill("bm25_search", {})
    plain = search.run("船员", Context(resources={"index": backend}))
    learned = search.run("船员", Context(resources={"index": backend, "synonyms": {"船员": ["海员"]}}))
    assert plain.candidates[0].hits == ()
    assert [h.source for h in learned.candidates[0].hits] == ["a.md"]


def test_stored_dictionary_tokenizes_like_the_loaded_one(tmp_path, monkeypatch):
    from lambdarag.skills.store import tokenize

    monkeypatch.setattr(tokenize, "_CACHE_DIR", tmp_path)
    text = read_corpus(MARITIME / "行政法").chunks[5].text
    words = ["船舶污染监督管理", "海事管理机构职责"]
    stored, loaded = Tokenizer(user_words=words), Tokenizer(user_words=words)
    loaded._tokenized = tokenize.STORED_LIMIT + 1
    assert stored(text) == loaded(text) and stored("船舶污染监督管理由谁负责") == loaded("船舶污染监督管理由谁负责")
    assert isinstance(stored._jieba.FREQ, tokenize.StoredFrequencies) and isinstance(loaded._jieba.FREQ, dict)
    stored(text * (tokenize.STORED_LIMIT // len(text) + 1))       # past the limit the whole dictionary loads
    assert isinstance(stored._engine().FREQ, dict) and stored(text) == loaded(text)


def test_the_shipped_prefix_dictionary_is_the_one_this_jieba_builds(tmp_path):
    import lzma
    import shutil

    import jieba

    from lambdarag.skills.store import tokenize

    shipped = tokenize.shipped_dictionary(jieba.__version__)
    assert shipped.is_file(), f"{shipped} missing: run scripts/demo_index.py"
    with lzma.open(shipped) as packed, open(tmp_path / "d.sqlite", "wb") as out:
        shutil.copyfileobj(packed, out)
    freq, total = tokenize.prefix_dictionary()
    stored = tokenize.StoredFrequencies(tmp_path / "d.sqlite")
    assert tokenize.stored_total(tmp_path / "d.sqlite") == total
    assert all(stored.get(w) == n for w, n in freq.items())        # every word and prefix, with jieba's count
    texts = {w[:i] + c for w in list(freq)[::50] for i in range(len(w)) for c in "的X"}
    assert all((t in stored) == (t in freq) for t in texts)         # and nothing jieba's dictionary lacks


UNPACKED = """
import json, sys, jieba
from lambdarag.skills.store import tokenize
tokenize.cache_dictionary_in(sys.argv[1])
words = tokenize.Tokenizer()(sys.argv[2])
print(json.dumps([words, jieba.dt.initialized, sorted(p.name for p in tokenize._CACHE_DIR.iterdir())]))
"""


def test_a_new_cache_unpacks_the_shipped_dictionary_and_tokenizes_as_jieba_does(tmp_path):
    import json
    import subprocess
    import sys

    import jieba

    text = "海事管理机构负责船舶污染的监督管理"
    done = subprocess.run([sys.executable, "-c", UNPACKED, str(tmp_path), text], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    words, initialized, files = json.loads(done.stdout)
    assert files == [f"jieba-{jieba.__version__}.sqlite"] and not initialized   # unpacked; jieba's own never built
    loaded = Tokenizer()
    loaded._tokenized = 10 ** 9                                                # the whole dictionary, loaded
    assert words == loaded(text)


def test_processes_sharing_a_new_cache_leave_one_whole_dictionary(tmp_path):
    import json
    import os
    import sqlite3
    import subprocess
    import sys

    text = "船舶污染监督管理由谁负责"
    askers = [subprocess.Popen([sys.executable, "-c", UNPACKED, str(tmp_path), text], stdout=subprocess.PIPE,
                               text=True, cwd=ROOT) for _ in range(4)]
    words = [json.loads(a.communicate()[0])[0] for a in askers]
    assert all(a.returncode == 0 for a in askers) and all(w == words[0] for w in words)
    (name,) = os.listdir(tmp_path)                                  # no writer's scratch file left behind
    with sqlite3.connect(tmp_path / name) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (total,), = db.execute("SELECT total FROM meta")
    from lambdarag.skills.store.tokenize import prefix_dictionary
    assert total == prefix_dictionary()[1]


FOREIGN = """
import json, sys, jieba
from lambdarag.skills.graph import noun_keywords
from lambdarag.skills.store import tokenize
text, word = sys.argv[1], sys.argv[2]
if word:
    jieba.add_word(word, freq=10 ** 7)   # what milvus-lite's analyzer does with an index's user words
whole = tokenize.Tokenizer()
whole._tokenized = 10 ** 9
ours = [whole(text), [w for w, _, _ in tokenize.plain_words().spans(text)], noun_keywords(text, 5)]
print(json.dumps([ours, jieba.lcut(text)]))
"""


def test_words_another_library_adds_to_jiebas_global_dictionary_change_none_of_our_tokens(tmp_path):
    import json
    import os
    import subprocess
    import sys

    text, word = "海事管理机构负责船舶污染的监督管理", "机构负责船舶"
    env = {**os.environ, "LAMBDARAG_HOME": str(tmp_path)}
    runs = [json.loads(subprocess.run([sys.executable, "-c", FOREIGN, text, w], capture_output=True, text=True,
                                      cwd=ROOT, env=env, check=True).stdout) for w in ("", word)]
    (clean, global_clean), (added, global_added) = runs
    assert word not in global_clean and word in global_added    # jieba's own tokenizer took the word
    assert added == clean and word not in clean[0] and word not in clean[2]
