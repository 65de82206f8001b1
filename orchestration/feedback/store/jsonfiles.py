"""The JSON and JSONL files the feedback stores were before the database: imported once, exported for inspection.

`import_folder` runs inside the transaction that first opens a namespace
(`open_store`): it reads every old file of the folder (a torn JSONL line, which a
killed writer could leave, is skipped and counted) and writes its rows. The files
are left where they were and never read again. `export_folder` writes the same
files from the store, so ``lambdarag feedback export`` shows the state in the old
form, and importing an export restores it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from lambdarag.errors import StoreCorrupt
from lambdarag.skills.store.files import private_dir, write_text

from .base import LOGS, FeedbackStore, Tx
from .rows import (CLOCK, CONFIRMATION, RULE, VOTE, WRITEBACK, add_attempt, add_evidence, add_observation, add_runs,
                   cache_counts, cache_entries, put_confirmations, put_count, put_entry, put_rule, put_vector,
                   routing_table, stored_vectors, synonym_terms)

JSONL = {log: f"{log}.jsonl" for log in LOGS}
DOCUMENTS = ("query_cache.json", "confirmations.json", "votes.json", "learned.json", "routing_stats.json",
             "synonym_map.json", "classification_rules.json", "learned_params.json", "learned_generation.json")
VECTORS = "question_vectors.npz"


def jsonl_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Returns the complete records of a JSONL file in order and how many damaged lines were skipped."""
    records, torn = [], 0
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            record = None
        if isinstance(record, dict):
            records.append(record)
        else:
            torn += 1
    return records, torn


def json_document(path: Path) -> dict[str, Any]:
    """Returns the JSON object in `path` ({} when absent); a damaged file raises `StoreCorrupt` and imports nothing."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreCorrupt(f"{path}: not valid JSON ({e}); nothing was imported, the file was left unchanged") \
            from None
    if not isinstance(data, dict):
        raise StoreCorrupt(f"{path}: expected a JSON object, got {type(data).__name__}; nothing was imported")
    return data


def import_folder(tx: Tx, directory: Path) -> dict[str, Any]:
    """Returns what was imported (rows per file, torn lines per log) after writing the old files of `directory`."""
    rows: dict[str, int] = {}
    torn: dict[str, int] = {}
    for log, name in JSONL.items():
        if (directory / name).is_file():
            records, torn[log] = jsonl_records(directory / name)
            for record in records:
                tx.append(log, record)
            rows[name] = len(records)
    doc = {name: json_document(directory / name) for name in DOCUMENTS}
    cache = doc["query_cache.json"]
    counts, entries = cache.get("counts", {}), sorted(cache.get("entries", {}).items(), key=lambda e: e[1]["used"])
    clock = tx.bump(CLOCK, len(counts) + len(entries)) - len(counts) - len(entries)
    for n, (key, count) in enumerate(counts.items(), 1):   # in the old order: least recently counted first
        put_count(tx, key, int(count), clock + n)
    for n, (key, entry) in enumerate(entries, len(counts) + 1):
        put_entry(tx, key, entry, clock + n)
    put_confirmations(tx, list(doc["confirmations.json"].get("items", {}).values()))
    votes = doc["votes.json"]
    tx.put_items(VOTE, [(v["id"], v, v["status"]) for v in votes.get("votes", {}).values()])
    for source, times in votes.get("attempts", {}).items():
        for moment in times:
            add_attempt(tx, source, moment)
    tx.put_items(WRITEBACK, [(item_id, item, "reverted" if item.get("reverted") else "live")
                             for item_id, item in doc["learned.json"].get("items", {}).items()])
    for query_type, strategies in doc["routing_stats.json"].get("types", {}).items():
        for strategy, r in strategies.items():
            add_runs(tx, query_type, strategy, r["total"], r["success"], r["latency_ms"], r["cost"])
    lexicon = doc["synonym_map.json"]
    for term, alts in lexicon.get("terms", {}).items():
        for alt, n in alts.items():
            add_evidence(tx, term, alt, int(n))
    for origin, n in lexicon.get("origins", {}).items():
        tx.bump(f"origin:{origin}", int(n))
    rules = doc["classification_rules.json"]
    for rule in reversed(rules.get("rules", [])):       # each goes first: the old first rule ends first
        put_rule(tx, rule, first=True)
    for word, counts in rules.get("observations", {}).items():
        for query_type, n in counts.items():
            add_observation(tx, word, query_type, int(n))
    if doc["learned_params.json"]:
        tx.put_document("learned_params", doc["learned_params.json"])
    if doc["learned_generation.json"]:          # the imported items counted theirs; the file's count wins
        tx.bump("generation", int(doc["learned_generation.json"].get("generation", 0)) - tx.counter("generation"))
    if (directory / VECTORS).is_file():
        with np.load(directory / VECTORS) as vectors:
            for key in vectors.files:
                put_vector(tx, key, vectors[key])
            rows[VECTORS] = len(vectors.files)
    rows.update({name: 1 for name, data in doc.items() if data})
    return {"rows": rows, "torn": torn}


def export_folder(store: FeedbackStore, out: Path) -> list[Path]:
    """Returns the files written to `out`: the store's state in the old JSON/JSONL files' form."""
    private_dir(out)
    written = []
    for log, name in JSONL.items():
        lines = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in store.log(log))
        written.append(write(out / name, lines))

    def state(tx: Tx) -> dict[str, Any]:
        attempts: dict[str, list[float]] = {}
        for source, moment in tx.all("SELECT source, time FROM attempts WHERE ns = ? ORDER BY time", tx.ns):
            attempts.setdefault(source, []).append(moment)
        observations: dict[str, dict[str, int]] = {}
        for word, query_type, n in tx.all("SELECT word, query_type, count FROM observations WHERE ns = ? "
                                          "ORDER BY word, query_type", tx.ns):
            observations.setdefault(word, {})[query_type] = int(n)
        origins = {name[len("origin:"):]: int(n) for name, n in
                   tx.all("SELECT name, value FROM counters WHERE ns = ? ORDER BY name", tx.ns)
                   if name.startswith("origin:")}
        return {"confirmations.json": {"items": tx.items(CONFIRMATION)},
                "votes.json": {"votes": tx.items(VOTE), "attempts": attempts},
                "learned.json": {"items": tx.items(WRITEBACK)},
                "classification_rules.json": {"rules": list(tx.items(RULE).values()), "observations": observations},
                "learned_params.json": tx.document("learned_params"),
                "learned_generation.json": {"generation": tx.counter("generation")},
                "synonym_map.json": {"origins": origins}}
    docs = store.read(state)
    docs["query_cache.json"] = {"counts": store.read(cache_counts), "entries": store.read(cache_entries)}
    docs["routing_stats.json"] = {"types": store.read(routing_table)}
    docs["synonym_map.json"]["terms"] = store.read(synonym_terms)
    for name in DOCUMENTS:
        written.append(write(out / name, json.dumps(docs[name], ensure_ascii=False, indent=1) + "\n"))
    keys = [k for k, in store.read(lambda tx: tx.all("SELECT key FROM vectors WHERE ns = ? ORDER BY key", tx.ns))]
    if keys:
        path = out / VECTORS
        with path.open("wb") as f:
            np.savez(f, **stored_vectors(store, keys))
        path.chmod(0o600)
        written.append(path)
    return written


def write(path: Path, text: str) -> Path:
    write_text(path, text)
    return path

