"""`faq_direct_answer`: a stored FAQ answer returned as is, without generation, when it answers the question.

Two paths answer. ``faq_exact``: the question equals a stored question once
both are normalised (width, case, spaces and punctuation). ``faq_similar``:
the plan allows similar matches (`plan.allow_similar_faq`) and the best
candidate's score reaches `plan.faq_direct_threshold`. Otherwise the path is
``route`` and the normal retrieval route answers. The decision and its reason
are written to `answer_path` and `answer_reason`.

A candidate's score is the lower of two reranker relevances: the user's
question against the stored question, and the stored question against the
user's. One direction alone would let a short question ("船员证书") match
every longer FAQ that contains it; a wrong direct answer is worse than none.
FAQ entries are chunks of kind "faq" (see `skills.store.corpus`): BM25 over them
finds the candidates, with the user's permissions applied inside the index.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any, Callable, Mapping, Required, Sequence, TypedDict

from lambdarag import Context, User, Verdict, tool
from .store.records import Citation, Hits, RetrievalPlan
from lambdarag.providers.reranker import OverlapReranker

from .store.corpus import Chunk, to_hits
from .store.derived import PerObject
from .store.instructions import instruction_phrases
from .registry import skill
from .rerank import provider_scores

Scorer = Callable[[str, Sequence[str]], list[float]]
"""``score(query, documents)``: one relevance per document, higher is better."""

FAQ_KIND = "faq"
LOCAL = OverlapReranker()
_NOISE = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Returns `text` as questions are compared: NFKC width folding, lower case, no spaces or punctuation."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", text).lower())


def question_of(chunk: Chunk) -> str:
    """Returns the stored question of a FAQ chunk (its first line when the meta lacks one)."""
    return str(chunk.meta.get("question") or chunk.text.split("\n", 1)[0]).strip()


def answer_of(chunk: Chunk) -> str:
    """Returns the stored answer of a FAQ chunk (the text after its first line when the meta lacks one)."""
    return str(chunk.meta.get("answer") or chunk.text.split("\n", 1)[-1]).strip()


def questions_of(index: Any) -> Mapping[str, tuple[Chunk, ...]]:
    """Returns normalised question → the FAQ chunks of `index` asking it (one that gives orders to the system,
    `store.instructions`, is never a stored answer)."""
    table: dict[str, tuple[Chunk, ...]] = {}
    for chunk in index.chunks():
        if chunk.kind == FAQ_KIND and not instruction_phrases(chunk.text):   # read now, not the index's stored flags
            q = normalise(question_of(chunk))
            table[q] = table.get(q, ()) + (chunk,)
    return table


faq_table: PerObject[Mapping[str, tuple[Chunk, ...]]] = PerObject(questions_of)
"""Returns questions_of(index), built once per index object and version."""


def has_faq(index: Any) -> bool:
    """Returns whether the index holds any FAQ entry."""
    return bool(faq_table(index))


def scored(query: str, chunks: Sequence[Chunk], score: Scorer, shortlist: int) -> list[tuple[Chunk, float]]:
    """Returns the `shortlist` best candidates by forward relevance, scored as min(forward, backward), best first.

    `score(query, documents)` is a reranker's relevance (see `skills.rerank.provider_scores`).
    """
    if not chunks:
        return []
    forward = score(query, [question_of(c) for c in chunks])
    best = sorted(range(len(chunks)), key=lambda i: -forward[i])[:shortlist]
    out = [(chunks[i], min(float(forward[i]), float(score(question_of(chunks[i]), [query])[0])))
           for i in best]
    return sorted(out, key=lambda pair: -pair[1])


class FaqOutcome(TypedDict, total=False):
    """What the FAQ step writes: always whether it answered, how and why; on a hit, the answer and its evidence."""

    faq_hit: Required[bool]
    answer_path: Required[str]
    answer_reason: Required[str]
    answer: str
    citations: tuple[Citation, ...]
    hits: Hits
    verdict: Verdict


def answered(chunk: Chunk, score: float, path: str, reason: str) -> FaqOutcome:
    """Returns the writes of a direct answer: the stored answer, its FAQ hit and citation, path and reason.

    The verdict is written here because nothing was generated: the answer is
    its own source, so a later citation check has no claim to test.
    """
    citation = Citation(source=chunk.source, section=chunk.section, chunk_id=chunk.id, quote=question_of(chunk)[:120])
    return {"faq_hit": True, "answer_path": path, "answer_reason": reason, "answer": answer_of(chunk),
            "citations": (citation,), "hits": to_hits([(chunk, score)], FAQ_KIND),
            "verdict": Verdict(passed=True, details=(f"stored FAQ answer {chunk.id}: nothing generated to check",))}


def not_answered(reason: str) -> FaqOutcome:
    return {"faq_hit": False, "answer_path": "route", "answer_reason": reason}


def decide(query: str, user: User, plan: RetrievalPlan, index: Any, score: Scorer, shortlist: int) -> FaqOutcome:
    """Returns the writes of the FAQ step for the question: a direct answer, or the reason the route must answer."""
    table = faq_table(index)
    if not table:
        return not_answered("no FAQ entries in the index")
    exact = next((c for c in table.get(normalise(query), ()) if user.may_read(c.department, c.security_level)), None)
    if exact is not None:
        return answered(exact, 1.0, "faq_exact", f"exact match of FAQ question 「{question_of(exact)}」")
    found = [c for c, _ in index.bm25(query, plan.faq_top_k, user=user, filters={"kind": FAQ_KIND})]
    ranked = scored(query, found, score, shortlist)
    if not ranked:
        return not_answered("no FAQ entry shares a word with the question")
    chunk, score = ranked[0]
    gist = f"best FAQ 「{question_of(chunk)}」 scores {score:.2f}, threshold {plan.faq_direct_threshold:.2f}"
    if score < plan.faq_direct_threshold:
        return not_answered(f"{gist}: below the threshold")
    if not plan.allow_similar_faq:
        return not_answered(f"{gist}: the plan allows exact FAQ matches only ({plan.reason})")
    return answered(chunk, score, "faq_similar", f"{gist}: reached ({plan.reason})")


def faq_local_rerank(original_query, query, user, plan, ctx, *, shortlist=3):
    """The FAQ step scored by the local overlap reranker (a rerank endpoint failed twice); its contract is
    `faq_direct_answer`'s."""
    return decide(original_query or query, user, plan, ctx.resource("index"), LOCAL.scores, shortlist)


@skill
@tool(effect="io", fallback=faq_local_rerank)
def faq_direct_answer(original_query: str, query: str, user: User, plan: RetrievalPlan, ctx: Context, *,
                      shortlist: int = 3) -> FaqOutcome:
    """Writes `faq_hit` and, on a hit, the stored answer (see the module docstring).

    ``shortlist`` is how many candidates get the backward relevance check (one
    reranker call each). Uses `ctx.reranker`, else (and when a rerank endpoint
    fails twice) the local overlap reranker.
    """
    return decide(original_query or query, user, plan, ctx.resource("index"), provider_scores(ctx, LOCAL), shortlist)
