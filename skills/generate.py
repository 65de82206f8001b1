"""`answer_generate`: an answer only from the context, every claim cited, a refusal when evidence is missing.

Offline the answer is extractive: the question is split into sub-questions
(one per compared entity, or per conjunct), and for each the best-matching
sentences of the context are quoted verbatim with their citation, so numbers,
dates and amounts are exactly those of the sources.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from lambdarag import Lam, State, Term, Tool
from .store.records import Hit
from lambdarag.errors import InvalidOutput
from lambdarag.lam import json_object

from .context import assemble_context, cited, citable, context_hits, drop_markers, marker, numbered_markers
from .layouts import laid_out
from .phrasing import ZH
from .prompts import ProfilePrompt
from .profile import CorpusProfile, profile_named, profile_of
from .registry import skill
from .sentences import STOPWORDS, english_stem_in, keywords, split_sentences
from .store.instructions import flagged

REFUSAL = ZH["refusal"]
"""The Chinese refusal (skills.phrasing has the English one)."""
_QUESTIONS = re.compile(r"[？?；;。！!]")
_CONJUNCTS = re.compile(r"以及|和|与|及|、|跟|同|\b(?:and|or|versus|vs)\b", re.I)
_HEADING = re.compile(r"^#+\s")
THRESHOLD = 0.4
"""Share of a (sub-)question's weighted words a sentence must cover to answer it."""


@dataclass(frozen=True)
class SubQuestion:
    """One part of a question: a label, the words it is about (weighted), and an entity it is limited to."""

    label: str
    focus: tuple[tuple[str, float], ...]
    entity: Optional[str] = None


@dataclass(frozen=True)
class Evidence:
    """A context sentence that answers a sub-question, with its hit and score."""

    sentence: str
    hit: Hit
    score: float


def sub_questions(query: str, query_type: Optional[str], entities: Sequence[str],
                  profile: Optional[CorpusProfile] = None) -> list[SubQuestion]:
    """Returns the parts of `query` to answer separately.

    A comparison of two or more named things gets one part per thing, all on the
    same aspect; otherwise separate questions and conjuncts (和/与/及/、) each
    become a part that weighs its own words twice and the rest of the question once.
    """
    profile = profile or profile_named("generic")
    words = keywords(query)
    # Compared things are names (the profile's named things), not the generic keywords entity extraction also returns.
    named = [e for e in (entities or profile.query_entities(query)) if e in query and len(e) >= 3 and e not in STOPWORDS]
    if len(named) >= 2 and (query_type == "compare" or profile.asks_compare(query)):
        aspect = [w for w in words if not any(w in e or e in w for e in named)] or words
        return [SubQuestion(e, tuple([(w, 0.3) for w in keywords(e) if w not in aspect] + [(w, 2.0) for w in aspect]), e)
                for e in named]
    parts = []
    for question in filter(None, (q.strip(" ，,") for q in _QUESTIONS.split(query))):
        pieces = [p for p in _CONJUNCTS.split(question) if len(keywords(p)) >= 2]
        parts += pieces if len(pieces) >= 2 else [question]
    if len(parts) <= 1:
        return [SubQuestion(query, tuple((w, 1.0) for w in words))]
    out = []
    for part in parts:
        own = keywords(part)
        out.append(SubQuestion(part, tuple((w, 2.0 if w in own else 1.0) for w in dict.fromkeys([*own, *words]))))
    return out


_MARKUP = re.compile(r"\[(?:来源|[Ss]ource):[^\]]*\]|\[\[|\]\]|\*\*|^[\s>*-]+")
_LEAD_IN = re.compile(r"^[^：。]{1,40} ：")
"""Markup that must not be quoted: inner citation markers, [[links]], **bold** marks, bullets, "entity ：" lead-ins."""
_FILE_LINE = re.compile(r"\.md\b|^entities/")


def candidate_sentences(hits: Sequence[Hit], profile: Optional[CorpusProfile] = None) -> list[tuple[str, Hit, int]]:
    """Returns the quotable sentences of `hits` (labels, headings and wiki markup removed) with their hit and rank."""
    profile = profile or profile_named("generic")
    out = []
    for rank, hit in enumerate(hits):
        for sentence in split_sentences(hit.text):
            sentence = _LEAD_IN.sub("", _MARKUP.sub("", profile.without_label(sentence))).strip()
            if len(sentence) >= 6 and not _HEADING.search(sentence) and not profile.is_heading(sentence) \
                    and not _FILE_LINE.search(sentence):
                out.append((sentence, hit, rank))
    return out


def _weights(sub: SubQuestion, sentences: Sequence[tuple[str, Hit, int]]) -> dict[str, float]:
    n = len(sentences)
    out = {}
    for word, weight in sub.focus:
        df = sum(word in s.lower() for s, _, _ in sentences)
        out[word] = weight * (1.0 + math.log((n + 1) / (df + 1)))
    return out


def word_share(word: str, sentence: str) -> float:
    """Returns 1 when the sentence contains the word (letters in any case), else half the share of its
    characters it contains; an English word counts only whole, in any inflection (gives → given).

    Chinese paraphrase often keeps one character of a word (权力 → 有权), so a
    partial match counts a little instead of nothing.
    """
    sentence = sentence.lower()
    if word in sentence:
        return 1.0
    if word.isascii() and word.isalpha():
        return 1.0 if english_stem_in(word, sentence) else 0.0
    return 0.5 * sum(c in sentence for c in word) / len(word)


_ASKS_AMOUNT = re.compile(r"多少|几[年月日天个条次项倍]?|多长|多久|何时|什么时候|哪一年|哪年|期限|金额|数额|比例")
_AMOUNT = re.compile(r"\d|[一二三四五六七八九十百千万两]+(?:日|天|年|月|个月|元|万元|条|小时|倍|人|项|次|以上|以下)")


def best_evidence(sub: SubQuestion, sentences: Sequence[tuple[str, Hit, int]], *, limit: int = 3,
                  threshold: float = THRESHOLD, partial: bool = True) -> list[Evidence]:
    """Returns up to `limit` sentences covering most of the sub-question's weighted words, best first.

    Sentences of a hit that names the sub-question's entity are preferred; a
    question asking for an amount, a date or a period prefers sentences that
    state one; a sentence must cover at least `threshold` of the weight to
    count as evidence. With `partial` false a word counts only when the sentence holds it whole (in any
    inflection): the stricter test of whether a sentence is about the question at all.
    """
    weights = _weights(sub, sentences)
    total = sum(weights.values()) or 1.0
    amount = bool(_ASKS_AMOUNT.search(sub.label))
    scored = []
    for sentence, hit, rank in sentences:
        shares = ((w, word_share(word, sentence)) for word, w in weights.items())
        score = sum(w * share for w, share in shares if partial or share == 1.0) / total
        if amount and _AMOUNT.search(sentence):
            score += 0.2
        if sub.entity:
            score += 0.3 if sub.entity in hit.title or sub.entity in hit.source else -0.3
        scored.append(Evidence(sentence, hit, score + 0.01 / (rank + 1)))
    scored.sort(key=lambda e: -e.score)
    return [e for e in scored[:limit] if e.score >= threshold]


def context_text(hits: Sequence[Hit]) -> str:
    """Returns the text and titles of the context hits, lower-cased: what a missing thing is looked for in."""
    return "".join(h.text + h.title for h in hits).lower()


def quoted(evidence: Sequence[Evidence], p: Mapping[str, str]) -> list[str]:
    """Returns the answer lines quoting `evidence`, each sentence with its citation marker."""
    return [f"- {e.sentence.rstrip('；;，,')}{marker(e.hit, p['source'])}" for e in evidence]


def extractive_answer(state: State, ctx: Any) -> dict[str, Any]:
    """Returns an extractive, cited answer from the context hits, or a refusal when nothing retrieved is about
    the question; either names only what the profile counts as missing (`CorpusProfile.missing_things`).

    After a failed check (a `Guard` retry) the sentences the verdict rejected are not quoted again; a hit
    holding instruction-like text (`store.instructions`) is never quoted.
    """
    # Documents before wiki pages: a page quotes its sources, and the source itself is the better citation.
    profile = profile_of(ctx)
    # A chunk that gives orders (忽略以上指令…) is data to flag, never text to quote.
    hits = tuple(sorted((h for h in citable(state) if not flagged(h)), key=lambda h: h.kind == "wiki"))
    layout = laid_out(state, hits, profile)
    if layout is not None:
        return layout
    query = state.original_query
    p = profile.phrasing(query)
    rejected = frozenset(state.verdict.rejected) if state.verdict and not state.verdict.passed else frozenset()
    sentences = [c for c in candidate_sentences(hits, profile) if c[0].rstrip("；;，,") not in rejected]
    lines: list[str] = []
    unanswered: list[str] = []
    used: set[str] = set()
    subs = sub_questions(query, state.query_type, state.entities, profile)
    groups: list[tuple[str, list[str]]] = []
    for sub in subs:
        found = best_evidence(sub, sentences)
        if not found:
            unanswered.append(sub.label)
        fresh = [e for e in found if e.sentence not in used]
        used.update(e.sentence for e in fresh)
        if fresh:
            groups.append((sub.label, quoted(fresh, p)))
    text = context_text(hits)
    if not groups and profile.answer_floor < THRESHOLD and not profile.missing_things(query, text):
        # No sentence covers enough of any part, yet the context lacks nothing the question names: the
        # best-supported sentences answer it when they cover the profile's floor (below it nothing retrieved is
        # about the question).
        whole = SubQuestion(query, tuple((w, 1.0) for w in keywords(query)))
        best = best_evidence(whole, sentences, limit=2, threshold=profile.answer_floor, partial=False)
        if best:
            groups.append((query, quoted(best, p)))
    for label, group in groups:
        lines += ([p["about"].format(label=label)] if len(groups) > 1 else []) + group
    if not lines:
        gaps = profile.missing_things(query, text)  # never name as missing what the evidence contains
        lack = p["lacking"].format(words=p["separator"].join(gaps)) if gaps else p["no_passage"]
        return {"answer": f"{p['refusal']}{p['end']}{lack}", "citations": ()}
    answer = p["according"] + "\n" + "\n".join(lines)
    absent = [w for label in unanswered for w in profile.missing_things(label, text)]
    if absent:  # only what the evidence really lacks, never a word it contains
        answer += "\n" + p["not_found"].format(words=p["separator"].join(dict.fromkeys(absent)))
    citations, _ = cited(answer, hits)
    return {"answer": answer, "citations": citations}


def _from_llm(text: str, state: State, ctx: Any) -> dict[str, Any]:
    """Returns the model's plain-text answer with its citations: bare ``[n]`` references written as markers,
    citations outside the context removed; no valid citation is invalid, unless the answer refuses.

    A reply that is still a JSON object with an ``answer`` (a model used to JSON) is read leniently.
    """
    p = profile_of(ctx).phrasing(state.original_query)
    hits = citable(state)
    reply = json_object(text) if text.lstrip().startswith(("{", "`")) else None
    if reply is not None and isinstance(reply.get("answer"), str):
        answer, missing = reply["answer"], [str(m) for m in reply.get("missing") or ()]
        sufficient = reply.get("sufficient", True) is not False
    else:
        answer, missing = text, []
        sufficient = p["refusal"] not in answer
    answer = numbered_markers(answer.strip(), context_hits(state), p["source"])
    citations, bogus = cited(answer, hits)
    answer = drop_markers(answer, bogus).strip()
    if sufficient and not citations:
        raise InvalidOutput(f"answer cites nothing in the context (cited: {', '.join(bogus) or 'none'})")
    if not sufficient:
        gaps = p["separator"].join(missing) or p["missing_default"]
        answer = answer if p["refusal"] in answer else f"{p['refusal']}{p['end']}{answer}"
        answer += "\n" + p["missing"].format(gaps=gaps) if p["missing_cue"] not in answer else ""
    return {"answer": answer, "citations": citations}


@skill
def answer_generate(config: Mapping[str, Any]) -> Term:
    """Returns ``assemble_context >> answer_generate``: a cited answer from the context, extractive offline.

    `query_type`, `entities` and `wiki_pages` are optional reads, used when an
    earlier term wrote them, so the term closes after any retriever. `verdict`
    is read too: under a `Guard`, a retry repairs what the check rejected (the
    prompt shows the failed verdict; offline, the rejected sentences are dropped).
    """
    optional = ["query_type", "entities", "wiki_pages", "sides", "relations", "verdict"]
    offline = Tool("extractive_answer", extractive_answer,
                   reads=["original_query", "hits", "plan"], optional=optional,
                   writes=["answer", "citations"])
    lam = Lam("answer_generate", ProfilePrompt("answer_generate"), output=str,
              reads=["original_query", "context", "hits", "plan"], optional=optional,
              writes=["answer", "citations"], parse=_from_llm, fallback=offline,
              max_tokens=int(config.get("max_tokens", 1024)), stream="answer")
    return assemble_context(config) >> lam
