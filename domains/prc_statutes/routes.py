"""The statute pack's own terms and the routes that run them: a survey leads with the statutes matching the
question as a whole (statute_documents) and those its topics name (statute_topics)."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from lambdarag import Context, Term, User, tool
from lambdarag.patterns.registry import pack_pattern, skill as built
from lambdarag.patterns.synthesis import surveyed
from lambdarag.skills.registry import skill
from lambdarag.skills.store.records import Hits, HitsOut, TimeRange

from .ranks import SPECIFIC, document_hits, topic_hits

PACK = "prc_statutes"


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


@pack_pattern(PACK, "synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns the synthesis route led by whole statutes (statute_documents), then those the topics name."""
    return surveyed(settings, built(settings, "statute_documents") >> built(settings, "statute_topics"))
