"""`Lam`: an LLM call with a validated, structured output and a deterministic offline fallback."""
from __future__ import annotations

import inspect
import json
import math
import re
import string
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import BudgetSkipped, CompositionError, ContextOverflow, InvalidOutput, ProviderError, ProviderTimeout
from .state import State
from .stream import Attempt, FieldText, Sink, live_text
from .paths import Path
from .term import Term
from .declare import CTX, Contract, contract_of, is_record, record_fields
from .tool import ATTEMPTS, Atom, Fields, Tool, field_set, typed

if TYPE_CHECKING:
    from .cost import CostModel
    from .runtime import Context



class Reply(BaseModel):
    """Base of an LLM's structured reply. Its validator and schema are built on first use, not at import:
    offline runs never ask an LLM, so a CLI question does not pay for the schemas of every LLM skill."""

    model_config = ConfigDict(defer_build=True)


Output = Union[type[BaseModel], type[str]]
_FENCED = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.S)


def json_object(text: str) -> Optional[dict[str, Any]]:
    """Returns the JSON object a reply holds — the whole reply, a code-fenced block, or the first object inside
    prose — or None when it holds none (an endpoint without structured output wraps its JSON as it likes)."""
    text = text.strip()
    decoder = json.JSONDecoder()
    for body in (text, *_FENCED.findall(text)):
        try:
            data = json.loads(body.strip())
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    for m in re.finditer(r"\{", text):
        try:
            data, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


SCHEMA_NOTE = ("Output only one JSON object that fills the following JSON Schema (fill in the values, do not copy "
               "the schema), and nothing else:\n{schema}")
"""How a structured output is asked for when the prompt says nothing of its own (`Prompt.schema_note`)."""


@dataclass(frozen=True)
class Prompt:
    """The messages of one LLM call: a system message and a user message (``str.format`` templates over the fields
    the term reads), and the line that asks for a structured output's JSON (``{schema}`` is its JSON schema)."""

    system: str
    user: str
    schema_note: str = SCHEMA_NOTE
    empty: str = "（无）"
    """How a field holding nothing reads in the prompt's language."""


PromptSource = Callable[[Any, Optional["Context"]], Prompt]
"""Returns the `Prompt` of one run from the state and the run's context (e.g. the corpus profile's
prompt in the question's language, or the configuration's override of it)."""


def render(value: Any, empty: str = "（无）") -> str:
    """Returns a state value as prompt text: records as JSON, sequences as numbered lines, nothing as `empty`."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_defaults=True)
    if isinstance(value, (tuple, list)):
        return "\n".join(f"[{i}] {render(v, empty)}" for i, v in enumerate(value, 1)) or empty
    if value is None:
        return empty
    return json.dumps(value, ensure_ascii=False, default=str)


SCHEMA_KEYS = frozenset({"properties", "$defs", "$schema", "required", "additionalProperties"})
"""Keys of a JSON schema: a reply object holding them (and no output field) echoes the schema instead of filling it."""


def parse_reply(text: str, output: Output, required: Iterable[str] = ()) -> Any:
    """Returns the reply validated against `output`, or raises `InvalidOutput` saying why.

    A structured reply fails when it is not one JSON object, echoes the schema,
    carries keys `output` does not declare, leaves a `required` field empty, or
    does not validate.
    """
    if output is str:
        if not text.strip():
            raise InvalidOutput("LLM returned an empty reply")
        return text.strip()
    data = json_object(text)
    if data is None:
        raise InvalidOutput(f"LLM reply holds no JSON object: {text[:80]!r}")
    fields = {f.alias or name for name, f in output.model_fields.items()}  # type: ignore[union-attr]
    unknown = sorted(set(data) - fields)
    if unknown and SCHEMA_KEYS & set(unknown):
        raise InvalidOutput(f"LLM reply echoes the JSON schema of {output.__name__} instead of filling it")
    if unknown:
        raise InvalidOutput(f"LLM reply carries keys {output.__name__} does not have: {', '.join(unknown)}")
    try:
        value = output.model_validate(data)  # type: ignore[union-attr]
    except ValidationError as e:
        first = e.errors()[0]
        raise InvalidOutput(f"LLM reply does not match {output.__name__}: {first['msg']} at "
                            f"{'.'.join(map(str, first['loc'])) or 'root'}") from None
    empty = [f for f in required if not getattr(value, f)]
    if empty:
        raise InvalidOutput(f"LLM reply leaves {', '.join(empty)} empty, which {output.__name__} requires")
    return value


def shrink_longest(values: dict[str, str], share: float) -> dict[str, str]:
    """Returns `values` with the longest one cut to `share` of its length (a context that overflowed the model)."""
    if share >= 1 or not values:
        return values
    longest = max(values, key=lambda k: len(values[k]))
    return {**values, longest: values[longest][:int(len(values[longest]) * share)]}


def record_writes(name: str, writes: Any) -> dict[str, Any]:
    """Returns field → type of a Lam's writes, declared one way: a record type of the fields it writes (its
    `output` model itself, or the record its `parse` returns), as a typed tool's return declares them."""
    if not is_record(writes):
        raise CompositionError(f"Lam {name!r}: writes must be the record of the fields it writes (a TypedDict, "
                               f"dataclass, NamedTuple or pydantic model, e.g. its output model), got {writes!r}")
    return record_fields(name, writes)


OFFLINE = "no LLM configured"
"""The mode a Lam runs in without an LLM: its fallback is the offline path, not a failure."""


def template_fields(template: str) -> frozenset[str]:
    """Returns the field names a ``str.format`` template uses (``{a.b}`` and ``{a[0]}`` use ``a``)."""
    return frozenset(f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template) if f)


class Lam(Atom):
    """Returns a term that asks the configured LLM and writes its validated answer.

    The prompt is a `str.format` template over the fields the term reads (the
    user message, after `system`), or a `PromptSource` giving the run's `Prompt`
    (e.g. the corpus profile's, in the question's language). With no LLM
    configured the `fallback` term runs as the offline mode (the trace notes
    ``mode``; no fallback is recorded, since nothing failed); with one configured, a timeout,
    HTTP error or invalid reply is retried once and then the fallback runs. The
    trace records the reason either way. A timeout is not retried (the same
    prompt would wait as long again), a context overflow is retried once with
    the longest prompt field halved, and a reply cut at `max_tokens` is invalid.
    With a budget in the context (`lambdarag.budget`) a call it cannot cover is
    not made. `required` output fields must be non-empty. `optional` fields may appear in the
    prompt without being checked when the term is closed (as for `Tool`).
    `given` names prompt fields the run's context supplies (``{field: function of the Context}``, e.g. the
    corpus profile's wording). `parse(output, state)` maps the
    validated output to the fields written (a `parse` with a ``ctx`` parameter also gets the run's context, as a
    tool's function does); by default a model's fields of the
    same names are written, or the text itself to the single written field.
    `writes` is the record of the fields it writes, with their types: the
    `output` model itself, or the record `parse` returns (the one way, as a
    typed tool's return). A plain function as `fallback` takes the Lam's reads
    as parameters and inherits its contract; a typed tool as `fallback` gives
    the Lam its configuration (`configured`, `parameters`).
    `stream` names the written text field that streams (the answer term's):
    on a streaming run its text is emitted as tokens while the model writes it
    (see `lambdarag.stream`), or sentence by sentence from the fallback.
    """

    __slots__ = ("name", "prompt", "output", "parse", "given", "system", "max_tokens", "required", "stream")
    effect = "llm"

    def __init__(
        self,
        name: str,
        prompt: Union[str, PromptSource],
        *,
        output: Output = str,
        reads: Fields = (),
        writes: Any,
        optional: Fields = (),
        fallback: Union[Term, Callable[..., Mapping[str, Any]]],
        parse: Optional[Callable[..., Mapping[str, Any]]] = None,
        given: Optional[Mapping[str, Callable[[Optional["Context"]], str]]] = None,
        system: str = "",
        max_tokens: int = 512,
        required: Iterable[str] = (),
        stream: Optional[str] = None,
    ) -> None:
        self.name = name
        self.prompt = prompt
        self.output = output
        writes = record_writes(name, writes)
        if not isinstance(fallback, Term) and callable(fallback):  # the offline path of the same contract
            like = Contract.of({f: Any for f in [*reads, *optional]} | typed(optional) | typed(reads), typed(writes))
            fallback = Tool(fallback.__name__, fallback, reads=reads, writes=writes, optional=optional,
                            contract=contract_of(fallback, like=like))
        if not isinstance(fallback, Term):
            raise CompositionError(f"Lam {name!r}: fallback must be a Term (every Lam needs an offline fallback)")
        self._declare(name, reads, writes, optional, fallback)
        self.parse = parse
        self.given = dict(given or {})
        self.system = system
        self.max_tokens = max_tokens
        self.required = field_set(name, "required", required)
        self.stream = stream
        self._check()

    def _check(self) -> None:
        name = self.name
        if self.stream is not None and self.stream not in self._writes:
            raise CompositionError(f"Lam {name!r}: stream={self.stream!r} must be one of its writes {sorted(self._writes)}")
        unknown = template_fields(self.prompt if isinstance(self.prompt, str) else "") - self.variables()
        if unknown:
            raise CompositionError(f"Lam {name!r}: prompt uses {sorted(unknown)} but reads only {sorted(self._reads)}")
        if self.parse is None:
            if self.output is str and len(self._writes) != 1:
                raise CompositionError(f"Lam {name!r}: a text output needs exactly one written field or parse=...")
        if self.output is not str:
            unknown = self.required - set(self.output.model_fields)  # type: ignore[union-attr]
            if unknown:
                raise CompositionError(f"Lam {name!r}: required {sorted(unknown)} are not fields of "
                                       f"{self.output.__name__}")
            if self.parse is None:
                missing = self._writes - set(self.output.model_fields)  # type: ignore[union-attr]
                if missing:
                    raise CompositionError(
                        f"Lam {name!r}: output {self.output.__name__} has no fields {sorted(missing)}; pass parse=...")

    @property
    def parameters(self) -> frozenset[str]:
        """Returns the configuration keys it takes: its fallback's (the offline path is what is configured)."""
        return frozenset(getattr(self.fallback, "parameters", ()))

    def configured(self, **params: Any) -> "Lam":
        """Returns this Lam with its fallback configured by `params` (see `Tool.configured`)."""
        if not self.parameters:
            return self
        return self.replaced(fallback=self.fallback.configured(**params))  # type: ignore[union-attr,return-value]

    def variables(self) -> frozenset[str]:
        """Returns the names its prompt may use: the fields it reads (optional ones too) and its `given` fields."""
        return frozenset(self._reads | self.optional | set(self.given))

    def _effect_signature(self) -> str:
        return "llm"

    def _cost(self, model: "CostModel") -> float:
        """Returns the per-call prices of both attempts and the fallback.

        Token prices are left out: the rendered prompt's length is unknown
        before the run, so no honest bound exists; the trace charges the tokens
        each reply reports.
        """
        return ATTEMPTS * model.call_cost(self.name, "llm") + self.fallback._cost(model)

    def output_schema(self) -> Optional[dict[str, Any]]:
        """Returns the JSON schema of a structured output (None for text); `schema` is the State schema of its
        writes, as every term's."""
        return None if self.output is str else self.output.model_json_schema()  # type: ignore[union-attr]

    def prompt_of(self, state: State, ctx: Optional["Context"] = None) -> Prompt:
        """Returns the run's prompt: its template as the user message, or what its `PromptSource` gives."""
        if isinstance(self.prompt, str):
            return Prompt(self.system, self.prompt)
        return self.prompt(state, ctx)

    def messages(self, state: State, share: float = 1.0, ctx: Optional["Context"] = None) -> list[dict[str, str]]:
        """Returns the chat messages for `state` under `ctx`: the system message (when the prompt has one) and the
        user message, which ends with the JSON schema's note if the output is structured.

        `share` < 1 cuts the longest field to that share (a retry after a context overflow).
        """
        prompt = self.prompt_of(state, ctx)
        values = shrink_longest({f: render(getattr(state, f, None), prompt.empty)
                                 for f in self._reads | self.optional}, share)
        values.update({f: give(ctx) for f, give in self.given.items()})
        text = prompt.user.format_map(values)
        if self.output is not str:
            text += "\n\n" + prompt.schema_note.replace("{schema}", json.dumps(self.output_schema(), ensure_ascii=False))
        system = prompt.system.format_map(values)
        return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]

    def _writes_of(self, value: Any, state: State, ctx: "Context") -> Mapping[str, Any]:
        if self.parse is not None:
            if CTX in inspect.signature(self.parse).parameters:
                return self.parse(value, self._view(state), ctx=ctx)
            return self.parse(value, self._view(state))
        if self.output is str:
            return {next(iter(self._writes)): value}
        return {f: getattr(value, f) for f in self._writes}

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        from .runtime import apply_writes

        sink = live_text() if self.stream else None
        if ctx.llm is None:
            out = self._degrade(state, ctx, path, OFFLINE, mode=True)
        else:
            failures: list[str] = []
            share = 1.0
            for attempt in range(1, ATTEMPTS + 1):
                try:
                    value, streaming = self._ask(state, ctx, path, share, sink)
                    ctx.trace.note(path, attempts=attempt, path_taken="llm")
                    out = apply_writes(self, state, self._writes_of(value, state, ctx), path)
                    if streaming is not None:
                        self._settle(streaming, out)
                    return out
                except BudgetSkipped as e:
                    failures.append(str(e))
                    break
                except ProviderError as e:
                    failures.append(f"attempt {attempt}: {e}")
                    if isinstance(e, ProviderTimeout):
                        break   # the same prompt would wait as long again
                    share = 0.5 if isinstance(e, ContextOverflow) else share
            out = self._degrade(state, ctx, path, "; ".join(failures))
        if sink is not None:
            Attempt(sink, self.stream, state, ctx, path).replay(getattr(out, self.stream))
        return out

    def _ask(self, state: State, ctx: "Context", path: Path, share: float,
             sink: Optional[Sink]) -> tuple[Any, Optional[Attempt]]:
        """Returns the validated output of one call and, on a streaming run, its attempt (text fed as the model
        writes it); raises a `ProviderError` for any failure, after retracting what the attempt released."""
        configured = getattr(ctx.llm, "timeout", math.inf)
        wait = ctx.call_timeout("llm", configured)
        if ctx.llm_budget is not None:
            wait = ctx.llm_budget.admit(self.name, getattr(state, "query_type", None), wait)
        ctx.trace.add_cost(path, ctx.cost_model.call_cost(self.name, "llm"))
        streaming = Attempt(sink, self.stream, state, ctx, path) if sink is not None else None
        started = time.monotonic()
        try:
            reply = self._call(ctx, self.messages(state, share, ctx), wait, streaming)
            ctx.trace.add_cost(path, ctx.cost_model.tokens_cost(reply.tokens), reply.tokens)
            if self.output is not str:
                ctx.trace.note(path, response_format=getattr(reply, "response_format", "json_schema"))
            if getattr(reply, "finish_reason", "stop") == "length":
                raise InvalidOutput(f"LLM reply was cut at max_tokens={self.max_tokens} (finish_reason: length)")
            return parse_reply(reply.text, self.output, self.required), streaming
        except ProviderError as e:
            if isinstance(e, ProviderTimeout) and wait >= configured:
                ctx.down.setdefault("llm", f"it timed out in {self.name!r}")  # a hanging endpoint eats every deadline
            if streaming is not None:
                streaming.retract(str(e))
            raise
        finally:
            if ctx.llm_budget is not None:
                ctx.llm_budget.spent(self.name, started)

    def _call(self, ctx: "Context", messages: list[dict[str, str]], wait: float, streaming: Optional[Attempt]) -> Any:
        """Returns the model's reply; with a streaming attempt (and a client that streams), its text is fed to the
        attempt as the model writes it."""
        schema = self.output_schema()
        if streaming is None or not hasattr(ctx.llm, "stream"):
            return ctx.llm.complete(messages, schema=schema, max_tokens=self.max_tokens, timeout=wait)
        decode = FieldText(self.stream).feed if schema is not None else str
        return ctx.llm.stream(messages, lambda chunk: streaming.feed(decode(chunk)), schema=schema,
                              max_tokens=self.max_tokens, timeout=wait)

    def _settle(self, streaming: Attempt, out: State) -> None:
        """Ends a streamed attempt; when validation rewrote the text, retracts it and streams the final text."""
        streaming.finish()
        final = getattr(out, self.stream)
        if streaming.raw != final:
            streaming.retract(f"{self.name}: the text was rewritten after validation")
            Attempt(streaming.sink, self.stream, streaming.state, streaming.ctx, streaming.path).replay(final)

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.prompt, self.output, self._reads, self._writes, self.fallback, self.parse,
                tuple(self.given.items()),
                self.required, self.stream)

    def __repr__(self) -> str:
        return f"Lam({self.name!r}, reads={sorted(self._reads)}, writes={sorted(self._writes)}, fallback={self.fallback!r})"

