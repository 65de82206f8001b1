"""Learned classification rules: ``classification_rules.json``, ``{pattern, type}`` from corrections and from
agreeing LLM classifications; the classify skill tries them first."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Optional

from skills.sentences import keywords

from .files import JsonStore, now

RULE_AGREEMENT = 0.9        # share of LLM classifications of a keyword that must agree before it becomes a rule


class RuleBook:
    """The learned classification rules of one knowledge base."""

    def __init__(self, path: Path, min_samples: int) -> None:
        self.store, self.min_samples = JsonStore(path), min_samples

    def rules(self) -> list[dict[str, str]]:
        """Returns the learned classification rules as the classify skill takes them: [{pattern, type}]."""
        return [{"pattern": r["pattern"], "type": r["type"]} for r in self.store.read().get("rules", [])]

    def exemplars(self) -> list[dict[str, str]]:
        """Returns the corrected questions as labelled exemplars for the learned classifier: [{query, type}]."""
        return [{"query": r["query"], "type": r["type"]} for r in self.store.read().get("rules", [])
                if r.get("origin") == "correction"]

    def correct(self, query: str, query_type: str, pattern: Optional[str] = None) -> dict[str, str]:
        """Returns the rule learned from a correction: `pattern` (default: the query itself) → `query_type`.

        The corrected question also becomes an exemplar of the learned classifier, so similar questions follow it.
        """
        from skills.classify import learned_rule

        rule = {"pattern": pattern or re.escape(query.strip().rstrip("?？。!！ ")), "type": query_type}
        learned_rule(rule)   # fails on a bad type or regex before anything is stored
        self.add({**rule, "origin": "correction", "query": query, "time": now()})
        return rule

    def add(self, rule: dict[str, Any]) -> None:
        def change(data: dict) -> None:
            rules = [r for r in data.get("rules", []) if r["pattern"] != rule["pattern"]]
            data["rules"] = [rule] + rules     # newest first: a later correction overrides an earlier one
        self.store.update(change)

    def observe(self, query: str, classification: Mapping[str, Any]) -> Optional[dict[str, str]]:
        """Counts an LLM classification per query keyword; returns the rule learned once one keyword agrees enough."""
        if classification.get("stage") != "llm":
            return None
        kind, words = classification.get("type"), keywords(query)
        learned: dict[str, Optional[dict]] = {"rule": None}
        need = self.min_samples

        def change(data: dict) -> None:
            seen = data.setdefault("observations", {})
            have = {r["pattern"] for r in data.get("rules", [])}
            for w in words:
                counts = seen.setdefault(w, {})
                counts[kind] = counts.get(kind, 0) + 1
                total, top = sum(counts.values()), counts[kind]
                pattern = re.escape(w)
                if top >= need and top / total >= RULE_AGREEMENT and pattern not in have and learned["rule"] is None:
                    rule = {"pattern": pattern, "type": kind, "origin": "llm", "query": query, "time": now(),
                            "evidence": top}
                    data["rules"] = data.get("rules", []) + [rule]
                    learned["rule"] = rule
        self.store.update(change)
        return learned["rule"]
