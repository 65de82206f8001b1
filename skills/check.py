"""`citation_check`: is every claim of the answer cited, and does each cited chunk support its claim?

Per citation the verdict is supported, unsupported (the chunk does not say
it) or missing (the claim has no citation, or cites a source not in the
context). Offline, support is character-bigram overlap between the claim and
the cited chunk; an LLM judge may be stricter but can never clear a citation
that points outside the context.
"""
from __future__ import annotations

import re
from typing import Any, Literal, Mapping

from pydantic import Field

from lambdarag import Lam, Reply, State, Term, Tool, Verdict

from .context import MARKER, cited, claims, citable, resolve
from .generate import REFUSAL
from .phrasing import EN
from .registry import skill
from .sentences import covered

Status = Literal["supported", "unsupported", "missing"]
SUPPORT = 0.5
"""Share of a claim's bigrams that the cited chunk must contain; quotes score near 1, paraphrases 0.5–0.8."""


def detail(status: str, cite: str, claim: str) -> str:
    """Returns one verdict line: ``status | marker | claim``."""
    return f"{status} | {cite or '无引用'} | {claim[:60]}"


def exempt(claim: str) -> bool:
    """Returns whether a claim states nothing to check: a refusal, a lead-in, or a 相同/不同 line comparing the
    cited lines above it (each checked on its own)."""
    return REFUSAL in claim or EN["refusal"] in claim or claim.startswith(
        ("根据现有资料：", "以下方面", "缺少", "相同：", "不同：", EN["according"], "Not found in", "Same:", "Different:"))


def supports(claim: str, hit: Hit, threshold: float = SUPPORT) -> bool:
    """Returns whether the cited chunk covers the claim (bigram share of its text, or of title + text)."""
    return max(covered(claim, hit.text), covered(claim, hit.title + hit.text)) >= threshold


def check_overlap(state: State, threshold: float = SUPPORT) -> Verdict:
    """Returns the offline verdict: each claim cited, each citation in the context, each cited chunk covering its claim."""
    return check_answer(state.answer, citable(state), threshold)


def check_answer(answer: str, hits: tuple[Hit, ...], threshold: float = SUPPORT) -> Verdict:
    """Returns `check_overlap`'s verdict on an answer given what it may cite."""
    if not answer.strip():
        return Verdict(passed=False, details=("empty: the answer is empty; there is nothing to check",))
    lines, rejected = [], []
    for claim, markers in claims(answer):
        if exempt(claim):
            continue
        if not markers:
            lines.append(detail("missing", "", claim))
            rejected.append(claim)
        for m in markers:
            hit = resolve(m.group(1), m.group(2) or "", hits)
            if hit is None:
                status = "missing"
            else:
                status = "supported" if supports(claim, hit, threshold) else "unsupported"
            lines.append(detail(status, m.group(0), claim))
            if status != "supported":
                rejected.append(claim)
    passed = all(line.startswith("supported") for line in lines)
    return Verdict(passed=passed, details=tuple(lines), rejected=tuple(dict.fromkeys(rejected)))


class CitationJudgement(Reply):
    """The model's judgement of one citation."""

    citation: str
    status: Status
    reason: str = ""


class CheckOutput(Reply):
    """What the check prompt asks the model to return."""

    items: list[CitationJudgement] = Field(default_factory=list)


def _from_llm(out: CheckOutput, state: State) -> dict[str, Any]:
    """Returns the model's verdict, with citations outside the context forced to missing."""
    hits = citable(state)
    offline = check_overlap(state)
    lines = [line for line in offline.details if line.startswith("missing")]
    claim_of = {m.group(0): claim for claim, ms in claims(state.answer) for m in ms}
    rejected = [claim for claim, ms in claims(state.answer) if not ms]  # uncited claims stay missing
    for item in out.items:
        marker_hit = next((resolve(m.group(1), m.group(2) or "", hits)
                           for _, ms in claims(item.citation) for m in ms), None)
        status = item.status if marker_hit is not None else "missing"
        lines.append(detail(status, item.citation, item.reason))
        if status != "supported" and item.citation in claim_of:
            rejected.append(claim_of[item.citation])
    passed = bool(lines) and all(line.startswith("supported") for line in lines)
    return {"verdict": Verdict(passed=passed, details=tuple(dict.fromkeys(lines)),
                               rejected=tuple(dict.fromkeys(rejected)))}


PROMPT = """请逐条核查下面回答中的引用。对回答里每一个 [来源: …] 标注，判断它所在的句子是否能由该来源在【参考资料】中的原文直接支持：
- supported：原文明确支持该句内容（数字、日期、主体都一致）
- unsupported：引用的来源存在，但原文不支持该句，或数字、主体不一致
- missing：引用的来源不在参考资料中
citation 字段原样填写该 [来源: …] 标注，reason 简要说明理由。

【参考资料】
{context}

【回答】
{answer}"""


@skill("citation_check")
def citation_check(config: Mapping[str, Any]) -> Term:
    """Returns the citation checker writing `verdict`; offline by bigram overlap (config ``threshold``, default 0.5)."""
    threshold = float(config.get("threshold", SUPPORT))
    offline = Tool("citation_overlap", lambda s: {"verdict": check_overlap(s, threshold)},
                   reads=["answer", "hits", "plan"], optional=["wiki_pages"], writes=["verdict"])
    return Lam("citation_check", PROMPT, output=CheckOutput, reads=["answer", "context", "hits", "plan"],
               optional=["wiki_pages"], writes=["verdict"], parse=_from_llm, fallback=offline, max_tokens=800)


SENTENCE = re.compile(r"[^。！？!?；;\n]*(?:[。！？!?；;]+|$)")


def pruned(state: State, threshold: float = SUPPORT) -> tuple[str, tuple[str, ...]]:
    """Returns the answer without the sentences none of whose citations supports them, and those sentences.

    A sentence here is what ends at 。！？； or a line end, with the markers inside
    it; one that cites nothing is left for the verdict to report.
    """
    hits = citable(state)
    lines, removed = [], []
    for line in state.answer.splitlines():
        kept = ""
        for sentence in SENTENCE.findall(line):
            markers = list(MARKER.finditer(sentence))
            claim = MARKER.sub("", sentence).strip().lstrip("-*• ").strip(" 。；;，,、")
            found = [resolve(m.group(1), m.group(2) or "", hits) for m in markers]
            if markers and claim and not exempt(claim) \
                    and not any(h is not None and supports(claim, h, threshold) for h in found):
                removed.append(sentence.strip())
                continue
            kept += sentence
        if kept.strip(" -*•") or not line.strip(" -*•"):
            lines.append(kept)
    return "\n".join(lines).strip(), tuple(removed)


def check_claims(state: State, ctx: Any, threshold: float = SUPPORT) -> dict[str, Any]:
    """Returns the answer with unsupported sentences removed (a refusal when none is left), its citations and
    verdict; each removed sentence is recorded as this span's fallback."""
    answer, removed = pruned(state, threshold)
    hits = citable(state)
    if not removed:     # a judge's verdict (the LLM's) stands when nothing was removed
        return {"answer": state.answer, "citations": state.citations,
                "verdict": state.verdict or check_answer(state.answer, hits, threshold)}
    citations, _ = cited(answer, hits)
    if not citations:
        answer, citations = f"{REFUSAL}。现有资料不支持生成的回答。", ()
    ctx.trace.mark_current(f"removed {len(removed)} sentence(s) their citations do not support: "
                           + " | ".join(r[:60] for r in removed))
    return {"answer": answer, "citations": citations, "verdict": check_answer(answer, hits, threshold)}


@skill("claim_check")
def claim_check(config: Mapping[str, Any]) -> Term:
    """Returns the term removing every answer sentence its citations do not support (listed in the fallbacks)."""
    threshold = float(config.get("threshold", SUPPORT))
    return Tool("claim_check", lambda s, ctx: check_claims(s, ctx, threshold),
                reads=["answer", "citations", "hits", "plan"], optional=["wiki_pages", "verdict"],
                writes=["answer", "citations", "verdict"])
