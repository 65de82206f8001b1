"""Paths of terms inside a pipeline, as errors and spans name them (a leaf: it imports nothing of the calculus)."""
from __future__ import annotations

from typing import Iterable, Mapping

Path = tuple[str, ...]


def show_path(path: Path) -> str:
    """Returns a path of terms as printed in error messages."""
    return " › ".join(path)


def merged_reads(parts: Iterable[Mapping[str, Path]]) -> dict[str, Path]:
    """Returns the union of free-read maps, keeping the first path seen for a field."""
    out: dict[str, Path] = {}
    for part in parts:
        for field, path in part.items():
            out.setdefault(field, path)
    return out


def prefixed(reads: Mapping[str, Path], segment: str) -> dict[str, Path]:
    """Returns free reads with `segment` put in front of every path."""
    return {field: (segment, *path) for field, path in reads.items()}
