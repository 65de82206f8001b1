"""The README's six-line pattern: two retrievers in parallel, fused, answered by an LLM with an offline fallback."""
from lambdarag import Context, Lam, Par, Tool, appended
from skills.store.records import Hit, RankedList

DOCS = {"海上交通安全法#第三十八条": "船长在保障海上人身与财产安全、防治船舶污染方面，有权独立作出决定。",
        "船员条例#第四条": "国务院交通运输主管部门主管全国船员管理工作。"}


def retriever(name, score):
    """Returns a toy retriever tool ranking DOCS by a scoring function (stands in for BM25 / faiss)."""
    def search(s):
        ranked = sorted(DOCS.items(), key=lambda kv: -score(s.query, kv[1]))
        hits = tuple(Hit(chunk_id=k, text=v, source=k) for k, v in ranked)
        return {"candidates": s.candidates + (RankedList(retriever=name, query=s.query, hits=hits),)}
    return Tool(name, search, reads=["query"], optional=["candidates"], writes=["candidates"], effect="io")


bm25 = retriever("bm25_search", lambda q, d: sum(c in d for c in q))
dense = retriever("embedding_search", lambda q, d: len(set(q) & set(d)) / len(set(d)))
rrf = Tool("rrf_merge", lambda s: {"hits": tuple({h.chunk_id: h for c in s.candidates for h in c.hits}.values())},
           reads=["candidates"], writes=["hits"])
extractive = Tool("extract_first", lambda s: {"answer": f"{s.hits[0].text}[来源: {s.hits[0].source}]"},
                  reads=["hits"], writes=["answer"])
answer = Lam("answer_generate", "资料：\n{hits}\n问题：{original_query}\n只依据资料回答并注明来源。",
             reads=["original_query", "hits"], writes=["answer"], fallback=extractive)

# -- the six lines ------------------------------------------------------------
if __name__ == "__main__":
    pipeline = Par(bm25, dense, merge=appended("candidates")) >> rrf >> answer
    print(pipeline)                       # λq. Par(bm25_search, embedding_search) >> rrf_merge >> answer_generate(q, _)
    print(pipeline.effect_signature())    # (io ∥ io) · pure · llm
    print(pipeline.cost_bound())          # 0.004: two LLM attempts at most, the rest is free
    ctx = Context()                       # no LLM configured: answer_generate falls back to extract_first
    print(pipeline.run("船长有什么权力？", ctx).answer, ctx.trace.latency_breakdown(), ctx.trace.fallbacks(), sep="\n")
