"""`citation_check` and `claim_check`: is every claim of the answer cited, and does each cited chunk support it?

Per citation the verdict is supported, unsupported (the chunk does not say
it) or missing (the claim has no citation, or cites a source not in the
context). Support is always tested deterministically: each sentence of the
claim must be covered (character bigrams) by the cited chunk, and a chunk that
reads like an instruction to the system (`store.instructions`) supports
nothing. An LLM judge may be stricter but never clears what that test rejects
(the judge reads the documents too, and may obey one), nor a citation that
points outside the context.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Optional, Sequence, TypedDict

from pydantic import Field

from lambdarag import Context, Lam, Reply, State, Verdict, tool
from lambdarag.stream import Attempt, Retract, live_text

from .context import MARKER, Citable, Cited, cited, claims, citable, marker, resolve, resolving
from .evidence import normalised, piece
from .phrasing import EN, ZH
from .profile import profile_of
from .prompts import ProfilePrompt
from .registry import skill
from .sentences import bigrams, covered, split_sentences
from .store.instructions import flagged
from .store.records import Citation, Hit

Status = Literal["supported", "unsupported", "missing"]
SUPPORT = 0.5
"""Share of a claim's bigrams that the cited chunk must contain; quotes score near 1, paraphrases 0.5–0.8."""
_SENTENCE_END = re.compile(r"(?<=[。！？!?])")


def detail(status: str, cite: str, claim: str) -> str:
    """Returns one verdict line: ``status | marker | claim``."""
    return f"{status} | {cite or '-'} | {claim[:60]}"


def exempt(claim: str) -> bool:
    """Returns whether a claim states nothing to check: a refusal, a lead-in, a 相同/不同 line comparing the
    cited lines above it (each checked on its own), or punctuation alone."""
    if not re.search(r"[^\W_]", claim):
        return True     # punctuation alone (the "）" after a quoted sentence's 。) states nothing
    return ZH["refusal"] in claim or EN["refusal"] in claim or claim.startswith(
        ("根据现有资料：", "以下方面", "缺少", "相同：", "不同：", EN["according"], "Not found in", "Same:", "Different:"))


NEGATION = re.compile(r"不|未|没有|禁止|免")
"""Words that turn a statement into its opposite: 船长不负责… shares nearly every bigram with 船长负责…"""


def adds_negation(part: str, hit: Hit) -> bool:
    """Returns whether `part` negates while the chunk sentence closest to it does not (船长不负责… cited to
    船长负责…); a paraphrase may swap 不得 for 禁止, so any negation word in that sentence will do."""
    if not NEGATION.search(part):
        return False
    best = max(split_sentences(hit.text) or [hit.text], key=lambda s: covered(part, s))
    return not NEGATION.search(best)


def supports(claim: str, hit: Hit, threshold: float = SUPPORT) -> bool:
    """Returns whether the cited chunk covers every sentence of the claim (bigram share of its text, or of
    title + text) without a negation its source lacks; a chunk holding instruction-like text supports nothing.

    Sentence by sentence, so an uncited sentence glued to a cited one (X。Y[来源: …]) needs support of its own.
    """
    if flagged(hit):
        return False
    parts = [p for p in _SENTENCE_END.split(claim) if bigrams(p)] or [claim]
    return all(max(covered(p, hit.text), covered(p, hit.title + hit.text)) >= threshold and not adds_negation(p, hit)
               for p in parts)


def attributed(answer: str, hits: Sequence[Hit], label: str, threshold: float = SUPPORT) -> str:
    """Returns the answer with a marker after each sentence the model left uncited that one passage of the context
    supports (`supports`; the passage covering it best): a model that forgets its markers, as small ones do, still
    gives an answer whose citations the check then judges like any other. A sentence no passage supports stays
    uncited, for the check to reject; a line of several sentences becomes a line each, so that one rejected sentence
    takes no supported one with it."""
    def cite(sentence: str) -> str:
        best = max(hits, key=lambda h: covered(sentence, h.text), default=None)
        if exempt(sentence) or best is None or not supports(sentence, best, threshold):
            return sentence
        return sentence.rstrip() + marker(best, label) + sentence[len(sentence.rstrip()):]

    lines = []
    for line in answer.split("\n"):
        if MARKER.search(line) or not line.strip():
            lines.append(line)
            continue
        sentences = split_sentences(line)
        if len(sentences) < 2 or not all(sentence in line for sentence in sentences):
            lines.append(cite(line))     # one sentence, or sentences the splitter rejoined: cited whole
        else:                            # a claim a line: the check then judges each sentence on its own
            lines += [cite(sentence) for sentence in sentences]
    return "\n".join(lines)


def quotes(claim: str, hit: Hit) -> bool:
    """Returns whether a claim (or what follows its label, 「title」：…) is a verbatim quote of the chunk, compared
    normalised (`evidence.normalised`: case, whitespace, punctuation and link targets aside); a chunk holding
    instruction-like text is quoted by nothing."""
    text = normalised(hit.text)
    parts = [claim] + [claim.split(sep, 1)[1] for sep in ("：", ": ") if sep in claim]
    return not flagged(hit) and any(len(normalised(p)) >= 4 and normalised(p) in text for p in parts)


def status_of(claim: str, m: re.Match[str], hits: Sequence[Hit], threshold: float = SUPPORT) -> Status:
    """Returns the deterministic status of one citation marker of a claim: supported when a chunk the marker
    names quotes it verbatim or covers it (`supports`)."""
    named = resolving(m.group(1), m.group(2) or "", hits)
    if not named:
        return "missing"
    if any(quotes(claim, h) or supports(claim, h, threshold) for h in named):
        return "supported"
    return "supported" if quotes(claim, section_of(named)) else "unsupported"


def section_of(named: Sequence[Hit]) -> Hit:
    """Returns the chunks a marker names as one, in piece order (`evidence.piece`): a unit read across the cut
    between two pieces of a section is a verbatim quote of the section, though of neither piece alone."""
    ordered = sorted(named, key=piece)
    return ordered[0].model_copy(update={"text": "\n".join(h.text for h in ordered),
                                         "instructions": tuple(i for h in ordered for i in h.instructions)})


def check_overlap(state: State, threshold: float = SUPPORT) -> Verdict:
    """Returns the offline verdict: each claim cited, each citation in the context, each cited chunk covering its claim."""
    return check_answer(state.answer, citable(state), threshold)


def check_answer(answer: str, hits: tuple[Hit, ...], threshold: float = SUPPORT,
                 judged: Optional[Mapping[str, tuple[Status, str]]] = None) -> Verdict:
    """Returns `check_overlap`'s verdict on an answer given what it may cite; a `judged` (status, reason) — an
    LLM judge's, by marker — can only turn a supported citation into an unsupported or missing one."""
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
            status, why = status_of(claim, m, hits, threshold), claim
            if status == "supported" and judged and m.group(0) in judged:
                status, why = judged[m.group(0)][0], judged[m.group(0)][1] or claim
            lines.append(detail(status, m.group(0), why))
            if status != "supported":
                rejected.append(claim)
    passed = all(line.startswith("supported") for line in lines)
    return Verdict(passed=passed, details=tuple(lines), rejected=tuple(dict.fromkeys(rejected)))


def supporting_hits(state: State, threshold: float = SUPPORT) -> tuple[Hit, ...]:
    """Returns the cited hits that support a claim of a passed answer by the deterministic test, each once (none
    when the verdict failed): the evidence an answer may teach from, never a citation the check did not clear."""
    if state.verdict is None or not state.verdict.passed:
        return ()
    hits, out = citable(state), {}
    for claim, markers in claims(state.answer):
        if exempt(claim):
            continue
        for m in markers:
            hit = resolve(m.group(1), m.group(2) or "", hits)
            if hit is not None and status_of(claim, m, hits, threshold) == "supported":
                out.setdefault(hit.chunk_id or f"{hit.source}#{hit.section}", hit)
    return tuple(out.values())


class CitationJudgement(Reply):
    """The model's judgement of one citation."""

    citation: str
    status: Status
    reason: str = ""


class CheckOutput(Reply):
    """What the check prompt asks the model to return."""

    items: list[CitationJudgement] = Field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Checking(Citable):
    """What an answer's citations are checked against: what it may cite."""

    answer: str


class Checked(TypedDict):
    """The write of `citation_check`."""

    verdict: Verdict


def _from_llm(out: CheckOutput, state: State) -> Checked:
    """Returns the deterministic verdict made stricter by the model's: a citation is supported only when both
    say so (a judge that obeys an injected document cannot clear it); uncited claims stay missing."""
    judged = {item.citation.strip(): (item.status, item.reason) for item in out.items}
    return {"verdict": check_answer(state.answer, citable(state), judged=judged)}


@tool
def citation_overlap(state: Checking, *, threshold: float = SUPPORT) -> Checked:
    """Writes the offline verdict: each claim cited, each cited chunk covering its claim by bigram overlap."""
    return {"verdict": check_overlap(state, threshold)}


citation_check = skill(Lam("citation_check", ProfilePrompt("citation_check"), output=CheckOutput,
                           reads=["answer", "context", "hits", "plan"], optional=["wiki_pages", "neighbours"], writes=Checked,
                           parse=_from_llm, fallback=citation_overlap, max_tokens=800))
"""The citation checker writing `verdict`; offline `citation_overlap` (config ``threshold``, default 0.5)."""


PIECE = re.compile(r"[^。！？!?\n]*?(?:[。！？!?]+|$)(?:\s*%s)*[\s。；;，,、]*" % MARKER.pattern)
"""One sentence of an answer line with the markers that follow it, whether written X[来源: …]。 or X。[来源: …]."""


def refuted(piece: str, hits: Sequence[Hit], doubted: frozenset[str], threshold: float = SUPPORT) -> bool:
    """Returns whether a piece of the answer makes a claim that a cited chunk does not support, or that the
    check's verdict rejected (`doubted`: uncited claims among them, and any claim a judge rejected)."""
    for claim, markers in claims(piece):
        if exempt(claim):
            continue
        if not markers and any(claim in d for d in doubted):
            return True
        if markers and (claim in doubted or any(status_of(claim, m, hits, threshold) != "supported" for m in markers)):
            return True
    return False


def pruned(state: State, threshold: float = SUPPORT) -> tuple[str, tuple[str, ...]]:
    """Returns the answer without its refuted pieces (`PIECE`, `refuted`), and those pieces.

    A line whose claims are all exempt (a refusal and what it lacks) is kept whole; a stored answer whose
    verdict passed keeps its uncited sentences; an answer no check has judged is judged deterministically.
    """
    hits = citable(state)
    verdict = state.verdict or check_answer(state.answer, hits, threshold)    # unchecked: the deterministic one
    doubted = frozenset(verdict.rejected) if not verdict.passed else frozenset()
    lines, removed = [], []
    for line in state.answer.splitlines():
        if all(exempt(claim) for claim, _ in claims(line)):
            lines.append(line)
            continue
        kept = ""
        for m in PIECE.finditer(line):
            if m.group(0) and refuted(m.group(0), hits, doubted, threshold):
                removed.append(m.group(0).strip())
            else:
                kept += m.group(0)
        if kept.strip(" -*•") or not line.strip(" -*•"):
            lines.append(kept)
    return "\n".join(lines).strip(), tuple(removed)


def restream(state: State, ctx: Any, answer: str, reason: str) -> None:
    """On a streaming main path, withdraws the streamed answer `claim_check` changed and streams `answer`, so the
    tokens left standing spell the answer the run returns."""
    sink = live_text()
    if sink is None or not sink.attempts or sink.streamed.get(sink.last_attempt(), "") == answer:
        return
    number = sink.last_attempt()
    if sink.streamed.get(number):
        sink.emit(Retract(number, sink.streamed[number], reason))
    checked = State(**{f: getattr(state, f) for f in ("hits", "plan", "wiki_pages", "context")}, answer=answer)
    Attempt(sink, "answer", checked, ctx, ("claim_check",)).replay(answer)


def check_claims(state: State, ctx: Any, threshold: float = SUPPORT) -> dict[str, Any]:
    """Returns the answer with refuted sentences removed (a refusal when none is left), its citations and
    verdict; the removed sentences are recorded as this span's fallback, and a streamed answer is retracted."""
    answer, removed = pruned(state, threshold)
    hits = citable(state)
    if not removed:     # the check's verdict stands when nothing was removed (a stored FAQ answer's too)
        return {"answer": state.answer, "citations": state.citations,
                "verdict": state.verdict or check_answer(state.answer, hits, threshold)}
    citations, _ = cited(answer, hits)
    if not citations:
        p = profile_of(ctx).wording.phrasing(state.original_query)
        answer, citations = f"{p['refusal']}{p['end']}{p['unsupported']}", ()
    reason = (f"removed {len(removed)} sentence(s) their citations do not support: "
              + " | ".join(r[:60] for r in removed))
    ctx.trace.mark_current(reason)
    restream(state, ctx, answer, reason)
    return {"answer": answer, "citations": citations, "verdict": check_answer(answer, hits, threshold)}


@dataclass(frozen=True)
class Claiming(Cited):
    """What the claims of an answer are checked against: what it cites and may cite, and the check's verdict; the
    question words a refusal in its language."""

    verdict: Optional[Verdict] = None
    context: str = ""
    original_query: str = ""


class ClaimsChecked(TypedDict):
    """The write of `claim_check`: the answer without its refuted sentences, its citations and verdict."""

    answer: str
    citations: tuple[Citation, ...]
    verdict: Verdict


@skill
@tool
def claim_check(state: Claiming, ctx: Context, *, threshold: float = SUPPORT) -> ClaimsChecked:
    """Removes every answer sentence its citations do not support or the verdict rejected (listed in the
    fallbacks)."""
    return check_claims(state, ctx, threshold)  # type: ignore[return-value]
