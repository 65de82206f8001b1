"""Who may see what: the access labels of a source document and the one visibility rule for derived items.

A derived item — a wiki line, a relation, a version chain link, a learned
fact, a cached answer — is visible only if EVERY source it was derived from is
readable by the user (`visible`). Sources travel as structured records
(source path → `Label`), never re-parsed from rendered text. An entity is
different in one respect: each document that names it attests it on its own,
so it is visible when ONE of its attesting sources is (`attested`); what it is
said to be, by whom and when, is a derived item again.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

from lambdarag import User
from lambdarag.state import Record


class Label(Record):
    """Access labels of one source document."""

    department: Optional[str] = None
    security_level: int = 0

    def visible_to(self, user: Optional[User]) -> bool:
        """Returns whether `user` may read the document (no user: everything is visible)."""
        return user is None or user.may_read(self.department, self.security_level)


HIDDEN = Label(security_level=1 << 30)
"""The label of a source nothing describes: nobody may read it (unknown provenance fails closed)."""


def visible(sources: Iterable[str], labels: Mapping[str, Label], user: Optional[User]) -> bool:
    """Returns whether an item derived from `sources` is visible: every one is readable (an unknown source is not)."""
    if user is None:
        return True
    return all(s in labels and labels[s].visible_to(user) for s in sources)


def attested(labels: Mapping[str, Label], user: Optional[User]) -> bool:
    """Returns whether some attesting source is readable (an item with no recorded source attests nothing)."""
    return user is None or any(label.visible_to(user) for label in labels.values())
