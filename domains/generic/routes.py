"""The generic pack's own terms and the routes that run them: a survey leads with the documents about its topic."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Context, Identity, Term, User, tool
from lambdarag.patterns.registry import pack_pattern, skill as built
from lambdarag.patterns.synthesis import surveyed
from lambdarag.skills.registry import skill
from lambdarag.skills.store.records import Hits, HitsOut

from .survey import covering

PACK = "generic"
FIRST = 1
"""A survey keeps hybrid's best document first (keep_lead(window=1)) and covers the topic after it: its MRR@5 is
hybrid's whenever that document answers (on the dev surveys of bench/data/domains, at window 5 a chapter page
the survey ranked first pushed hybrid's answering section to second place)."""


@skill
@tool(effect="io")
def survey_documents(query: str, hits: Hits, user: User, ctx: Context) -> HitsOut:
    """Puts the best chunk of each document about the question (by content, headings and listed things: survey)
    ahead of `hits`, after the plain ranking's first document."""
    return {"hits": covering(ctx, query, hits, user)}


@pack_pattern(PACK, "synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns the synthesis route with hybrid's best document first, then the documents about the question
    (survey_documents), one chunk each: no spread by title after it (a manual's sections share titles such as
    "Overview" without being versions of one document)."""
    return surveyed(settings, built(settings, "survey_documents"), Identity, window=FIRST)
