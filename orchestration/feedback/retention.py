"""What the feedback store keeps of asking: logs pruned by rows, bytes and age, records and cached answers capped.

Every `PRUNE_EVERY` appended query-log records the logs are pruned to ``retention`` (`RetentionConfig`): each
log to ``maxRows`` rows, all of them together to ``maxBytes`` bytes of records, none older than ``maxDays``
days, oldest first. A query-log record is cut to `RECORD_BYTES` (its retrieval lists go first, then the
answer's text) and an answer over `CACHE_ENTRY_BYTES` is not cached, so what a flood of questions can add is
bounded (`bound`, docs/security-scopes-learning.md).
"""
from __future__ import annotations

import datetime as dt
import json
from typing import Any, Mapping

from ..config import FeedbackConfig, RetentionConfig
from .store import Tx
from .store.base import LOGS

PRUNE_EVERY = 25
"""Query-log records appended between two prunings."""
RECORD_BYTES = 16 * 1024
"""The largest query-log record kept whole."""
CACHE_ENTRY_BYTES = 128 * 1024
"""The largest answer the query cache keeps."""
ROW_OVERHEAD = 2
"""Bytes on disk per byte of record, with the table's indexes and free page space (SQLite, measured ≈ 1.3)."""
FIXED_BYTES = 1024 * 1024
"""The store's schema, counters and routing tallies, whatever was asked."""


def capped(record: dict[str, Any]) -> dict[str, Any]:
    """Returns a query-log record of at most `RECORD_BYTES` (JSON): retrieval lists dropped, then text cut."""
    if size(record) <= RECORD_BYTES:
        return record
    out = {k: v for k, v in record.items() if k not in ("retrieval", "rerank_top5", "variants")}
    out["truncated"] = True
    for field in ("answer", "query", "rewritten_query"):
        if size(out) > RECORD_BYTES and isinstance(out.get(field), str):
            out[field] = out[field][:max(0, len(out[field]) - (size(out) - RECORD_BYTES)) // 2]
    return out


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))


def prune(tx: Tx, retention: RetentionConfig) -> int:
    """Deletes log rows past `retention` (rows per log, age, then bytes of all logs, oldest first); returns how
    many went."""
    before = tx.one("SELECT COUNT(*) FROM logs WHERE ns = ?", tx.ns)[0]
    for log in LOGS:
        row = tx.one("SELECT seq FROM logs WHERE ns = ? AND log = ? ORDER BY seq DESC LIMIT 1 OFFSET ?", tx.ns, log,
                     retention.max_rows)
        if row is not None:
            tx.run("DELETE FROM logs WHERE ns = ? AND log = ? AND seq <= ?", tx.ns, log, row[0])
    oldest = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=retention.max_days)
    tx.run("DELETE FROM logs WHERE ns = ? AND time < ?", tx.ns, oldest.isoformat(timespec="milliseconds"))
    total = tx.one("SELECT COALESCE(SUM(LENGTH(record)), 0) FROM logs WHERE ns = ?", tx.ns)[0]
    if total > retention.max_bytes:
        kept, cut = 0, None
        for seq, length in tx.all("SELECT seq, LENGTH(record) FROM logs WHERE ns = ? ORDER BY seq DESC", tx.ns):
            kept += length
            if kept > retention.max_bytes:
                cut = seq
                break
        if cut is not None:
            tx.run("DELETE FROM logs WHERE ns = ? AND seq <= ?", tx.ns, cut)
    return before - tx.one("SELECT COUNT(*) FROM logs WHERE ns = ?", tx.ns)[0]


def bound(config: FeedbackConfig) -> int:
    """Returns the most bytes the feedback store's database holds at rest (after a checkpoint) from any number of
    questions of callers that may not teach: the logs' retention, the cached answers, the per-source rows of
    `asking`, with their on-disk overhead, plus a fixed part; the wiki gains nothing (no write-back)."""
    r, v = config.retention, config.votes
    logs = r.max_bytes + PRUNE_EVERY * RECORD_BYTES
    cache = config.cache_size * CACHE_ENTRY_BYTES + 10 * config.cache_size * 128
    return ROW_OVERHEAD * (logs + cache) + FIXED_BYTES + (v.rate_limit * 256 if v.anonymous_agreement else 0)


def live_write_backs(items: Mapping[str, Mapping[str, Any]], keep: int) -> list[str]:
    """Returns the ids of live write-backs beyond the `keep` newest, oldest first (what retention reverts)."""
    live = sorted((i for i in items.values() if not i["reverted"]), key=lambda i: i["time"])
    return [i["id"] for i in live[:max(0, len(live) - keep)]]
