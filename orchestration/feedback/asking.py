"""Who may teach by asking: an answer confirms its evidence, learns synonyms and writes back only for a trusted
caller, or once distinct callers asked the same question and got the same evidence (the vote rules, `votes`).

The caller of a search is the source it comes from: `LOCAL` for the process's own code and the CLI (they own the
data home), or what a server names with `asking_from` around a request (``web:<client address>``). A caller is
trusted when it is `LOCAL`, an operator, or a user of ``votes.trustedUsers``. Any other caller's answer teaches
only when ``votes.anonymousAgreement`` distinct sources asked it within ``votes.rateWindowSeconds`` (0, the
default: never), each source counted once per question and window, and at most ``votes.rateLimit`` questions per
source and window are remembered for agreement — so a flood of questions from one caller teaches nothing and
leaves a bounded number of rows.
"""
from __future__ import annotations

import hashlib
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional, Sequence

from lambdarag import User
from lambdarag.state import PUBLIC

from ..config import VoteConfig
from .cache import normalise
from .store import FeedbackStore, Tx
from .store.rows import add_attempt

LOCAL = "local"
"""The source of a search the process itself runs (library code, the CLI)."""
_SOURCE: ContextVar[str] = ContextVar("lambdarag_asking_source", default=LOCAL)
ASKED = "ask|"
"""The prefix of the ``attempts`` rows that remember who asked what (``ask|<source digest>|<question digest>``)."""


@contextmanager
def asking_from(source: str) -> Iterator[None]:
    """Runs the searches inside (and the threads they start) as asked from `source` (e.g. ``web:10.0.0.7``)."""
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def asking_source() -> str:
    """Returns the source the current search is asked from (`LOCAL` unless a server said otherwise)."""
    return _SOURCE.get()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


class Asking:
    """The rule of one knowledge base for what a caller's answers may teach (see the module docstring)."""

    def __init__(self, store: FeedbackStore, config: VoteConfig) -> None:
        self.store, self.config = store, config

    def trusted(self, source: str, user: Optional[User]) -> bool:
        """Returns whether answers asked from `source` as `user` teach on their own."""
        user = user or PUBLIC
        return source == LOCAL or user.all_access or (user.id != PUBLIC.id and user.id in self.config.trusted_users)

    def teaches(self, question: str, evidence: Sequence[str], user: Optional[User]) -> bool:
        """Returns whether an answer to `question` resting on the chunks `evidence` may teach, counting this ask
        toward the agreement of distinct sources when its caller is not trusted."""
        source = asking_source()
        if self.trusted(source, user):
            return True
        need = self.config.anonymous_agreement
        if need == 0:
            return False
        asked = digest(normalise(question) + "\0" + "\0".join(sorted(set(evidence))))
        mine = f"{ASKED}{digest(source)}|"
        moment, window = time.time(), self.config.rate_window_seconds

        def change(tx: Tx) -> bool:
            tx.run("DELETE FROM attempts WHERE ns = ? AND source LIKE ? AND time <= ?", tx.ns, ASKED + "%",
                   moment - window)
            if tx.one("SELECT 1 FROM attempts WHERE ns = ? AND source = ?", tx.ns, mine + asked) is None:
                remembered = tx.one("SELECT COUNT(*) FROM attempts WHERE ns = ? AND source LIKE ?", tx.ns,
                                    mine + "%")[0]
                if remembered >= self.config.rate_limit:
                    return False
                add_attempt(tx, mine + asked, moment)
            agreeing = tx.one("SELECT COUNT(DISTINCT source) FROM attempts WHERE ns = ? AND source LIKE ?", tx.ns,
                              f"{ASKED}%|{asked}")[0]
            if agreeing < need:
                return False
            tx.run("DELETE FROM attempts WHERE ns = ? AND source LIKE ?", tx.ns, f"{ASKED}%|{asked}")
            return True                  # the agreement teaches once; the next one starts afresh
        return self.store.write(change)
