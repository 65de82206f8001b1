"""A regular expression compiled at its first use, for the large cue tables a question of another language or
another corpus pack never reads: compiling one of them costs milliseconds (a CJK range is expanded character by
character), more than the question that skips it spends on matching.
"""
from __future__ import annotations

import re
import threading
from typing import Any, Optional


class LazyPattern:
    """Returns what `re.compile(pattern, flags)` would, compiling on the first match, not at import:
    ``LazyPattern(r"\\boverview\\b", re.I).search("An overview")``. `pattern` and `flags` read without compiling."""

    __slots__ = ("pattern", "flags", "_compiled", "_lock")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: Optional[re.Pattern[str]] = None
        self._lock = threading.Lock()

    def compiled(self) -> re.Pattern[str]:
        """Returns the compiled pattern, compiling it once (under a lock: questions run on several threads)."""
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, string: str, *args: int) -> Optional[re.Match[str]]:
        return self.compiled().search(string, *args)

    def findall(self, string: str, *args: int) -> list[Any]:
        return self.compiled().findall(string, *args)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
