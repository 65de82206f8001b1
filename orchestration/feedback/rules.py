"""Learned classification rules: ``{pattern, type}`` from corrections and from agreeing LLM classifications; the
classify skill tries them first. Rules are items of the feedback store (one row per pattern, corrections first,
newest first, then LLM rules in the order learned); LLM classifications are counted per keyword (``observations``).

A keyword comes from the questions it was learned from, so it is counted per permission scope of their askers
(`lambdarag.Scope`) and the rule carries that scope: a user sees it (in the classifier their question runs,
``ask --explain`` included) only when they may read all that scope may (`Scope.within`). Corrections are an
operator's and show to everyone; an LLM rule that records no scope shows to operators only."""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from lambdarag import Scope, User
from lambdarag.skills.sentences import keywords

from .store import FeedbackStore, Tx, now
from .store.rows import RULE, add_observation, put_rule

RULE_AGREEMENT = 0.9        # share of LLM classifications of a keyword that must agree before it becomes a rule


class RuleBook:
    """The learned classification rules of one knowledge base."""

    def __init__(self, store: FeedbackStore, min_samples: int) -> None:
        self.store, self.min_samples = store, min_samples

    def all(self) -> list[dict[str, Any]]:
        """Returns the stored rules with their provenance, in the order they are tried."""
        return list(self.store.read(lambda tx: tx.items(RULE)).values())

    def rules(self, user: Optional[User] = None, everyone: bool = False) -> list[dict[str, str]]:
        """Returns the learned classification rules `user` may see as the classify skill takes them:
        [{pattern, type}] (`everyone`: all of them, as the cache version reads them)."""
        return [{"pattern": r["pattern"], "type": r["type"]} for r in self.all() if everyone or shown_to(r, user)]

    def exemplars(self) -> list[dict[str, str]]:
        """Returns the corrected questions as labelled exemplars for the learned classifier: [{query, type}]."""
        return [{"query": r["query"], "type": r["type"]} for r in self.all() if r.get("origin") == "correction"]

    def learned(self, user: Optional[User] = None) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
        """Returns (`rules` `user` may see, `exemplars`) read in one transaction: what one question's classifier is
        built from."""
        return self.store.read(lambda tx: (self.rules(user), self.exemplars()))

    def correct(self, query: str, query_type: str, pattern: Optional[str] = None) -> dict[str, str]:
        """Returns the rule learned from a correction: `pattern` (default: the query itself) → `query_type`.

        The corrected question also becomes an exemplar of the learned classifier, so similar questions follow it.
        """
        from lambdarag.skills.classify import learned_rule

        rule = {"pattern": pattern or re.escape(query.strip().rstrip("?？。!！ ")), "type": query_type}
        learned_rule(rule)   # fails on a bad type or regex before anything is stored
        self.add({**rule, "origin": "correction", "query": query, "time": now()})
        return rule

    def add(self, rule: dict[str, Any]) -> None:
        """Stores `rule` before every other (newest first: a later correction overrides an earlier one)."""
        self.store.write(lambda tx: put_rule(tx, rule, first=True))

    def observe(self, query: str, classification: Mapping[str, Any], scope: Scope = Scope()
                ) -> Optional[dict[str, Any]]:
        """Counts an LLM classification per query keyword within the asker's `scope`; returns the rule learned once
        one keyword agrees enough there (it carries the scope)."""
        if classification.get("stage") != "llm":
            return None
        kind, words = classification.get("type"), keywords(query)
        need = self.min_samples

        def change(tx: Tx) -> Optional[dict[str, Any]]:
            learned = None
            for w in sorted(set(words)):            # one order for every writer: no two upserts deadlock
                add_observation(tx, f"{scope.key} {w}", kind, words.count(w))
            for w in dict.fromkeys(words):
                counts = dict(tx.all("SELECT query_type, count FROM observations WHERE ns = ? AND word = ?", tx.ns,
                                     f"{scope.key} {w}"))
                total, top = sum(counts.values()), counts[kind]
                pattern = re.escape(w)
                rule_id = f"{scope.key} {pattern}"
                if top >= need and top / total >= RULE_AGREEMENT and learned is None \
                        and tx.item(RULE, rule_id) is None:
                    learned = {"id": rule_id, "pattern": pattern, "type": kind, "origin": "llm", "query": query,
                               "time": now(), "evidence": int(top), "scope": scope.model_dump(mode="json")}
                    put_rule(tx, learned, first=False)
            return learned
        return self.store.write(change)


def shown_to(rule: Mapping[str, Any], user: Optional[User]) -> bool:
    """Returns whether `user` may see `rule`: a correction always, a learned rule when they may read all its
    scope may (one without a recorded scope: operators only)."""
    if rule.get("origin") == "correction":
        return True
    scope = rule.get("scope")
    return Scope(**scope).within(user) if isinstance(scope, Mapping) else bool(user and user.all_access)
