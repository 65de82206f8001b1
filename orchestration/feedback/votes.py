"""Votes on cited chunks — 👍/👎 on the demo page, `lambdarag feedback confirm|reject` — the trust boundary between
whoever sends feedback and what it may change.

A vote names a logged query id and one chunk that answer cited or showed (its
first `SHOWN_HITS` hits); the caller must be who was shown it (the same
permission scope; an operator may vote on any answer) and may read the chunk.
Anything else is refused with `FeedbackRefused`, whose message names the rule
broken and echoes nothing the caller sent.

Every accepted vote is an item of the feedback store (kind ``vote``, its status the row's state) with its
source and user:

- an operator's vote (`ALL_ACCESS`, the CLI) is applied at once: a confirmation
  item (`confirmations`) that `feedback revert` undoes;
- any other vote is ``pending`` and changes no ranking until an operator
  approves it (`approve`), or until ``votes.trustedAgreement`` distinct trusted
  users (``votes.trustedUsers``) cast the same vote on the same question and
  chunk; anonymous sources (client addresses) count only when
  ``votes.anonymousAgreement`` is above 0 (off by default: one person can be
  many addresses);
- a source may send ``votes.rateLimit`` votes per ``votes.rateWindowSeconds``,
  refused ones included, so guessing ids costs as much as voting.

An applied vote still cannot put a chunk that plain retrieval did not return
into anyone's top 10 (`skills.store.learned.arrange`).
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from lambdarag import User
from lambdarag.errors import FeedbackRateLimited, FeedbackRefused
from lambdarag.state import PUBLIC

from ..config import VoteConfig
from .cache import normalise, scope_of
from .confirmations import ORIGIN_WEIGHT, Confirmations, new_item
from .store import FeedbackStore, Log, Tx, now
from .store.rows import CONFIRMATION, VOTE, add_attempt, put_confirmation

SHOWN_HITS = 12
"""How many of an answer's hits count as shown to its caller (the demo page's evidence list)."""
VERDICTS = ("confirm", "reject")


@dataclass(frozen=True)
class Voter:
    """Who casts a vote: the source it comes from (rate limits and agreement count per source) and the user it
    asks as (an operator is `ALL_ACCESS`)."""

    source: str
    user: User

    @property
    def operator(self) -> bool:
        return self.user.all_access


def shown_chunks(result: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Returns the chunk ids an answer cited and the ids of its first `SHOWN_HITS` hits (what a vote may name)."""
    cited = [c["chunk_id"] for c in result.get("citations", []) if c.get("chunk_id")]
    shown = [h["chunk_id"] for h in result.get("hits", [])[:SHOWN_HITS] if h.get("chunk_id")]
    return list(dict.fromkeys(cited)), shown


class Votes:
    """The votes of one knowledge base (see the module docstring)."""

    def __init__(self, store: FeedbackStore, config: VoteConfig, confirmations: Confirmations) -> None:
        self.store, self.config, self.confirmations = store, config, confirmations

    def cast(self, log: Log, backend: Any, voter: Voter, query_id: str, chunk_id: str, verdict: str
             ) -> dict[str, Any]:
        """Returns the recorded vote (status ``applied`` or ``pending``) of `voter` on `chunk_id` for the logged
        answer `query_id`, or raises `FeedbackRefused` (`FeedbackRateLimited` past the source's limit)."""
        if verdict not in VERDICTS:
            raise FeedbackRefused(f"feedback: a vote is one of {', '.join(VERDICTS)}")
        if not voter.operator:
            self.count_attempt(voter.source)
        record = log.find(query_id)
        if record is None or not (voter.operator or record.get("scope") == scope_of(voter.user)):
            raise FeedbackRefused(f"feedback {verdict}: the query id names no answer logged for this caller")
        if chunk_id not in set(record.get("cited_chunks", ())) | set(record.get("shown_chunks", ())):
            raise FeedbackRefused(f"feedback {verdict}: the chunk is not one this answer cited or showed")
        try:
            chunk = backend.chunk(chunk_id)
        except KeyError:
            raise FeedbackRefused(f"feedback {verdict}: the chunk is no longer in the index") from None
        if not voter.user.may_read(chunk.department, chunk.security_level):
            raise FeedbackRefused(f"feedback {verdict}: this caller may not read the chunk")
        vote = {"id": f"vote-{uuid.uuid4().hex[:10]}", "query_id": query_id,
                "question": record.get("rewritten_query") or record["query"], "chunk": chunk_id, "verdict": verdict,
                "source": voter.source, "user": voter.user.id, "scope": record.get("scope", ""),
                "trusted": voter.operator or self.trusts(voter.user), "time": now(),
                "status": "pending", "confirmation": None}
        self.store.write(lambda tx: tx.put_item(VOTE, vote["id"], vote, vote["status"]))
        agreeing = [vote] if voter.operator else self.agreeing(vote)
        return self.apply(agreeing, by="operator" if voter.operator else "agreement")[vote["id"]] if agreeing \
            else vote

    def trusts(self, user: User) -> bool:
        """Returns whether votes of `user` count toward `trusted_agreement` (never the anonymous user's)."""
        return user.id != PUBLIC.id and user.id in self.config.trusted_users

    def count_attempt(self, source: str) -> None:
        """Counts one vote of `source`, or raises `FeedbackRateLimited` when its window is full."""
        limit, window = self.config.rate_limit, self.config.rate_window_seconds
        moment = time.time()

        def change(tx: Tx) -> None:
            tx.run("DELETE FROM attempts WHERE ns = ? AND time <= ?", tx.ns, moment - window)
            recent = tx.one("SELECT COUNT(*) FROM attempts WHERE ns = ? AND source = ?", tx.ns, source)[0]
            if recent >= limit:
                raise FeedbackRateLimited(f"feedback: this source sent {limit} votes in the last {window:g} s, the "
                                          f"limit (orchestration.feedback.votes.rateLimit); try again later")
            add_attempt(tx, source, moment)
        self.store.write(change)

    def agreeing(self, vote: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Returns the pending votes agreeing with `vote` (same question, chunk and verdict) once enough distinct
        sources of its kind cast them (trusted users, or anonymous sources when allowed), else []."""
        trusted = vote["trusted"]
        need = self.config.trusted_agreement if trusted else self.config.anonymous_agreement
        if need == 0:
            return []
        same = [v for v in self.pending() if v["trusted"] == trusted and v["chunk"] == vote["chunk"]
                and v["verdict"] == vote["verdict"] and normalise(v["question"]) == normalise(vote["question"])]
        distinct = {v["user"] if trusted else v["source"] for v in same}
        return same if len(distinct) >= need else []

    def pending(self) -> list[dict[str, Any]]:
        """Returns the votes waiting for review, oldest first."""
        return sorted(self.store.read(lambda tx: tx.items(VOTE, "pending")).values(), key=lambda v: v["time"])

    def get(self, vote_id: str) -> Optional[dict[str, Any]]:
        """Returns the vote `vote_id`, or None."""
        return self.store.read(lambda tx: tx.item(VOTE, vote_id))

    def all(self) -> dict[str, dict[str, Any]]:
        """Returns every vote by id, in the order cast."""
        return self.store.read(lambda tx: tx.items(VOTE))

    def approve(self, vote_id: str) -> dict[str, Any]:
        """Returns the pending vote `vote_id` after applying it (an operator's review)."""
        vote = self.get(vote_id)
        if vote is None or vote["status"] != "pending":
            raise FeedbackRefused(f"feedback approve: no pending vote {vote_id!r} (see: lambdarag feedback review)")
        return self.apply([vote], by="operator")[vote_id]

    def apply(self, votes: list[Mapping[str, Any]], by: str) -> dict[str, dict[str, Any]]:
        """Returns `votes` (by id) after turning them into one confirmation item of their question and chunk, in
        one transaction. Votes another request applied meanwhile are left as they are: an operator's approval of
        one is refused, and an agreement that another request already applied is returned as applied."""
        first = votes[0]

        def change(tx: Tx) -> dict[str, dict[str, Any]]:
            current = {v["id"]: tx.item(VOTE, v["id"], lock=True) for v in sorted(votes, key=lambda v: v["id"])}
            pending = [v for v in current.values() if v is not None and v["status"] == "pending"]
            if by == "operator" and len(pending) < len(votes):
                raise FeedbackRefused(f"feedback: vote {first['id']!r} is no longer pending")
            if not pending:
                return current
            item_id = live_confirmation(tx, first) if by == "agreement" else None
            if item_id is None:
                item = new_item(first["verdict"], [(first["question"], [first["chunk"]])], scope=first["scope"],
                                query_id=first["query_id"])
                put_confirmation(tx, item)
                item_id = item["id"]
            for vote in pending:
                vote.update(status="applied", confirmation=item_id, applied_by=by, applied=now())
                tx.put_item(VOTE, vote["id"], vote, "applied")
            return current
        return self.store.write(change)


def live_confirmation(tx: Tx, vote: Mapping[str, Any]) -> Optional[str]:
    """Returns the live confirmation an earlier agreement on the same question, chunk and verdict made, if any:
    the same voters agreeing again must not stack a second item of the same pair."""
    for v in tx.items(VOTE, "applied").values():
        if v["chunk"] == vote["chunk"] and v["verdict"] == vote["verdict"] and \
                normalise(v["question"]) == normalise(vote["question"]):
            item = tx.item(CONFIRMATION, v.get("confirmation") or "")
            if item is not None and not item["reverted"]:
                return v["confirmation"]
    return None


def weight_of(vote: Mapping[str, Any]) -> Optional[float]:
    """Returns the weight an applied vote's confirmation carries (None while it is pending)."""
    return ORIGIN_WEIGHT[vote["verdict"]] if vote["status"] == "applied" else None
