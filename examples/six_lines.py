"""The README's six-line pattern: two retrievers in parallel, fused, answered by an LLM with an offline fallback."""
from typing import TypedDict

from lambdarag import Context, Lam, Par, appended, tool
from lambdarag.skills.store.records import Hit, RankedList

DOCS = {"海上交通安全法#第三十八条": "船长在保障海上人身与财产安全、防治船舶污染方面，有权独立作出决定。",
        "船员条例#第四条": "国务院交通运输主管部门主管全国船员管理工作。"}


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
             reads=["original_query", "hits"], writes={"answer": str}, fallback=extract_first)

# -- the six lines ------------------------------------------------------------
if __name__ == "__main__":
    pipeline = Par(bm25, dense, merge=appended("candidates")) >> rrf_merge >> answer
    print(pipeline)                       # λq. Par(bm25_search, embedding_search) >> rrf_merge >> answer_generate(q, _)
    print(pipeline.effect_signature())    # (io ∥ io) · pure · llm
    print(pipeline.cost_bound())          # 0.004: two LLM attempts at most, the rest is free
    ctx = Context()                       # no LLM configured: answer_generate falls back to extract_first
    print(pipeline.run("船长有什么权力？", ctx).answer, ctx.trace.latency_breakdown(), ctx.trace.fallbacks(), sep="\n")
