"""The statute pack's own terms and the routes that run them: the statutes a question names (statute_sides), laws
ahead of the instruments below them
(statute_priors, statute_spread), repealed statutes out (repeal.drop_repealed), and a survey led by the statutes
matching the question as a whole (statute_documents) and those its topics name (statute_topics)."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from lambdarag import Context, Term, User, tool
from lambdarag.patterns.compare_search import compared
from lambdarag.patterns.hybrid_search import hybrid
from lambdarag.patterns.relation_search import related
from lambdarag.patterns.registry import pack_pattern, skill as built
from lambdarag.patterns.synthesis import surveyed
from lambdarag.patterns.temporal_search import dated
from lambdarag.skills.diversify import AHEAD_WINDOW, ordered_by_priors, per_document, question_window
from lambdarag.skills.registry import skill
from lambdarag.skills.sides import SidesOut
from lambdarag.skills.store.records import Hits, HitsOut, TimeRange

from .kinds import order_ahead, prior, stand_back
from .names import short_name, statute_names
from .ranks import SPECIFIC, document_hits, topic_hits

PACK = "prc_statutes"


@skill
@tool
def statute_priors(hits: Hits, query: str, time_range: Optional[TimeRange] = None, *,
                   window: int = AHEAD_WINDOW) -> HitsOut:
    """Puts the chunks of the first `window` statutes of `hits`, one version each, ahead, laws before the
    regulations and interpretations below them unless the question asks for those (kinds.order_ahead)."""
    return {"hits": ordered_by_priors(hits, window, question_window(query, time_range),
                                      lambda ahead: order_ahead(ahead, query, short_name))}


@skill
@tool
def statute_spread(hits: Hits, query: str, *, cap: int = 1) -> HitsOut:
    """Orders `hits` so the first ones span statutes, each round by the kind prior of the question (kinds.prior:
    laws first, or the kinds it asks for; kinds.stand_back: how far a lower kind stands back)."""
    return {"hits": per_document(hits, cap, prior(query), stand_back(query))}


@skill
@tool(effect="io")
def statute_sides(query: str, ctx: Context, *, limit: int = 4, loose: bool = False) -> SidesOut:
    """Writes `sides`: the statutes the question names by title, short name or stem (names; `loose`: a question
    that sets named things side by side also names them by a shorter part of the title)."""
    return {"sides": statute_names(ctx.resource("index")).named(query, limit, loose)}


@skill
@tool(effect="io")
def statute_documents(query: str, hits: Hits, user: User, ctx: Context, time_range: Optional[TimeRange] = None, *,
                      top_k: int = 200, depth: int = 3, purposes: int = 100) -> HitsOut:
    """Puts the statutes matching the question as a whole and by their purpose article, in their current version,
    ahead of `hits` (`top_k` chunks and `purposes` purpose articles searched; `depth` best chunks per statute)."""
    return {"hits": document_hits(ctx, query, hits, user, time_range, top_k, depth, purposes)}


@skill
@tool(effect="io")
def statute_topics(query: str, hits: Hits, user: User, ctx: Context, *, limit: int = 6,
                   specific: int = SPECIFIC) -> HitsOut:
    """Puts, for each topic of the question, the best chunk of the statute it names among the first `hits`
    (`limit` statutes; `specific`: a word in more titles names none)."""
    return {"hits": topic_hits(ctx.resource("index"), query, hits, user, limit, specific)}


@pack_pattern(PACK, "hybrid_search")
def hybrid_search(settings: Mapping[str, Any]) -> Term:
    """Returns hybrid_search with laws ahead among its first statutes (statute_priors)."""
    return hybrid(settings, "statute_priors")


@pack_pattern(PACK, "compare_search")
def compare_search(settings: Mapping[str, Any]) -> Term:
    """Returns compare_search with the statutes the question names as its sides (statute_sides)."""
    return compared(settings, "statute_sides")


@pack_pattern(PACK, "relation_search")
def relation_search(settings: Mapping[str, Any]) -> Term:
    """Returns relation_search with the statutes the question names first (statute_sides)."""
    return related(settings, "statute_sides")


@pack_pattern(PACK, "temporal_search")
def temporal_search(settings: Mapping[str, Any]) -> Term:
    """Returns temporal_search without the statutes a successor repealed by the question's time."""
    return dated(settings, built(settings, "drop_repealed"))


@pack_pattern(PACK, "synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns the synthesis route led by whole statutes (statute_documents), then those the topics name, without
    repealed statutes, spread over statutes laws first (statute_spread)."""
    return surveyed(settings, built(settings, "statute_documents") >> built(settings, "statute_topics"),
                    built(settings, "drop_repealed", undated="latest") >> built(settings, "statute_spread"))
