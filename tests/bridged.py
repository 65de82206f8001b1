"""What the bridge tests share: a patient config, a privileged user, and the check that a missing extra is named."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

import pytest

from lambdarag import User
from tests.test_search import config_with

PATIENT = config_with(limits__timeoutSeconds=300)
"""The default config with a deadline a loaded machine meets (the bridges' runs open the demo index)."""
PORT = User(id="port", departments=("港口处",), security_level=2)


def missing_extra_is_named(monkeypatch: pytest.MonkeyPatch, module: ModuleType, framework: str, extra: str) -> None:
    """Checks that loading the bridge `module` while `framework` cannot be imported names the extra to install."""
    monkeypatch.setitem(sys.modules, framework, None)
    with pytest.raises(ImportError, match=rf"pip install 'lambdarag\[{extra}\]'"):
        importlib.reload(module)
    monkeypatch.undo()
    importlib.reload(module)
