"""Streaming latency: time to first evidence (`hits`) and to first `token` per route, offline and against the
scripted local LLM server streaming at a fixed token rate (median of a few runs after a warm-up)."""
from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")  # a cached answer would skip the route being measured

from bench.machine import write  # noqa: E402
from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config  # noqa: E402
from lambdarag.orchestration.search_unified import search_stream  # noqa: E402
from tests.scripted_server import Reply, Running  # noqa: E402

QUERIES = {  # one question per route (the demo page test's), labelled by the type the classifier gives it
    "fact": "船长在保障海上生命安全和防治船舶污染方面有什么权力？",
    "compare": "海上交通安全法与水污染防治法在船舶管理方面有何异同？",
    "relation": "船员条例由哪个部门主管？",
    "synthesis": "梳理船员管理法规体系",
    "temporal": "海洋环境保护法最新版本是哪一年修订的？",
    "direct_reply": "你好",
}
RUNS = 3
TOKENS_PER_SECOND = 40.0
"""The scripted server's rate: the low end of what a 135M local model writes on this class of machine (issue 20)."""
MARKER = re.compile(r"\[来源[:：][^\]]+\]")


def llm_reply(body: dict) -> Reply:
    """Returns the scripted reply: a one-claim answer citing the first context marker, every citation supported."""
    prompt = body["messages"][-1]["content"]
    if "请逐条核查" in prompt:
        cites = MARKER.findall(prompt.split("【回答】")[-1])
        return Reply(text=json.dumps({"items": [{"citation": c, "status": "supported"} for c in cites]},
                                     ensure_ascii=False))
    if "知识库助手" in prompt:
        cite = (MARKER.findall(prompt) or ["[来源: 无]"])[0]
        answer = f"根据参考资料，相关规定如下{cite}。该条款明确了主管部门与职责分工{cite}。"
        return Reply(text=json.dumps({"answer": answer, "sufficient": True}, ensure_ascii=False),
                     rate=TOKENS_PER_SECOND, piece=1)
    return Reply(status=500, text="not scripted for this bench")


def timed(query: str, config) -> tuple[dict, str]:
    """Returns seconds from the call to the first hits, the first token and the result of one streamed search,
    and the strategy that answered."""
    t0 = time.perf_counter()
    marks: dict[str, float] = {}
    strategy = ""
    for event in search_stream(query, config=config):
        marks.setdefault(event.kind, time.perf_counter() - t0)
        strategy = event.result.strategy if event.kind == "result" else strategy
    return {k: marks.get(k) for k in ("hits", "token", "result")}, strategy


def measure(config) -> dict:
    out = {}
    for label, query in QUERIES.items():
        timed(query, config)  # warm-up: indexes, models, first-use caches
        runs = [timed(query, config) for _ in range(RUNS)]
        out[label] = {"strategy": runs[-1][1], **{f"{k}_ms": round(statistics.median(r[k] for r, _ in runs) * 1000, 1)
                                                 for k in ("hits", "token", "result")}}
    return out


def main() -> dict:
    base = DEFAULT_CONFIG.read_text(encoding="utf-8")
    offline = measure(parse_config(base))
    server = Running()
    server.script.route = llm_reply
    try:
        llm = parse_config(re.sub(r"^llm:.*$", f"llm:\n  baseUrl: {server.url}\n  model: scripted\n  timeout: 60",
                                  base, count=1, flags=re.M))
        scripted = measure(llm)
    finally:
        server.stop()
    result = {"runs": RUNS, "statistic": "median seconds→ms from the call to the first event of each kind",
              "scripted_tokens_per_second": TOKENS_PER_SECOND, "queries": QUERIES,
              "offline": offline, "scripted_llm": scripted}
    write("stream", result)
    return result


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False, indent=1))
