"""Toy terms over two passages, for trying the calculus without an index: the README's six-line pattern (two
retrievers in parallel, fused, answered by an LLM with an offline fallback). Run it: python -m lambdarag.skills.toy"""
from typing import TypedDict

from lambdarag import Context, Lam, Par, appended, tool
from lambdarag.skills.store.records import Hit, RankedList

DOCS = {"咖啡机/日常维护.md#除垢": "咖啡机每使用三个月应当除垢一次，水质较硬的地区每月一次。",
        "咖啡机/故障处理.md#不出水": "咖啡机不出水时先检查水箱是否有水，再检查进水阀是否打开。"}


class Ranked(TypedDict):
    candidates: tuple[RankedList, ...]


class Fused(TypedDict):
    hits: tuple[Hit, ...]


class Answered(TypedDict):
    answer: str


def retriever(name, score):
    """Returns a toy retriever tool ranking DOCS by a scoring function (stands in for BM25 / faiss)."""
    def search(query: str, candidates: tuple[RankedList, ...] = ()) -> Ranked:
        ranked = sorted(DOCS.items(), key=lambda kv: -score(query, kv[1]))
        hits = tuple(Hit(chunk_id=k, text=v, source=k) for k, v in ranked)
        return {"candidates": candidates + (RankedList(retriever=name, query=query, hits=hits),)}
    return tool(search, name=name, effect="io")


bm25 = retriever("bm25_search", lambda q, d: sum(c in d for c in q))
dense = retriever("embedding_search", lambda q, d: len(set(q) & set(d)) / len(set(d)))


@tool
def rrf_merge(candidates: tuple[RankedList, ...]) -> Fused:
    return {"hits": tuple({h.chunk_id: h for c in candidates for h in c.hits}.values())}


def extract_first(original_query, hits):
    """The offline answer: the best hit, cited (the Lam's fallback, with its contract)."""
    return {"answer": f"{hits[0].text}[来源: {hits[0].source}]"}


answer = Lam("answer_generate", "资料：\n{hits}\n问题：{original_query}\n只依据资料回答并注明来源。",
             reads=["original_query", "hits"], writes=Answered, fallback=extract_first)

# -- the six lines ------------------------------------------------------------
if __name__ == "__main__":
    pipeline = Par(bm25, dense, merge=appended("candidates")) >> rrf_merge >> answer
    print(pipeline)                       # λq. Par(bm25_search, embedding_search) >> rrf_merge >> answer_generate(q, _)
    print(pipeline.effect_signature())    # (io ∥ io) · pure · llm
    print(pipeline.cost_bound())          # 0.004: two LLM attempts at most, the rest is free
    ctx = Context()                       # no LLM configured: answer_generate falls back to extract_first
    print(pipeline.run("咖啡机多久除垢一次？", ctx).answer, ctx.trace.latency_breakdown(), ctx.trace.fallbacks(), sep="\n")
