"""The query planner (`query_expand`): retrieval variants of one question, the original always kept.

Variants are typed: rewrite (a standalone, written-style query; follow-ups
completed from the conversation), multi_query (other wordings), hyde (a
hypothetical answer passage), step_back (a broader background query) and
expansion (the query plus knowledge-graph neighbours). Retrieval runs once per
variant; rerank and generation still use the original question.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence, TypedDict

from pydantic import Field

from lambdarag import Context, Lam, Message, Reads, Reply, State, User, tool
from .store.records import RetrievalPlan, Variant
from lambdarag.errors import InvalidOutput
from lambdarag.state import Record

from .profile import CorpusProfile, profile_of
from .registry import skill
from .prompts import ProfilePrompt
from .sentences import keywords

# Spoken forms → written forms; longer keys first so 怎么办 wins over 怎么.
COLLOQUIAL: tuple[tuple[str, str], ...] = (
    ("咋整", "如何处理"), ("咋办", "如何处理"), ("怎么办", "如何处理"), ("咋样", "怎样"), ("咋", "如何"),
    ("为啥", "为什么"), ("干啥", "做什么"), ("啥时候", "什么时候"), ("啥", "什么"), ("多会儿", "什么时候"),
    ("罚多少钱", "罚款金额"), ("被罚", "处罚"), ("谁管", "由谁主管"), ("得多久", "期限"), ("多久", "多长时间"),
    ("咋弄", "如何办理"), ("管不管", "是否管理"), ("能不能", "能否"), ("可不可以", "能否"), ("要不要", "是否需要"),
)
FILLERS = re.compile(
    r"^(?:请问一下|请问|麻烦问一下|我想问一下|我想问|我想知道|想了解一下|想了解|能不能告诉我|告诉我|帮我查一下|帮我查查|"
    r"帮我|那个|这个|嗯|呃|哦|啊)+|(?:啊|呀|哈|吧|嘛|呢|哦|来着)(?=[？?。!！]*$)")
_FOLLOW_UP = re.compile(r"^(?:那么?|还有|另外|再问一下|如果是|要是|换成)|(?:呢|怎么样|如何|又如何|又怎样)[？?]*$")
_ENDS = re.compile(r"^(?:那么?|还有|另外|再问一下|如果是|要是|换成)|(?:的情况|呢|怎么样|又如何|又怎样|如何)?[？?。!！\s]*$")
# A pronoun standing for the previous turn's subject; 其 only where it means "its" (not 其他, 及其, …); the
# nouns a demonstrative may stand with (这部…, 该…) are the corpus profile's.


@functools.lru_cache(maxsize=8)
def pronoun(nouns: str) -> re.Pattern[str]:
    """Returns the pronoun pattern with `nouns` (alternatives joined by |) after a demonstrative."""
    return re.compile(r"它们|它|(?<![及与尤极])其(?!他|中|余|实|次|它)|(?:这|那|该|此)(?:部|个|项|家)?(?:"
                      + nouns + r")|这个|那个")
_CONNECTIVE = re.compile(r"^(?:那么?|还有|另外|再问一下)")
# Questions about an organisation (its superior, duties, …): "it" is then the body the last answer named.
_BODY_QUESTION = re.compile(r"上级|下级|隶属|内设|职责|职能|领导|负责人|机构设置|派出机构")
FOLLOW_UP_MAX_CHARS = 20


class PlannedVariant(Reply):
    """One variant as the planning prompt asks the model to return it."""

    text: str = Field(min_length=2)
    kind: Literal["rewrite", "multi_query", "hyde", "step_back"]


class PlanOutput(Reply):
    """What the planning prompt asks the model to return."""

    variants: list[PlannedVariant]


class QueryPlan(Record):
    """How the variants were made: by the LLM, by rules, or the original only when planning failed."""

    source: Literal["llm", "rules", "original"]
    fallback: bool = False
    reason: str = ""


class Planned(TypedDict):
    """What the query planner writes: the variants, and how they were made (the `query_plan` field's declaration)."""

    variants: tuple[Variant, ...]
    query_plan: Optional[QueryPlan]


def clean(query: str) -> str:
    """Returns `query` without filler words, with spoken phrasing turned into written phrasing."""
    text = re.sub(r"\s+", " ", query).strip()
    text = re.sub(r"[…\.]{2,}|～|~", "", text)
    previous = None
    while previous != text:
        previous, text = text, FILLERS.sub("", text).strip(" ，,")
    for spoken, written in COLLOQUIAL:
        text = text.replace(spoken, written)
    return text or query.strip()


def _topic(text: str, profile: CorpusProfile) -> Optional[str]:
    laws = profile.names.query_entities(text)
    if laws:
        return laws[0]
    words = keywords(text)
    return words[0] if words else None


def antecedent(history: Sequence[Message], query: str, profile: CorpusProfile) -> Optional[str]:
    """Returns what a pronoun in `query` points to: the subject of the previous user turn.

    That is the first thing it names (the profile's named things), else its
    first keyword. A question about an organisation (上级, 职责, …) whose
    previous turn names no body points instead to the first body the
    assistant's reply names (a named thing that is not a document title).
    """
    last_user = next((i for i in range(len(history) - 1, -1, -1) if history[i].role == "user"
                      and history[i].content.strip() != query.strip()), None)
    if last_user is None:
        return None
    previous = _CONNECTIVE.sub("", clean(history[last_user].content))
    named = profile.names.query_entities(previous)
    if _BODY_QUESTION.search(query):
        replies = [m.content for m in history[last_user + 1:] if m.role == "assistant"]
        bodies = [e for e in named if not profile.names.is_title(e)] \
            or [e for text in replies for e in profile.names.query_entities(text) if not profile.names.is_title(e)]
        if bodies:
            return bodies[0]
    return named[0] if named else _topic(previous, profile)


def resolve_pronoun(query: str, history: Sequence[Message], profile: CorpusProfile) -> Optional[str]:
    """Returns a short follow-up such as 它的上级部门是谁？ with its pronoun replaced by the antecedent, or None.

    None when there is no pronoun, nothing but the pronoun (这个呢), or no antecedent.
    """
    cleaned = _CONNECTIVE.sub("", clean(query)).strip(" ，,")
    m = pronoun(profile.names.pronoun_nouns).search(cleaned)
    if m is None or len(cleaned) > FOLLOW_UP_MAX_CHARS or not _ENDS.sub("", cleaned.replace(m.group(0), "")):
        return None
    entity = antecedent(history, query, profile)
    if not entity or entity in cleaned:
        return None
    return cleaned[:m.start()] + entity + cleaned[m.end():]


def complete_follow_up(query: str, history: Sequence[Message], profile: CorpusProfile) -> Optional[str]:
    """Returns a follow-up rewritten as a standalone question, or None if it is not one (or cannot be completed).

    A pronoun (它的上级部门是谁？) is replaced by the previous turn's subject
    (see `antecedent`). A bare new topic (那船员呢？) takes the previous user
    question as the frame: a law or body replaces the law or body the frame
    names, any other topic replaces the frame's first keyword outside them.
    """
    resolved = resolve_pronoun(query, history, profile)
    if resolved:
        return resolved
    previous = next((m.content for m in reversed(history) if m.role == "user" and m.content.strip() != query.strip()), None)
    cleaned = clean(query)
    if previous is None or len(cleaned) > 16 or not _FOLLOW_UP.search(query.strip()) \
            or pronoun(profile.names.pronoun_nouns).search(cleaned):
        return None
    fragment = _ENDS.sub("", _ENDS.sub("", cleaned)).strip(" ，,")
    if not fragment:
        return None
    new_topic = _topic(fragment, profile) or fragment
    frame = clean(previous)
    topics, frame_topics = profile.names.query_entities(fragment), profile.names.query_entities(frame)
    if topics and not frame_topics:
        return f"{new_topic}中{frame}"
    old_topic = frame_topics[0] if topics else \
        next((w for w in keywords(frame) if not any(w in e or e in w for e in frame_topics)), None)
    if old_topic and old_topic in frame and old_topic not in fragment:
        return frame.replace(old_topic, fragment if new_topic in fragment else new_topic, 1)
    return f"{fragment} {frame}"


def synonym_variants(query: str, synonyms: Mapping[str, Sequence[str]]) -> list[str]:
    """Returns `query` with each term of the synonym map replaced by each of its synonyms."""
    out = []
    for term in sorted(synonyms, key=len, reverse=True):
        if term and term in query:
            out += [query.replace(term, alt) for alt in synonyms[term] if alt and alt != term]
    return out


def graph_terms(query: str, graph: Any, user: Optional[User], limit: int = 6) -> list[str]:
    """Returns names adjacent in the entity graph to the entities `query` mentions, nearest first, as `user` sees it."""
    terms: list[str] = []
    for entity in graph.find_entities(query, user=user):
        for rel in graph.neighbors(entity, user=user):
            name = rel.tail
            if name and name not in query and name not in terms:
                terms.append(name)
    return terms[:limit]


def rule_variants(state: State, synonyms: Mapping[str, Sequence[str]], graph: Any,
                  profile: CorpusProfile) -> list[Variant]:
    """Returns the offline variants: rewrite, synonym wordings, graph expansion, step-back (in that priority)."""
    query = state.query
    standalone = complete_follow_up(query, state.history, profile) or clean(query)
    out = [Variant(text=standalone, kind="rewrite")] if standalone != query else []
    if state.plan.expand_query:
        out += [Variant(text=t, kind="multi_query") for t in synonym_variants(standalone, synonyms)]
        if graph is not None:
            terms = graph_terms(standalone, graph, state.user)
            if terms:
                out.append(Variant(text=f"{standalone} {' '.join(terms)}", kind="expansion"))
        laws = profile.names.query_entities(standalone)
        words = [w for w in keywords(standalone) if not any(w in law for law in laws)]
        if laws and words:
            out.append(Variant(text=f"{laws[0]} {words[0]}{profile.wording.step_back_suffix}", kind="step_back"))
    return out


def with_original(state: State, variants: Iterable[Variant]) -> tuple[Variant, ...]:
    """Returns the original query first, then distinct variants up to `plan.expansion_count`."""
    original = state.original_query or state.query
    seen, out = {original}, [Variant(text=original, kind="original")]
    for v in variants:
        text = v.text.strip()
        if text and text not in seen and len(out) <= state.plan.expansion_count:
            seen.add(text)
            out.append(Variant(text=text, kind=v.kind))
    return tuple(out)


def _from_llm(out: PlanOutput, state: State) -> Planned:
    variants = with_original(state, (Variant(text=v.text, kind=v.kind) for v in out.variants))
    if len(variants) == 1:
        raise InvalidOutput("query planner returned no usable variant")
    return {"variants": variants, "query_plan": QueryPlan(source="llm")}


@dataclass(frozen=True)
class Planning(Reads):
    """What the query planner reads: the question as asked and as rewritten, the conversation, the plan and who
    asks (the graph's names they may read)."""

    query: str
    original_query: str
    history: tuple[Message, ...]
    plan: RetrievalPlan
    user: User


@tool
def query_expand_rules(state: Planning, ctx: Context, *, synonyms: Optional[dict[str, Any]] = None) -> Planned:
    """Writes the offline variants: cleaned, follow-ups completed, expanded by `synonyms` (term → [synonyms],
    merged with the ``synonyms`` resource, i.e. learned ones) and the graph. A failure while planning leaves only
    the original query, marked in `query_plan` and as the span's fallback."""
    synonyms = {**(synonyms or {}), **(ctx.resources.get("synonyms") or {})}
    try:
        variants = rule_variants(state, synonyms, ctx.resources.get("graph"), profile_of(ctx))
    except Exception as e:  # a broken resource must not stop retrieval: fall back to the original query
        ctx.trace.mark_current(f"query planning failed ({type(e).__name__}: {e}); searched the original query")
        return {"variants": with_original(state, ()),
                "query_plan": QueryPlan(source="original", fallback=True, reason=f"{type(e).__name__}: {e}")}
    return {"variants": with_original(state, variants), "query_plan": QueryPlan(source="rules")}


query_expand = skill(Lam("query_expand", ProfilePrompt("query_expand"), output=PlanOutput,
                         reads=["query", "original_query", "history", "plan", "user"], writes=Planned,
                         parse=_from_llm, fallback=query_expand_rules, max_tokens=400))
"""The query planner; offline `query_expand_rules` (config ``synonyms``)."""
