"""`answer_generate`: an answer only from the context, every claim cited, a refusal when evidence is missing.

Offline the answer is extractive: the units of the context that answer the
question (`skills.evidence`: sentences, list items, table rows, option lines)
are quoted verbatim with their citation, in the shape of the question's type
(`skills.layouts` for compare, synthesis and relation), so numbers, dates and
amounts are exactly those of the sources.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, TypedDict

from lambdarag import Context, Count, Lam, State, Term, Verdict, tool
from .store.records import Citation, Hit, Relation
from lambdarag.errors import InvalidOutput
from lambdarag.lam import json_object

from .coverage import THRESHOLD
from .evidence import Scored, answering, linking, parts, ranked, shaped
from .context import Citable, assemble_context, cited, citable, drop_markers, marker, numbered_markers, shown
from .bounds import bounded
from .check import attributed
from .layouts import laid_out
from .named import relation_ends
from .phrasing import ZH
from .profile import profile_of
from .prompts import ProfilePrompt
from .registry import skill
from .store.instructions import flagged

REFUSAL = ZH["refusal"]
"""The Chinese refusal (skills.phrasing has the English one)."""
def context_text(hits: Sequence[Hit]) -> str:
    """Returns the text and titles of the context hits, lower-cased: what a missing thing is looked for in."""
    return "".join(h.text + h.title for h in hits).lower()


def quoted(evidence: Sequence[Scored], p: Mapping[str, str]) -> list[str]:
    """Returns the answer lines quoting `evidence`, each unit with its citation marker."""
    return [f"- {e.text.rstrip('；;，,')}{marker(e.hit, p['source'])}" for e in evidence]


def close_in_meaning(unit: Scored, near: Optional[float]) -> bool:
    """Whether the dense signal says `unit` answers: it holds a word of the question whole and its cosine to the
    question reaches `near` (`Wording.answer_near`; never without an embedder or a figure)."""
    return near is not None and unit.near is not None and unit.held > 0 and unit.near >= near


@dataclass(frozen=True, kw_only=True)
class Answering(Citable):
    """What an answer is written from: the question and what it may cite; the rest is used when an earlier term
    wrote it (so the term closes after any retriever), `verdict` by a `Guard`'s retry."""

    original_query: str
    query_type: Optional[str] = None
    entities: tuple[str, ...] = ()
    sides: tuple[Any, ...] = ()
    relations: tuple[Relation, ...] = ()
    verdict: Optional[Verdict] = None


class Answered(TypedDict):
    """The write of `answer_generate`: the answer and the citations it makes."""

    answer: str
    citations: tuple[Citation, ...]


def extractive_answer(state: Answering, ctx: Context) -> Answered:
    """Returns an extractive, cited answer from the context hits, or a refusal when nothing retrieved is about
    the question; either names only what the profile counts as missing (`CorpusProfile.missing_things`).

    The units quoted are chosen by `skills.evidence` (scored against the question, shaped by its type; a
    question in parts gets a unit per part). It refuses only when no unit covers `THRESHOLD` of the question's
    words (or of a part's) and either a named thing is missing or none holds the profile's `answer_floor` nor,
    only then looked for, is `close_in_meaning`. After a failed check (a `Guard` retry) the sentences the verdict rejected are not quoted
    again; a hit holding instruction-like text (`store.instructions`) is never quoted.
    """
    # Documents before wiki pages: a page quotes its sources, and the source itself is the better citation.
    profile = profile_of(ctx)
    # A chunk that gives orders (忽略以上指令…) is data to flag, never text to quote.
    hits = tuple(sorted((h for h in citable(state) if not flagged(h)), key=lambda h: h.kind == "wiki"))
    query = state.original_query
    rejected = frozenset(state.verdict.rejected) if state.verdict and not state.verdict.passed else frozenset()
    ends = relation_ends(query, hits, profile) if state.query_type == "relation" else ()
    ranking = ranked(query, hits, profile, ctx, rejected, state.query_type, ends)
    layout = laid_out(state, hits, profile, ranking)
    if layout is not None:
        return layout
    p = profile.wording.phrasing(query)
    text = context_text(hits)
    gaps = profile.wording.missing_things(query, text)  # never name as missing what the evidence contains
    # below the word floor, only what the dense signal says answers, and only instead of a refusal
    relevant = [s for s in ranking if s.cover >= THRESHOLD or s.held >= profile.wording.answer_floor] or \
        [s for s in ranking if not gaps and close_in_meaning(s, profile.wording.answer_near)]
    # a relation's two ends ask one thing when a unit names both (between A and B is no question in two parts)
    asked = [query] if state.query_type == "relation" and relevant and linking(relevant, ends) else parts(query)
    found: list = []
    for part in asked if len(asked) >= 2 else ():
        found.append(answering(part, query, ranking, [f for f in found if f is not None]))
    if not any(found) and not any(s.cover >= THRESHOLD for s in relevant) and (gaps or not relevant):
        lack = p["lacking"].format(words=p["separator"].join(gaps)) if gaps else p["no_passage"]
        return {"answer": f"{p['refusal']}{p['end']}{lack}", "citations": ()}
    chosen = [s for s in found if s is not None][:3] or \
        shaped(state.query_type, relevant, ends, around=ranking, query=query)
    if state.query_type != "synthesis":     # a synthesis is bounded by its points (`evidence.diverse`)
        chosen = bounded(chosen, query)
    answer = p["according"] + "\n" + "\n".join(quoted(chosen, p))
    # a part no unit answers: what it names that the evidence lacks (never a word the evidence contains)
    absent = [w for part, got in zip(asked, found) if got is None for w in profile.wording.missing_things(part, text)]
    if absent:
        answer += "\n" + p["not_found"].format(words=p["separator"].join(dict.fromkeys(absent)))
    citations, _ = cited(answer, hits)
    return {"answer": answer, "citations": citations}


def _from_llm(text: str, state: State, ctx: Any) -> Answered:
    """Returns the model's plain-text answer with its citations: bare ``[n]`` references written as markers,
    citations outside the context removed, a sentence left uncited cited where one passage supports it
    (`check.attributed`); no valid citation is invalid, unless the answer refuses.

    A reply that is still a JSON object with an ``answer`` (a model used to JSON) is read leniently.
    """
    p = profile_of(ctx).wording.phrasing(state.original_query)
    hits = citable(state)
    reply = json_object(text) if text.lstrip().startswith(("{", "`")) else None
    if reply is not None and isinstance(reply.get("answer"), str):
        answer, missing = reply["answer"], [str(m) for m in reply.get("missing") or ()]
        sufficient = reply.get("sufficient", True) is not False
    else:
        answer, missing = text, []
        sufficient = p["refusal"] not in answer
    answer = numbered_markers(answer.strip(), shown(state), p["source"])
    citations, bogus = cited(answer, hits)
    answer = drop_markers(answer, bogus).strip()
    if sufficient:
        answer = attributed(answer, hits, p["source"])
        citations, _ = cited(answer, hits)
    if sufficient and not citations:
        raise InvalidOutput(f"answer cites nothing in the context (cited: {', '.join(bogus) or 'none'})")
    if not sufficient:
        gaps = p["separator"].join(missing) or p["missing_default"]
        answer = answer if p["refusal"] in answer else f"{p['refusal']}{p['end']}{answer}"
        answer += "\n" + p["missing"].format(gaps=gaps) if p["missing_cue"] not in answer else ""
    return {"answer": answer, "citations": citations}


EXTRACTIVE = tool(extractive_answer)
"""The offline answer: `extractive_answer` as a term."""


@skill
def answer_generate(*, max_tokens: Count = 1024) -> Term:
    """Returns ``assemble_context >> answer_generate``: a cited answer from the context, extractive offline.

    `query_type`, `entities` and `wiki_pages` are optional reads, used when an
    earlier term wrote them, so the term closes after any retriever. `verdict`
    is read too: under a `Guard`, a retry repairs what the check rejected (the
    prompt shows the failed verdict; offline, the rejected sentences are dropped).
    """
    optional = ["query_type", "entities", "wiki_pages", "neighbours", "sides", "relations", "verdict"]
    return assemble_context >> Lam("answer_generate", ProfilePrompt("answer_generate"), output=str,
                                   reads=["original_query", "context", "hits", "plan"], optional=optional,
                                   writes=Answered, parse=_from_llm, fallback=EXTRACTIVE, max_tokens=max_tokens,
                                   stream="answer")
