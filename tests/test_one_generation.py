"""One generation: an index, its graph and its pages switch together, so `index` or `compile-wiki` killed (SIGKILL)
at random moments leaves answers from the old state or the new, never a mix; an incremental update leaves nothing
of a deleted document behind."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from lambdarag.orchestration.knowledge import forget, index_wiki, pinned_wiki
from lambdarag.skills.store.graph import EntityGraph
from lambdarag.skills.store.index import open_index
from lambdarag.domains.corpus import compile_wiki
from tests.test_crash_safety import home, quiet_main, run_child, statutes   # noqa: F401  (home is a fixture)

KILLS = 10   # per command: a bounded number of real SIGKILLs at moments drawn from the run's own events


def wiki_state(folder: Path) -> tuple:
    """Returns what a reader of a wiki folder sees: its documents, entities (with aliases), relations and pages."""
    graph = EntityGraph.load(folder / "relations.json")
    documents = sorted(json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["documents"])
    entities = sorted((e.name, e.aliases, tuple(sorted(e.sources))) for e in graph.entities())
    relations = sorted(r.key() for r in graph.records())
    pages = sorted((p.name, p.read_text(encoding="utf-8")) for p in (folder / "entities").glob("*.md"))
    return documents, entities, relations, pages


def served_state() -> tuple:
    """Returns (documents of the index, state of the wiki generation a knowledge base opens with it)."""
    forget()
    index = open_index("kb")
    return sorted(m["source"] for m in index.documents().values()), wiki_state(pinned_wiki(index.wiki, index_wiki("kb")))


@pytest.fixture
def corpora(home):
    files = statutes(10)
    old, new = home / "old", home / "new"
    old.mkdir()
    for f in files[:8]:
        shutil.copy(f, old / f.name)
    shutil.copytree(old, new)
    (new / files[0].name).unlink()                      # deleted: nothing of it may stay
    shutil.copy(files[8], new / files[8].name)          # added
    changed = new / files[3].name
    changed.write_text(changed.read_text(encoding="utf-8") + "\n第九十九条　本条例由交通运输部负责解释。\n", "utf-8")
    clean = {}
    for name, corpus in (("old", old), ("new", new)):
        clean[name] = wiki_state(compile_wiki(corpus, home / f"clean-{name}", progress=False).generation)
    return old, new, clean


def moments(argv: list[str], home: Path, reset) -> list[int]:
    """Returns KILLS moments of a run of `argv` (seeded, reproducible): half anywhere, the rest among its last file
    writes and after them, where the switch from the old state to the new one happens."""
    reset()
    counts = home / "events.json"
    assert not run_child(argv, 0, counts)
    measured = json.loads(counts.read_text())
    rng = random.Random(44)
    saving = sorted(set(measured["saving"]))
    after = range(saving[-1] + 1, measured["events"])
    picked = rng.sample(range(1, measured["events"]), KILLS // 2) + rng.sample(after, min(2, len(after)))
    return sorted(set(picked + rng.sample(saving[len(saving) * 9 // 10:], KILLS - len(picked))))


def killed_runs(home: Path, old: Path, argv: list[str]) -> Iterator[int]:
    """Builds index kb from `old`, then for each kill moment yields it after running `argv` from that state and
    killing it there."""
    assert quiet_main(["index", "--corpus", str(old), "--name", "kb", "--no-dense"])[0] == 0
    base = home / "base"
    shutil.copytree(home / "home" / "kb", base, symlinks=True)

    def reset() -> None:
        shutil.rmtree(home / "home" / "kb")
        shutil.copytree(base, home / "home" / "kb", symlinks=True)

    for moment in moments(argv, home, reset):
        reset()
        assert run_child(argv, moment, home / "events.json"), f"{argv[0]} ended before event {moment}"
        yield moment


def test_index_killed_at_random_moments_serves_one_generation(home, corpora):
    old, new, clean = corpora
    argv = ["index", "--corpus", str(new), "--name", "kb", "--no-dense"]
    seen = set()
    for moment in killed_runs(home, old, argv):
        documents, wiki = served_state()
        state = "new" if documents == sorted(p.name for p in new.iterdir()) else "old"
        assert wiki == clean[state], f"killed at event {moment}: an index of the {state} corpus with another wiki"
        seen.add(state)
        assert quiet_main(argv)[0] == 0                  # the rerun finishes the switch
        assert served_state()[1] == clean["new"]
    assert seen == {"old", "new"}, "the kills never fell on both sides of the switch"


def test_compile_wiki_killed_at_random_moments_switches_graph_and_pages_together(home, corpora):
    old, new, clean = corpora
    folder = home / "home" / "kb" / "wiki"
    seen = set()
    for moment in killed_runs(home, old, ["compile-wiki", "--corpus", str(new), "--wiki", str(folder)]):
        wiki = served_state()[1]
        assert wiki in (clean["old"], clean["new"]), f"killed at event {moment}: graph and pages of two states"
        assert wiki_state(folder) in (clean["old"], clean["new"])      # the published link too
        seen.add("old" if wiki == clean["old"] else "new")
    assert seen == {"old", "new"}


def test_an_incremental_update_removes_the_alias_a_deleted_document_gave(home, corpora):
    old, new, clean = corpora
    assert quiet_main(["index", "--corpus", str(old), "--name", "kb", "--no-dense"])[0] == 0
    assert quiet_main(["index", "--corpus", str(new), "--name", "kb", "--no-dense"])[0] == 0
    assert served_state()[1] == clean["new"]            # incremental == compiled from scratch
    guide = home / "guide"
    guide.mkdir()
    for stem in ("install-notes", "setup-howto"):        # two files, one title: one entity, each file's name an alias
        (guide / f"{stem}.md").write_text("# Installing the server\n\nRun the installer, then restart it.\n", "utf-8")
    argv = ["index", "--corpus", str(guide), "--name", "guide", "--no-dense", "--domain", "generic"]
    assert quiet_main(argv)[0] == 0
    (guide / "setup-howto.md").unlink()
    assert quiet_main(argv)[0] == 0
    forget()
    index = open_index("guide")
    graph = EntityGraph.load(pinned_wiki(index.wiki, index_wiki("guide")) / "relations.json")
    entity = graph.entity("Installing the server")
    assert entity.aliases == ("install-notes",) and graph.resolve("setup-howto") is None
