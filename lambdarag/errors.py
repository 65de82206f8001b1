"""Every exception LambdaRAG raises, in one hierarchy.

Each message says which term or field is at fault and how to fix it, so a
user can act on it without reading the source.
"""
from __future__ import annotations

from difflib import get_close_matches
from typing import Iterable


class LambdaRAGError(Exception):
    """Base of every LambdaRAG error."""


class CompositionError(LambdaRAGError):
    """A pipeline's wiring is wrong: a read no term satisfies, overlapping writes, bad arguments."""


class TypeClash(CompositionError):
    """Two terms of a pipeline declare one field with types that do not fit (a writer and a reader, or two writers);
    found when the pipeline is closed. `field` is the field, `terms` the two terms' names."""

    def __init__(self, message: str, *, field: str = "", terms: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.field = field
        self.terms = terms


class TermError(LambdaRAGError):
    """A term failed while running; names the term and its path in the pipeline.

    `internal` is true when the term raised an exception outside this hierarchy: a fault in the
    code (ours or a plugin's), not in the query, which the CLI reports with the service exit code
    and a server as 500 for that request alone.
    """

    def __init__(self, message: str, *, term: str = "", path: str = "", internal: bool = False) -> None:
        super().__init__(message)
        self.term = term
        self.path = path
        self.internal = internal


class BranchError(TermError):
    """A branch of `Par` or `Map` failed; the message names the branch."""


class UndeclaredRead(TermError):
    """A term read a State field it does not declare in `reads=` or `optional=`."""


class DeadlineExceeded(TermError):
    """The context's deadline passed before the named term could finish."""


class BudgetExceeded(LambdaRAGError):
    """A pipeline's cost bound exceeds the budget and no fallback is configured."""


class ConfigError(LambdaRAGError):
    """Configuration is missing or invalid; the message names the key and the valid choices."""


class UntrustedConfig(ConfigError):
    """A config the user did not name or approve (found in the working folder) sets a key that imports code, reads
    a secret or chooses an endpoint; the message says how to trust it (`lambdarag trust`, --config)."""


class DeclarationError(ConfigError):
    """A declared expression (``expr:``) does not parse or build; `column` is where, 1-based in the expression."""

    def __init__(self, message: str, *, column: int = 1) -> None:
        super().__init__(message)
        self.column = column


class ProviderError(LambdaRAGError):
    """An LLM, embedding or rerank endpoint failed or is misconfigured."""


class ProviderTimeout(ProviderError):
    """The endpoint did not answer within its timeout."""


class ProviderHTTPError(ProviderError):
    """The endpoint answered with an HTTP error status."""


class ContextOverflow(ProviderHTTPError):
    """The endpoint refused the prompt as longer than the model's context (HTTP 400); retry with less context."""


class ProviderBadReply(ProviderError):
    """The endpoint answered 200 with a body that is not JSON or not in the API's schema."""


class InvalidOutput(ProviderError):
    """The LLM answered, but its reply does not validate against the term's output model."""


class BudgetSkipped(ProviderError):
    """The query's LLM budget (calls or time) cannot cover this call; the term runs its offline path uncalled."""


class QueryError(LambdaRAGError):
    """The query itself is unusable (empty, too long)."""


class StoreCorrupt(LambdaRAGError):
    """A persisted store (e.g. wiki/relations.json) cannot be read; names the file and position. The file is left as is."""


class StoreUnavailable(LambdaRAGError):
    """The feedback store's database cannot be opened (PostgreSQL unreachable, psycopg not installed); names the
    engine and what to fix."""


class ResidentUnavailable(LambdaRAGError):
    """The resident answerer cannot listen here: its socket is taken, not this user's, too long, or peers cannot be
    checked."""


class ResidentRefused(LambdaRAGError):
    """A request the resident answerer does not answer (not an `ask` it serves, another environment, another
    protocol); the client answers it in-process."""


class FeedbackRefused(LambdaRAGError):
    """A vote broke the feedback trust boundary (not an answer shown to this caller, a chunk it did not cite or show,
    a chunk the caller may not read); the message names the rule and echoes nothing the caller sent."""


class FeedbackRateLimited(FeedbackRefused):
    """A source sent more votes than `orchestration.feedback.votes.rateLimit` allows in its window."""


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    """Returns "did you mean 'x'? " for the closest of `valid` to a mistyped `name`, or "" when none is close."""
    close = get_close_matches(name, list(valid), n=1, cutoff=0.75)
    return f"did you mean {close[0]!r}? " if close else ""
