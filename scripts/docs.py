"""Generates the documentation's tables from the code: python scripts/docs.py [--check].

docs/configuration.md holds the configuration reference (from the schema) and docs/architecture.md the map of
every module (from its docstring's first line), each between markers; tests/test_docs.py keeps both equal to
what this prints, so the pages never describe code that is not there. --check exits 1 when a page differs.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LAYERS = ("lambdarag", "skills", "patterns", "domains", "orchestration", "qademo")
"""Folders in the order of the layers, the calculus first (each is a package of the one `lambdarag` namespace)."""


def module_map() -> str:
    """Returns a markdown table: every module, its import name and the first line of its docstring."""
    rows = ["| module | what it holds |", "|---|---|"]
    for top in LAYERS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            name = ".".join(parts if parts[0] == "lambdarag" else ("lambdarag", *parts))
            doc = (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split("\n")[0]
            cell = doc.replace("|", "\\|")
            rows.append(f"| `{name}` | {cell} |")
    return "\n".join(rows)


def config_reference() -> str:
    """Returns the configuration reference table (every key, its type, default and meaning), from the schema."""
    from lambdarag.orchestration.config_reference import reference

    return reference()


BLOCKS = {"architecture.md": ("module-map", module_map), "configuration.md": ("config-reference", config_reference)}
"""Page → (marker name, generator) of each generated block."""


def block(text: str, marker: str) -> str | None:
    """Returns what stands between a page's ``<!-- marker:start -->`` and ``<!-- marker:end -->`` (None without)."""
    found = re.search(rf"<!-- {marker}:start -->\n(.*?)<!-- {marker}:end -->", text, re.S)
    return found.group(1).strip() if found else None


def main(argv: list[str]) -> int:
    stale = []
    for page, (marker, make) in BLOCKS.items():
        path = DOCS / page
        text, fresh = path.read_text(encoding="utf-8"), make().strip()
        if block(text, marker) == fresh:
            continue
        stale.append(page)
        if "--check" not in argv:
            start, end = f"<!-- {marker}:start -->\n", f"<!-- {marker}:end -->"
            path.write_text(re.sub(rf"{re.escape(start)}.*?{re.escape(end)}", lambda _: f"{start}{fresh}\n{end}",
                                   text, flags=re.S), encoding="utf-8")
    if stale:
        print(("stale: " if "--check" in argv else "regenerated: ") + ", ".join(stale))
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
