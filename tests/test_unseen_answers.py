"""Offline answers on text written as nobody tuned for (round 20, the policy-en / handbook-zh-cn dev halves): a
definition list's term, a comparison whose sides share a verb, a question asking when a rule changed."""
from __future__ import annotations

from lambdarag import Context, State
from lambdarag.domains import profile_named
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.store.records import Hit

GENERIC = profile_named("generic")


def answer(query: str, hits: tuple, query_type: str) -> str:
    state = State.of(query, hits=hits, query_type=query_type)
    return extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]


def pages(*pages: tuple[str, str, str]) -> tuple:
    """Returns hits of (file, title, text), best first."""
    return tuple(Hit(chunk_id=f"{s}#{i}", text=t, source=s, title=title, score=1.0 - i / 10)
                 for i, (s, title, t) in enumerate(pages))


def test_a_comparisons_sides_are_the_names_after_the_verb_both_share():
    """"between declaring Breaks and declaring Conflicts" compares Breaks and Conflicts; the text never writes
    "declaring Breaks", and the answer called both sides missing (policy-en dev c02)."""
    hits = pages(("breaks.md", "Packages which break other packages - Breaks",
                  "When one binary package declares that it breaks another, dpkg will refuse to allow the package "
                  "which declares Breaks to be unpacked unless the broken package is deconfigured first."),
                 ("conflicts.md", "Conflicting binary packages - Conflicts",
                  "When one binary package declares a conflict with another using a Conflicts field, dpkg will "
                  "refuse to allow them to be unpacked on the system at the same time."))
    text = answer("What's the practical difference between declaring Breaks and declaring Conflicts?", hits, "compare")
    assert "Not found" not in text, text
    breaks, conflicts = text.split("On “Breaks”:")[1].split("On “Conflicts”:")
    assert "which declares Breaks to be unpacked" in breaks and "[source: breaks.md" in breaks, text
    assert "using a Conflicts field" in conflicts and "[source: conflicts.md" in conflicts, text
