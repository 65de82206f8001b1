"""Per-object derived tables (skills.store.derived): built once per object, rebuilt when its stamp moves, dropped with it."""
import gc

from lambdarag.skills.store.derived import PerObject


class Owner:
    version = 0


def test_built_once_per_object_and_again_when_its_version_moves():
    builds = []
    table = PerObject(lambda owner: builds.append(owner) or len(builds))
    a, b = Owner(), Owner()
    assert (table(a), table(a), table(b)) == (1, 1, 2)
    a.version += 1
    assert table(a) == 3 and table(b) == 2
    assert len(builds) == 3


def test_dropped_with_its_object():
    table = PerObject(lambda owner: [0] * 10, stamp=lambda owner: 0)
    owner = Owner()
    table(owner)
    del owner
    gc.collect()
    assert len(table._cache) == 0
