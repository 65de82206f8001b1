"""`Lam`: an LLM call with a validated, structured output and a deterministic offline fallback."""
from __future__ import annotations

import json
import math
import re
import string
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Union

from pydantic import BaseModel, ValidationError

from .errors import CompositionError, InvalidOutput, ProviderError, ProviderTimeout
from .state import ReadView, State
from .stream import Attempt, FieldText, live
from .term import Path, Term
from .tool import ATTEMPTS, Atom

if TYPE_CHECKING:
    from .cost import CostModel
    from .runtime import Context

Output = Union[type[BaseModel], type[str]]
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)


def render(value: Any) -> str:
    """Returns a state value as prompt text: records as JSON, sequences as numbered lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_defaults=True)
    if isinstance(value, (tuple, list)):
        return "\n".join(f"[{i}] {render(v)}" for i, v in enumerate(value, 1)) or "（无）"
    if value is None:
        return "（无）"
    return json.dumps(value, ensure_ascii=False, default=str)


def parse_reply(text: str, output: Output) -> Any:
    """Returns the reply validated against `output`, or raises `InvalidOutput` saying why."""
    if output is str:
        if not text.strip():
            raise InvalidOutput("LLM returned an empty reply")
        return text.strip()
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise InvalidOutput(f"LLM reply is not a JSON object: {text[:80]!r}")
    try:
        return output.model_validate_json(body[start:end + 1])  # type: ignore[union-attr]
    except ValidationError as e:
        first = e.errors()[0]
        raise InvalidOutput(f"LLM reply does not match {output.__name__}: {first['msg']} at "
                            f"{'.'.join(map(str, first['loc'])) or 'root'}") from None


class Lam(Atom):
    """Returns a term that asks the configured LLM and writes its validated answer.

    The prompt is a `str.format` template over the fields the term reads. With
    no LLM configured the `fallback` term runs; with one configured, a timeout,
    HTTP error or invalid reply is retried once and then the fallback runs. The
    trace records the reason either way. `optional` fields may appear in the
    prompt without being checked when the term is closed (as for `Tool`).
    `parse(output, state)` maps the
    validated output to the fields written; by default a model's fields of the
    same names are written, or the text itself to the single written field.
    `stream` names the written text field that streams (the answer term's):
    on a streaming run its text is emitted as tokens while the model writes it
    (see `lambdarag.stream`), or sentence by sentence from the fallback.
    """

    __slots__ = ("name", "prompt", "output", "parse", "system", "max_tokens", "stream")

    def __init__(
        self,
        name: str,
        prompt: str,
        *,
        output: Output = str,
        reads: Iterable[str] = (),
        writes: Iterable[str] = (),
        optional: Iterable[str] = (),
        fallback: Term,
        parse: Optional[Callable[[Any, State], Mapping[str, Any]]] = None,
        system: str = "",
        max_tokens: int = 512,
        stream: Optional[str] = None,
    ) -> None:
        self.name = name
        self.prompt = prompt
        self.output = output
        if not isinstance(fallback, Term):
            raise CompositionError(f"Lam {name!r}: fallback must be a Term (every Lam needs an offline fallback)")
        self._declare(name, reads, writes, optional, fallback)
        self.parse = parse
        self.system = system
        self.max_tokens = max_tokens
        self.stream = stream
        self._check()

    def _check(self) -> None:
        name = self.name
        if self.stream is not None and self.stream not in self._writes:
            raise CompositionError(f"Lam {name!r}: stream={self.stream!r} must be one of its writes {sorted(self._writes)}")
        placeholders = {f for _, f, _, _ in string.Formatter().parse(self.prompt) if f}
        unknown = {p.split(".")[0].split("[")[0] for p in placeholders} - self._reads - self.optional
        if unknown:
            raise CompositionError(f"Lam {name!r}: prompt uses {sorted(unknown)} but reads only {sorted(self._reads)}")
        if self.parse is None:
            if self.output is str and len(self._writes) != 1:
                raise CompositionError(f"Lam {name!r}: a text output needs exactly one written field or parse=...")
            if self.output is not str:
                missing = self._writes - set(self.output.model_fields)  # type: ignore[union-attr]
                if missing:
                    raise CompositionError(
                        f"Lam {name!r}: output {self.output.__name__} has no fields {sorted(missing)}; pass parse=...")

    def effect_signature(self) -> str:
        return "llm"

    def _cost(self, model: "CostModel") -> float:
        """Returns the per-call prices of both attempts and the fallback.

        Token prices are left out: the rendered prompt's length is unknown
        before the run, so no honest bound exists; the trace charges the tokens
        each reply reports.
        """
        return ATTEMPTS * model.call_cost(self.name, "llm") + self.fallback._cost(model)

    def messages(self, state: State) -> list[dict[str, str]]:
        """Returns the chat messages for `state`: the rendered prompt, plus the JSON schema if structured."""
        text = self.prompt.format_map({f: render(getattr(state, f, None)) for f in self._reads | self.optional})
        if self.output is not str:
            schema = json.dumps(self.output.model_json_schema(), ensure_ascii=False)  # type: ignore[union-attr]
            text += f"\n\n只输出一个符合以下 JSON Schema 的 JSON 对象，不要输出其他内容：\n{schema}"
        msgs = [{"role": "system", "content": self.system}] if self.system else []
        return msgs + [{"role": "user", "content": text}]

    def _writes_of(self, value: Any, state: State) -> Mapping[str, Any]:
        if self.parse is not None:
            return self.parse(value, ReadView(state, self._visible, self.name))
        if self.output is str:
            return {next(iter(self._writes)): value}
        return {f: getattr(value, f) for f in self._writes}

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        from .runtime import apply_writes

        sink = live() if self.stream else None
        reason = "no LLM configured"
        if ctx.llm is not None:
            failures = []
            for attempt in range(1, ATTEMPTS + 1):
                streaming = Attempt(sink, self.stream, state, ctx, path) if sink is not None else None
                try:
                    wait = ctx.call_timeout("llm", getattr(ctx.llm, "timeout", math.inf))
                    ctx.trace.add_cost(path, ctx.cost_model.call_cost(self.name, "llm"))
                    reply = self._ask(ctx, state, wait, streaming)
                    ctx.trace.add_cost(path, ctx.cost_model.tokens_cost(reply.tokens), reply.tokens)
                    value = parse_reply(reply.text, self.output)
                    ctx.trace.note(path, attempts=attempt, path_taken="llm")
                    out = apply_writes(self, state, self._writes_of(value, state), path)
                    if streaming is not None:
                        self._settle(streaming, out)
                    return out
                except ProviderError as e:
                    failures.append(f"attempt {attempt}: {e}")
                    timed_out = isinstance(e, ProviderTimeout)
                    if streaming is not None:
                        streaming.retract(f"attempt {attempt}: {e}")
            if timed_out:  # a hanging endpoint would eat the deadline of every later Lam: skip it from now on
                ctx.down.setdefault("llm", f"it timed out in {self.name!r}")
            reason = "; ".join(failures)
        out = self._degrade(state, ctx, path, reason)
        if sink is not None:
            Attempt(sink, self.stream, state, ctx, path).replay(getattr(out, self.stream))
        return out

    def _ask(self, ctx: "Context", state: State, wait: float, streaming: Optional[Attempt]) -> Any:
        """Returns the model's reply; with a streaming attempt, its text is fed to it as the model writes it."""
        json_mode = self.output is not str
        messages = self.messages(state)
        if streaming is None or not hasattr(ctx.llm, "stream"):
            return ctx.llm.complete(messages, json_mode=json_mode, max_tokens=self.max_tokens, timeout=wait)
        decode = FieldText(self.stream).feed if json_mode else str
        return ctx.llm.stream(messages, lambda chunk: streaming.feed(decode(chunk)), json_mode=json_mode,
                              max_tokens=self.max_tokens, timeout=wait)

    def _settle(self, streaming: Attempt, out: State) -> None:
        """Ends a streamed attempt; when validation rewrote the text, retracts it and streams the final text."""
        streaming.finish()
        final = getattr(out, self.stream)
        if streaming.raw != final:
            streaming.retract(f"{self.name}: the text was rewritten after validation")
            Attempt(streaming.sink, self.stream, streaming.state, streaming.ctx, streaming.path).replay(final)

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.prompt, self.output, self._reads, self._writes, self.fallback, self.parse, self.stream)

    def __repr__(self) -> str:
        return f"Lam({self.name!r}, reads={sorted(self._reads)}, writes={sorted(self._writes)}, fallback={self.fallback!r})"

