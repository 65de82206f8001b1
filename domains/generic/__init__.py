"""The generic pack: a corpus profile for markdown, plain text and JSONL of any kind, in Chinese or English."""
from __future__ import annotations

from skills.profile import CorpusProfile


class GenericProfile(CorpusProfile):
    """Any documents: sections are the units, titles and headings are the named things, no priors."""

    name = "generic"

    def tokenizer_options(self) -> dict:
        return {"english": "snowball"}
