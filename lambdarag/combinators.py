"""The combinators over `Identity` and `Compose` (``>>``, in `lambdarag.term`): `Par`, `If`, `Route`, `Guard`, `Map`, `Named`.

Each is a small immutable value: constructors normalise and check wiring,
`_eval` says what one run does, and the runtime does the tracing, the
concurrency and the deadlines.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence, get_origin

from .errors import CompositionError, TermError
from .state import INITIAL_FIELDS, State
from .paths import Path, merged_reads, prefixed, show_path
from .runtime import apply_writes, concurrently, execute
from .observe import observer
from .term import Compose, Identity, Term, frozen, need_term, show_value

if TYPE_CHECKING:
    from .cost import CostModel
    from .runtime import Context


def _wrap(sig: str) -> str:
    """Returns an effect signature parenthesised when it is a sequence."""
    return f"({sig})" if " · " in sig and not (sig.startswith("(") and sig.endswith(")")) else sig


def _sole_write(owner: str, term: Term) -> str:
    fields = term.writes()
    if len(fields) != 1:
        raise CompositionError(
            f"{owner}: the deciding term {term.lambda_form()!r} must write exactly one field, "
            f"it writes {sorted(fields) or 'none'}"
        )
    return next(iter(fields))


class Merge:
    """Returns the merged values of fields that several concurrent branches write.

    `fn(base, results)` gets the state before the branches and each branch's
    resulting state, in branch order, and returns the merged field values.
    `params` (JSON-able) say what `fn` is built from: a merge with params is
    declarable (``merge=name(k=v)``) and equals one of the same name, fields
    and params; without, it is a Python function, compared by identity.
    """

    __slots__ = ("name", "fields", "fn", "params")

    def __init__(self, name: str, fields: Iterable[str], fn: Callable[[State, Sequence[State]], Mapping[str, Any]],
                 params: Optional[Mapping[str, Any]] = None):
        self.name = name
        self.fields = frozenset(fields)
        self.fn = fn
        self.params = None if params is None else dict(params)

    def __call__(self, base: State, results: Sequence[State]) -> Mapping[str, Any]:
        return self.fn(base, results)

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.fields, self.fn if self.params is None else frozen(self.params))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Merge) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.name, self.fields))

    def form(self) -> str:
        """Returns the merge as the lambda form prints it: ``name(k=v)``, or ``‹name›`` for a Python function."""
        if self.params is None:
            return f"‹{self.name}›"
        args = ", ".join(f"{k}={show_value(v)}" for k, v in self.params.items())
        return f"{self.name}({args})" if args else self.name

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(sorted(self.fields))})"


def appended(*fields: str) -> Merge:
    """Returns a merge for tuple fields that branches extend: the base, then what each branch added, in order.

    A branch that kept the base as its prefix added what follows it; a branch
    that returned a fresh tuple added all of it (nothing is dropped).
    """
    ordered = tuple(sorted(set(fields)))
    return Merge("appended", ordered, _appending(ordered), {"fields": list(ordered)})


@functools.lru_cache(maxsize=None)
def _appending(fields: tuple[str, ...]) -> Callable[[State, Sequence[State]], Mapping[str, Any]]:
    """Returns the merge function of `appended` (one per field set: `Merge` equality compares params)."""

    def merge(base: State, results: Sequence[State]) -> Mapping[str, Any]:
        out: dict[str, Any] = {}
        for field in fields:
            start = tuple(getattr(base, field, ()) or ())
            value = list(start)
            for r in results:
                mine = tuple(getattr(r, field, ()) or ())
                value.extend(mine[len(start):] if mine[:len(start)] == start else mine)
            out[field] = tuple(value)
        return out

    return merge


def implied_merge(branches: Sequence[Term]) -> Optional[Merge]:
    """Returns the merge a declaration leaves unwritten: `appended` over the fields several branches write,
    when every branch writing such a field also reads it (extends an accumulator such as `candidates`).

    ``Par(bm25_search, embedding_search)`` thus means what it says; any other
    shared write needs an explicit ``merge=``. None when no field is shared or not all are accumulators.
    """
    writers: dict[str, list[Term]] = {}
    for b in branches:
        for field in b.writes():
            writers.setdefault(field, []).append(b)
    shared = sorted(f for f, ws in writers.items() if len(ws) > 1)
    if not shared or not all(_is_tuple_field(f) and all(f in w.sees() for w in writers[f]) for f in shared):
        return None
    return appended(*shared)


def _check_siblings(owner: str, branches: Sequence[Term], available: frozenset[str]) -> None:
    """Rejects a branch that reads a field only a sibling branch writes (it cannot see it), then checks inside each."""
    for i, b in enumerate(branches):
        own = b.writes()
        for field, path in b.free_reads().items():
            for j, other in enumerate(branches):
                if j != i and field in other.writes() and field not in own and field not in available:
                    raise CompositionError(
                        f"{owner}: branch {i} term {path[-1]!r} reads field {field!r}, which only branch {j} "
                        f"({other.lambda_form()}) writes (path: {show_path(path)}); branches do not see each "
                        f"other's writes. Compute {field!r} before the {owner.split('(')[0]}."
                    )
        b.check_branches(available)


def _check_merge_fields(owner: str, fields: frozenset[str], written: frozenset[str]) -> None:
    """Rejects a merge naming fields no branch writes (a typo, or a branch that changed)."""
    unwritten = sorted(fields - written)
    if unwritten:
        raise CompositionError(f"{owner}: the merge names {unwritten}, which no branch writes; branches write "
                               f"{', '.join(sorted(written)) or 'nothing'}")


def _is_tuple_field(name: str) -> bool:
    """Returns whether the State field `name` holds a tuple (extra fields count as such)."""
    info = State.model_fields.get(name)
    return info is None or get_origin(info.annotation) is tuple


class Par(Term):
    """Returns a term that runs its branches concurrently on the same state and merges their writes.

    Branches that write disjoint fields merge by themselves; fields written by
    more than one branch need an explicit ``merge=`` (e.g. ``appended("candidates")``).
    """

    __slots__ = ("branches", "merge", "name")

    def __init__(self, *branches: Term, merge: Optional[Merge] = None) -> None:
        if len(branches) < 2:
            raise CompositionError(f"Par needs at least two branches, got {len(branches)}")
        for i, b in enumerate(branches):
            need_term("Par", f"branch {i}", b)
        self.branches = tuple(branches)
        self.merge = merge
        self.name = "par"
        merged = merge.fields if merge else frozenset()
        _check_merge_fields(f"Par({', '.join(b.lambda_form() for b in self.branches)})", merged, self.writes())
        seen: dict[str, int] = {}
        for i, b in enumerate(self.branches):
            for field in sorted(b.writes()):
                if field in seen and field not in merged:
                    raise CompositionError(
                        f"Par: branches {seen[field]} ({self.branches[seen[field]].lambda_form()}) and {i} "
                        f"({b.lambda_form()}) both write field {field!r}; give Par a merge for it, "
                        f"e.g. Par(..., merge=appended({field!r}))"
                    )
                seen.setdefault(field, i)

    def children(self) -> tuple[Term, ...]:
        return self.branches

    def writes(self) -> frozenset[str]:
        return frozenset().union(*(b.writes() for b in self.branches))

    def free_reads(self) -> dict[str, Path]:
        return merged_reads(prefixed(b.free_reads(), f"Par[{i}]") for i, b in enumerate(self.branches))

    def check_branches(self, available: frozenset[str]) -> None:
        _check_siblings("Par", self.branches, available)

    def _form(self, expand: bool) -> str:
        merge = "" if self.merge == implied_merge(self.branches) else f", merge={self.merge.form()}"
        return f"Par({', '.join(b.form(expand) for b in self.branches)}{merge})"

    def _effect_signature(self) -> str:
        return f"({' ∥ '.join(_wrap(b.effect_signature()) for b in self.branches)})"

    def _cost(self, model: "CostModel") -> float:
        return sum(b._cost(model) for b in self.branches)

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        results = concurrently(
            [(b, state, (*path, f"Par[{i}]")) for i, b in enumerate(self.branches)], ctx, owner=self.lambda_form()
        )
        merged = set(self.merge.fields) if self.merge else set()
        updates: dict[str, Any] = {}
        for b, r in zip(self.branches, results):
            updates.update({f: getattr(r, f) for f in b.writes() if f not in merged})
        if self.merge:
            updates.update(self.merge(state, results))
        return apply_writes(self, state, updates, path)

    def _key(self) -> tuple[Any, ...]:
        return (self.branches, self.merge)

    def __repr__(self) -> str:
        extra = f", merge={self.merge!r}" if self.merge else ""
        return f"Par({', '.join(map(repr, self.branches))}{extra})"


class If(Term):
    """Returns a term that runs `cond`, then `then_` if the field it wrote is truthy, else `else_`.

    `on` names the deciding field when `cond` writes more than one.
    """

    __slots__ = ("cond", "then_", "else_", "field", "name")

    def __init__(self, cond: Term, then_: Term, else_: Term = Identity, *, on: Optional[str] = None) -> None:
        self.cond = need_term("If", "cond", cond)
        self.then_ = need_term("If", "then_", then_)
        self.else_ = need_term("If", "else_", else_)
        if on is not None and on not in cond.writes():
            raise CompositionError(f"If: cond {cond.lambda_form()!r} does not write the deciding field {on!r}")
        self.field = on or _sole_write("If", cond)
        self.name = "if"

    def children(self) -> tuple[Term, ...]:
        return (self.cond, self.then_, self.else_)

    def labelled(self) -> tuple[tuple[str, Term], ...]:
        return (("If.cond", self.cond), ("If.then", self.then_), ("If.else", self.else_))

    def writes(self) -> frozenset[str]:
        return self.cond.writes() | self.then_.writes() | self.else_.writes()

    def free_reads(self) -> dict[str, Path]:
        after = self.cond.writes()
        branches = merged_reads([prefixed(self.then_.free_reads(), "If.then"), prefixed(self.else_.free_reads(), "If.else")])
        rest = {f: p for f, p in branches.items() if f not in after}
        return merged_reads([prefixed(self.cond.free_reads(), "If.cond"), rest])

    def check_branches(self, available: frozenset[str]) -> None:
        self.cond.check_branches(available)
        _check_siblings("If", (self.then_, self.else_), available | self.cond.writes())

    def _form(self, expand: bool) -> str:
        on = "" if len(self.cond.writes()) == 1 else f", on={self.field}"
        return f"If({self.cond.form(expand)}, {self.then_.form(expand)}, {self.else_.form(expand)}{on})"

    def _effect_signature(self) -> str:
        return f"{self.cond.effect_signature()} · ({self.then_.effect_signature()} | {self.else_.effect_signature()})"

    def _cost(self, model: "CostModel") -> float:
        return self.cond._cost(model) + max(self.then_._cost(model), self.else_._cost(model))

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        state = execute(self.cond, state, ctx, (*path, "If.cond"))
        taken = bool(getattr(state, self.field))
        ctx.trace.note(path, branch="then" if taken else "else")
        branch = self.then_ if taken else self.else_
        return execute(branch, state, ctx, (*path, "If.then" if taken else "If.else"))

    def _key(self) -> tuple[Any, ...]:
        return (self.cond, self.then_, self.else_)

    def __repr__(self) -> str:
        return f"If({self.cond!r}, {self.then_!r}, {self.else_!r})"


class Route(Term):
    """Returns a term that runs `classifier`, then the route named by the label it wrote.

    ``label`` names the field holding the label; it defaults to the one field the
    classifier writes. ``Route(Identity, routes, label="query_type")`` routes on a
    field computed earlier. An unknown label takes `default`, or fails naming the
    valid labels when there is none.
    """

    __slots__ = ("classifier", "routes", "default", "label", "name")

    def __init__(
        self,
        classifier: Term,
        routes: Mapping[str, Term],
        default: Optional[Term] = None,
        *,
        label: Optional[str] = None,
    ) -> None:
        self.classifier = need_term("Route", "classifier", classifier)
        if not routes:
            raise CompositionError("Route needs at least one route")
        self.routes = tuple((str(k), need_term("Route", f"route {k!r}", v)) for k, v in routes.items())
        self.default = need_term("Route", "default", default) if default is not None else None
        self.label = label or _sole_write("Route", classifier)
        self.name = "route"

    def _alternatives(self) -> tuple[Term, ...]:
        return tuple(t for _, t in self.routes) + ((self.default,) if self.default else ())

    def children(self) -> tuple[Term, ...]:
        return (self.classifier, *self._alternatives())

    def labelled(self) -> tuple[tuple[str, Term], ...]:
        return (("Route.classifier", self.classifier), *((f"Route[{k}]", t) for k, t in self._labelled()))

    def writes(self) -> frozenset[str]:
        return frozenset().union(self.classifier.writes(), *(t.writes() for t in self._alternatives()))

    def free_reads(self) -> dict[str, Path]:
        after = self.classifier.writes()
        alts = merged_reads(prefixed(t.free_reads(), f"Route[{k}]") for k, t in self._labelled())
        own = {} if self.label in after else {self.label: ("Route",)}
        return merged_reads([prefixed(self.classifier.free_reads(), "Route.classifier"), own,
                             {f: p for f, p in alts.items() if f not in after}])

    def check_branches(self, available: frozenset[str]) -> None:
        self.classifier.check_branches(available)
        _check_siblings("Route", self._alternatives(), available | self.classifier.writes())

    def _labelled(self) -> list[tuple[str, Term]]:
        return list(self.routes) + ([("default", self.default)] if self.default else [])

    def _form(self, expand: bool) -> str:
        table = ", ".join(f"{k}: {t.form(expand)}" for k, t in self.routes)
        default = f", default={self.default.form(expand)}" if self.default else ""
        label = "" if len(self.classifier.writes()) == 1 else f", label={self.label}"
        return f"Route({self.classifier.form(expand)}, {{{table}}}{default}{label})"

    def _effect_signature(self) -> str:
        alts = list(dict.fromkeys(t.effect_signature() for t in self._alternatives()))
        choice = alts[0] if len(alts) == 1 else f"({' | '.join(alts)})"
        return f"{self.classifier.effect_signature()} · {choice}"

    def _cost(self, model: "CostModel") -> float:
        return self.classifier._cost(model) + max(t._cost(model) for t in self._alternatives())

    def choose(self, label: Any) -> tuple[str, Term]:
        """Returns the route name and term a label selects."""
        for k, t in self.routes:
            if k == label:
                return k, t
        if self.default is not None:
            return "default", self.default
        raise TermError(
            f"Route: label {label!r} in field {self.label!r} matches no route and there is no default; "
            f"valid labels: {', '.join(k for k, _ in self.routes)}",
            term="route",
        )

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        state = execute(self.classifier, state, ctx, (*path, "Route.classifier"))
        name, term = self.choose(getattr(state, self.label))
        ctx.trace.note(path, route=name, label=self.label, expression=term.form(expand=True))
        return execute(term, state, ctx, (*path, f"Route[{name}]"))

    def _key(self) -> tuple[Any, ...]:
        return (self.classifier, self.routes, self.default, self.label)

    def __repr__(self) -> str:
        return f"Route({self.classifier!r}, {dict(self.routes)!r}, default={self.default!r})"


def _verdict_passed(state: State) -> bool:
    verdict = state.verdict
    return bool(verdict is not None and verdict.passed)


def gate_of(check: Term, accept: Callable[[State], bool] = _verdict_passed) -> Callable[[State, "Context", Path], bool]:
    """Returns the stream gate that runs `check` on a state holding one unit of text and applies `accept`
    (default: the verdict passed) to what it returns."""
    return lambda state, ctx, path: accept(execute(check, state, ctx, path))


class Guard(Term):
    """Returns a term that runs ``generate >> check`` until the check passes, at most ``retry + 1`` times.

    A retry runs `generate` on the state the failed check returned, so it can
    repair what the verdict names; a Guard that retries must therefore have a
    generator that sees (reads or optionally reads) what the check writes.
    The final verdict (``passed`` or ``exhausted``) and the number of attempts
    are recorded in the trace, and each checked attempt is reported to the
    run's observer (a stream retracts a rejected one, `lambdarag.stream`).
    By default the check must write ``verdict``. Past the deadline, a check
    the context skips late (`Context.late`) leaves what `generate` wrote
    unchecked, noted ``unchecked``, instead of failing the run.
    """

    __slots__ = ("generate", "check", "retry", "accept", "name")

    def __init__(
        self,
        generate: Term,
        check: Term,
        retry: int = 1,
        *,
        accept: Callable[[State], bool] = _verdict_passed,
    ) -> None:
        self.generate = need_term("Guard", "generate", generate)
        self.check = need_term("Guard", "check", check)
        if isinstance(retry, bool) or not isinstance(retry, int) or not 0 <= retry <= 10:
            raise CompositionError(f"Guard: retry must be an integer in 0..10, got {retry!r}")
        if accept is _verdict_passed and "verdict" not in check.writes():
            raise CompositionError(
                f"Guard: check {check.lambda_form()!r} must write 'verdict' (or pass accept=...), "
                f"it writes {sorted(check.writes()) or 'none'}"
            )
        self.retry = retry
        self.accept = accept
        self.name = "guard"
        if retry and not check.writes() & generate.sees():
            shown = "'verdict'" if accept is _verdict_passed else " or ".join(map(repr, sorted(check.writes())))
            raise CompositionError(
                f"{self.lambda_form()}: generate {generate.lambda_form()!r} cannot see the check's {shown}, so a "
                f"retry would repeat the answer the check rejected; add {shown} to its optional= reads "
                f"(or use retry=0)")

    def children(self) -> tuple[Term, ...]:
        return (self.generate, self.check)

    def labelled(self) -> tuple[tuple[str, Term], ...]:
        return (("Guard.generate", self.generate), ("Guard.check", self.check))

    def writes(self) -> frozenset[str]:
        return self.generate.writes() | self.check.writes()

    def free_reads(self) -> dict[str, Path]:
        return Compose(self.generate, self.check).free_reads()

    def check_branches(self, available: frozenset[str]) -> None:
        Compose(self.generate, self.check).check_branches(available)

    def _form(self, expand: bool) -> str:
        accept = "" if self.accept is _verdict_passed else f", accept=‹{getattr(self.accept, '__name__', 'function')}›"
        return f"Guard({self.generate.form(expand)}, {self.check.form(expand)}, retry={self.retry}{accept})"

    def _effect_signature(self) -> str:
        body = f"{self.generate.effect_signature()} · {self.check.effect_signature()}"
        return f"({body}){{1,{self.retry + 1}}}"

    def _cost(self, model: "CostModel") -> float:
        return (self.retry + 1) * (self.generate._cost(model) + self.check._cost(model))

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        watcher = observer()
        for attempt in range(1, self.retry + 2):
            out = execute(self.generate, state, ctx, (*path, f"Guard.generate#{attempt}"))
            if ctx.skips_late(self.check):    # past the deadline: what is written is returned unchecked, and said so
                out = execute(self.check, out, ctx, (*path, f"Guard.check#{attempt}"))
                ctx.trace.note(path, verdict="unchecked", attempts=attempt)
                return out
            out = execute(self.check, out, ctx, (*path, f"Guard.check#{attempt}"))
            passed, last = self.accept(out), attempt == self.retry + 1
            if watcher is not None:
                verdict = getattr(out, "verdict", None)
                watcher.checked(self, passed, tuple(verdict.details) if verdict is not None else (), passed or last)
            if passed:
                ctx.trace.note(path, verdict="passed", attempts=attempt)
                return out
            state = out
        ctx.trace.note(path, verdict="exhausted", attempts=self.retry + 1)
        return out

    def _key(self) -> tuple[Any, ...]:
        return (self.generate, self.check, self.retry, self.accept)

    def __repr__(self) -> str:
        return f"Guard({self.generate!r}, {self.check!r}, retry={self.retry})"


class Map(Term):
    """Returns a term that runs `term` once per element of the tuple field `over`, concurrently.

    Each run sees the element in field `bind` (its attribute `pick` if given);
    the fields `term` writes are merged with `merge` (default: `appended`).
    At most `limit` elements run, `width` at a time; a cut is noted in the trace.
    """

    __slots__ = ("term", "over", "bind", "pick", "merge", "width", "limit", "name")

    def __init__(
        self,
        term: Term,
        over: str,
        *,
        bind: str = "query",
        pick: Optional[str] = None,
        merge: Optional[Merge] = None,
        width: int = 4,
        limit: int = 16,
    ) -> None:
        self.term = need_term("Map", "term", term)
        if width < 1 or limit < 1:
            raise CompositionError(f"Map: width and limit must be >= 1, got width={width}, limit={limit}")
        self.over, self.bind, self.pick = over, bind, pick
        if merge is None:
            not_tuples = sorted(f for f in term.writes() if not _is_tuple_field(f))
            if not_tuples:
                raise CompositionError(
                    f"Map({term.lambda_form()}): writes {not_tuples}, which are not tuple fields; the default "
                    f"merge only appends tuples, so pass merge=... saying how the elements' values combine")
        else:
            _check_merge_fields(f"Map({term.lambda_form()})", merge.fields, term.writes())
        self.merge = merge or appended(*sorted(term.writes()))
        self.width, self.limit = width, limit
        self.name = "map"
        unmerged = term.writes() - self.merge.fields
        if unmerged:
            raise CompositionError(
                f"Map({term.lambda_form()}): its writes {sorted(unmerged)} have no merge; pass merge=..."
            )

    def children(self) -> tuple[Term, ...]:
        return (self.term,)

    def labelled(self) -> tuple[tuple[str, Term], ...]:
        return ((f"Map[{self.over}]", self.term),)

    def writes(self) -> frozenset[str]:
        return frozenset(self.merge.fields)

    def free_reads(self) -> dict[str, Path]:
        inner = {f: p for f, p in prefixed(self.term.free_reads(), f"Map[{self.over}]").items() if f != self.bind}
        return merged_reads([{self.over: ("Map",)}, inner])

    def check_branches(self, available: frozenset[str]) -> None:
        self.term.check_branches(available | {self.bind})

    def _form(self, expand: bool) -> str:
        given = {"bind": (self.bind, "query"), "pick": (self.pick, None), "width": (self.width, 4),
                 "limit": (self.limit, 16)}
        extra = "".join(f", {k}={show_value(v)}" for k, (v, default) in given.items() if v != default)
        if self.merge != appended(*self.term.writes()):
            extra += f", merge={self.merge.form()}"
        return f"Map({self.term.form(expand)}, over={self.over}{extra})"

    def _effect_signature(self) -> str:
        return f"({_wrap(self.term.effect_signature())} ∥ …)"

    def _cost(self, model: "CostModel") -> float:
        return self.limit * self.term._cost(model)

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        items = tuple(getattr(state, self.over) or ())
        if len(items) > self.limit:
            cut = f"{len(items)} elements, ran the first {self.limit}"
            ctx.trace.note(path, truncated=cut)
            ctx.trace.mark_fallback(path, f"truncated over {self.over!r}: {cut} (limit)")
            items = items[: self.limit]
        if not items:
            return state
        jobs = []
        for i, item in enumerate(items):
            value = getattr(item, self.pick) if self.pick else item
            jobs.append((self.term, state.model_copy(update={self.bind: value}), (*path, f"Map[{i}]")))
        results = concurrently(jobs, ctx, owner=self.lambda_form(), width=self.width)
        return apply_writes(self, state, self.merge(state, results), path)

    def _key(self) -> tuple[Any, ...]:
        return (self.term, self.over, self.bind, self.pick, self.merge, self.width, self.limit)

    def __repr__(self) -> str:
        return f"Map({self.term!r}, over={self.over!r}, bind={self.bind!r})"


class Named(Term):
    """Returns `body` under a name (a pattern): it prints as the name inside larger terms.

    Registering a pattern closes it: its free reads must be initial fields.
    """

    __slots__ = ("name", "body")

    def __init__(self, name: str, body: Term, *, available: Iterable[str] = INITIAL_FIELDS) -> None:
        self.name = name
        self.body = need_term(f"pattern {name!r}", "body", body)
        try:
            body.close(available)
        except CompositionError as e:
            raise CompositionError(f"pattern {name!r}: {e}") from None

    def children(self) -> tuple[Term, ...]:
        return (self.body,)

    def labelled(self) -> tuple[tuple[str, Term], ...]:
        return ((self.name, self.body),)

    def writes(self) -> frozenset[str]:
        return self.body.writes()

    def free_reads(self) -> dict[str, Path]:
        return prefixed(self.body.free_reads(), self.name)

    def _form(self, expand: bool) -> str:
        return self.body.form(expand) if expand else self.name

    def __str__(self) -> str:
        """Returns ``λq.`` and the body with the patterns inside it by name: the form a declaration reads back."""
        return f"λq. {self.body.form()}"

    def _effect_signature(self) -> str:
        return self.body.effect_signature()

    def _cost(self, model: "CostModel") -> float:
        return self.body._cost(model)

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        return execute(self.body, state, ctx, path)

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.body)

    def __repr__(self) -> str:
        return f"Named({self.name!r}, {self.body!r})"
