"""The printed lambda form read back into a term: ``parse(text, resolver)``.

The grammar is exactly what `Term.form` prints (an optional ``λq.`` prefix)::

    expr  := seq                       seq := term (">>" term)*
    term  := "(" seq ")" | Identity | Par(seq, seq, …[, merge=M]) | If(seq, seq, seq[, on=f])
           | Route(seq, {label: seq, …}[, default=seq][, label=f]) | Guard(seq, seq[, retry=n])
           | Map(seq, over=f[, bind=f][, pick=f][, width=n][, limit=n][, merge=M])
           | NAME | NAME(q, _[, key=value, …]) | NAME(key=value, …)
    M     := NAME | NAME(key=value, …)           value := JSON | bare word (a string)

The parser knows no domain: a `Resolver` turns names into terms (a skill or a
pattern) and merges, and validates their parameters. It is hand-written
recursive descent rather than a parsing library: the grammar is a dozen rules,
and each error names the column and what was expected, in words a YAML author reads.
``‹…›`` in a printed form marks a part built in Python (a function), which no
declaration can name; the parser refuses it saying so.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping, NamedTuple, Optional, Protocol, Sequence

from .combinators import Compose, Guard, Identity, If, Map, Merge, Par, Route, appended, implied_merge
from .errors import CompositionError, ConfigError, DeclarationError
from .term import Term, read_mark


class Resolver(Protocol):
    """What names mean to `parse`: a term for a skill or pattern name, a merge for a merge name."""

    def term(self, name: str, params: Mapping[str, Any]) -> Term:
        """Returns the named term built with `params`; raises `ConfigError` listing the valid names or parameters."""

    def merge(self, name: str, params: Mapping[str, Any], branches: Sequence[Term]) -> Merge:
        """Returns the named merge of `branches`; raises `ConfigError` listing the valid merges."""


class Token(NamedTuple):
    kind: str   # name, number, string, python, op, end
    text: str
    column: int  # 1-based


_TOKEN = re.compile(r"""(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
                        |(?P<python>‹[^›]*›)|(?P<op>>>|[(){}\[\],:=])|(?P<name>[^\W\d]\w*))""", re.X)
WORDS = {"true": True, "false": False, "null": None}


def tokens(text: str) -> list[Token]:
    """Returns the tokens of `text` (the ``λq.`` prefix dropped), ending with an ``end`` token."""
    start = len(text) - len(text.lstrip())
    if text[start:].startswith("λq."):
        start += 3
    out, pos = [], start
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return out + [Token("end", "", pos + 1)]
        m = _TOKEN.match(text, pos)
        if m is None:
            raise DeclarationError(f"column {pos + 1}: unexpected {text[pos]!r}", column=pos + 1)
        out.append(Token(m.lastgroup, m.group(), pos + 1))
        pos = m.end()


class Parser:
    """Returns terms from tokens by recursive descent, one method per rule of the grammar."""

    def __init__(self, text: str, resolver: Resolver) -> None:
        self.toks = tokens(text)
        self.i = 0
        self.resolver = resolver

    # -- tokens ---------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def fail(self, message: str, tok: Optional[Token] = None) -> DeclarationError:
        tok = tok or self.peek()
        found = "the end" if tok.kind == "end" else repr(tok.text)
        return DeclarationError(f"column {tok.column}: {message}, found {found}", column=tok.column)

    def take(self, text: str, why: str) -> Token:
        tok = self.peek()
        if tok.kind != "op" or tok.text != text:
            raise self.fail(f"expected {text!r} {why}")
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.kind == "op" and tok.text == text

    def name(self, why: str) -> Token:
        tok = self.peek()
        if tok.kind == "python":
            raise self.python(tok)
        if tok.kind != "name":
            raise self.fail(f"expected {why}")
        self.i += 1
        return tok

    def python(self, tok: Token) -> DeclarationError:
        return DeclarationError(
            f"column {tok.column}: {tok.text} marks a part built in Python (a function), which a declaration "
            f"cannot name; register it (a skill, a merge) and write its name instead", column=tok.column)

    # -- rules ----------------------------------------------------------
    def expression(self) -> Term:
        term = self.seq()
        if self.peek().kind != "end":
            raise self.fail("expected '>>' or the end of the expression")
        return term

    def seq(self) -> Term:
        parts = [self.term()]
        while self.at(">>"):
            self.i += 1
            parts.append(self.term())
        return Compose(*parts)

    def term(self) -> Term:
        if self.at("("):
            self.i += 1
            inner = self.seq()
            self.take(")", "to close '('")
            return inner
        tok = self.name("a skill, a pattern, Identity or a combinator (Par, If, Route, Guard, Map)")
        if tok.text in ("Identity", "identity"):
            return Identity
        rule = {"Par": self.par, "If": self.if_, "Route": self.route, "Guard": self.guard, "Map": self.map}.get(tok.text)
        if rule is not None and self.at("("):
            self.i += 1
            try:
                return rule()
            except CompositionError as e:  # wiring: reported at the combinator
                raise DeclarationError(f"column {tok.column}: {e}", column=tok.column) from None
            except (TypeError, ValueError) as e:  # an option of the wrong type, e.g. Map(…, width="x")
                raise DeclarationError(f"column {tok.column}: {tok.text}: bad option value ({e})",
                                       column=tok.column) from None
        return self.atom(tok)

    def atom(self, tok: Token) -> Term:
        marked, params = False, {}
        if self.at("("):
            self.i += 1
            if [t.text for t in self.toks[self.i:self.i + 3]] == ["q", ",", "_"]:
                self.i += 3
                marked = True
                if not self.at(")"):
                    self.take(",", f"after {tok.text}(q, _")
            params = self.params(f"{tok.text}'s parameters")
            self.take(")", f"to close {tok.text}(")
        term = self.resolved(tok, lambda: self.resolver.term(tok.text, params))
        if marked and not read_mark(term.reads()):
            raise DeclarationError(f"column {tok.column}: {tok.text}(q, _) marks a term that reads the original "
                                   f"query, and {tok.text} does not; write {tok.text}", column=tok.column)
        return term

    def resolved(self, tok: Token, build: Callable[[], Any]) -> Any:
        """Returns what the resolver builds; its errors, and a factory's own about a parameter's value, are
        reported at the name's column."""
        try:
            return build()
        except (ConfigError, CompositionError) as e:
            raise DeclarationError(f"column {tok.column}: {e}", column=tok.column) from None
        except (TypeError, ValueError) as e:
            raise DeclarationError(f"column {tok.column}: {tok.text}: bad parameter value ({e})",
                                   column=tok.column) from None

    def params(self, owner: str) -> dict[str, Any]:
        """Returns the ``key=value`` parameters up to ``)``, the first without a leading comma."""
        out: dict[str, Any] = {}
        while not self.at(")"):
            if out:
                self.take(",", f"between {owner}")
            key = self.name(f"a parameter (key=value) in {owner}")
            if key.text in out:
                raise DeclarationError(f"column {key.column}: {key.text!r} is given twice", column=key.column)
            self.take("=", f"after {key.text}")
            out[key.text] = self.value()
        return out

    def value(self) -> Any:
        tok = self.peek()
        if tok.kind == "python":
            raise self.python(tok)
        self.i += 1
        if tok.kind in ("number", "string"):
            return json.loads(tok.text)
        if tok.kind == "name":
            return WORDS.get(tok.text, tok.text)
        if tok.text == "[":
            items = []
            while not self.at("]"):
                if items:
                    self.take(",", "between list items")
                items.append(self.value())
            self.take("]", "to close '['")
            return items
        if tok.text == "{":
            table = {}
            while not self.at("}"):
                if table:
                    self.take(",", "between entries")
                key = self.value()
                self.take(":", "after a key")
                table[str(key)] = self.value()
            self.take("}", "to close '{'")
            return table
        self.i -= 1
        raise self.fail("expected a value (a number, a string, true/false, a list or a table)")

    def options(self, owner: str, allowed: tuple[str, ...]) -> dict[str, tuple[Token, Any]]:
        """Returns the ``key=value`` options closing a combinator, up to its ``)``, each with its key's token."""
        found: dict[str, tuple[Token, Any]] = {}
        while self.at(","):
            self.i += 1
            key = self.name(f"an option of {owner} ({', '.join(allowed)})")
            if key.text not in allowed:
                raise DeclarationError(f"column {key.column}: {owner} takes no option {key.text!r}; valid: "
                                       f"{', '.join(allowed)}", column=key.column)
            if key.text in found:
                raise DeclarationError(f"column {key.column}: {key.text!r} is given twice", column=key.column)
            self.take("=", f"after {key.text}")
            found[key.text] = (key, self.seq() if key.text == "default" else
                               self.merge_spec() if key.text == "merge" else self.value())
        self.take(")", f"to close {owner}")
        return found

    def merge_spec(self) -> tuple[Token, str, dict[str, Any]]:
        name = self.name("a merge name")
        params: dict[str, Any] = {}
        if self.at("("):
            self.i += 1
            params = self.params(f"{name.text}'s parameters")
            self.take(")", f"to close {name.text}(")
        return name, name.text, params

    def merge(self, options: Mapping[str, tuple[Token, Any]], branches: Sequence[Term]) -> Optional[Merge]:
        """Returns the merge ``merge=`` names (`appended` is the calculus's own), else None."""
        if "merge" not in options:
            return None
        tok, name, params = options["merge"][1]
        if name == "appended":
            fields = params.get("fields", ())
            if not isinstance(fields, (list, tuple)) or not all(isinstance(f, str) for f in fields):
                raise DeclarationError(f"column {tok.column}: appended(fields=…) takes a list of field names, "
                                       f"got {fields!r}", column=tok.column)
            return appended(*fields)
        return self.resolved(tok, lambda: self.resolver.merge(name, params, branches))

    def branches(self) -> list[Term]:
        """Returns comma-separated terms up to the first ``key=`` option."""
        out = [self.seq()]
        while self.at(",") and not (self.peek(1).kind == "name" and self.peek(2).text == "="):
            self.i += 1
            out.append(self.seq())
        return out

    def par(self) -> Term:
        branches = self.branches()
        options = self.options("Par", ("merge",))
        return Par(*branches, merge=self.merge(options, branches) if "merge" in options else implied_merge(branches))

    def if_(self) -> Term:
        cond = self.seq()
        self.take(",", "after If's condition")
        then_ = self.seq()
        self.take(",", "after If's then-branch")
        else_ = self.seq()
        options = self.options("If", ("on",))
        return If(cond, then_, else_, on=options["on"][1] if "on" in options else None)

    def route(self) -> Term:
        classifier = self.seq()
        self.take(",", "after Route's classifier")
        self.take("{", "to open Route's table of label: term")
        routes: dict[str, Term] = {}
        while not self.at("}"):
            if routes:
                self.take(",", "between routes")
            label = self.peek()
            if label.kind not in ("name", "string", "number"):
                raise self.fail("expected a route label")
            self.i += 1
            self.take(":", f"after the label {label.text}")
            routes[label.text if label.kind == "name" else str(json.loads(label.text))] = self.seq()
        self.take("}", "to close Route's table")
        options = self.options("Route", ("default", "label"))
        return Route(classifier, routes, options["default"][1] if "default" in options else None,
                     label=options["label"][1] if "label" in options else None)

    def guard(self) -> Term:
        generate = self.seq()
        self.take(",", "after Guard's generator")
        check = self.seq()
        options = self.options("Guard", ("retry", "accept"))
        if "accept" in options:
            key = options["accept"][0]
            raise DeclarationError(f"column {key.column}: Guard's accept= is a Python function; a declared Guard "
                                   f"accepts the check's passing verdict", column=key.column)
        return Guard(generate, check, retry=options["retry"][1] if "retry" in options else 1)

    def map(self) -> Term:
        start = self.peek()
        body = self.seq()
        options = self.options("Map", ("over", "bind", "pick", "width", "limit", "merge"))
        if "over" not in options:
            raise self.fail("Map needs over=field, the tuple field it runs over", start)
        values = {k: v for k, (_, v) in options.items() if k != "merge"}
        return Map(body, merge=self.merge(options, [body]), **values)


def parse(text: str, resolver: Resolver) -> Term:
    """Returns the term `text` (a printed lambda form) declares; raises `DeclarationError` naming the column."""
    if not isinstance(text, str) or not text.strip():
        raise DeclarationError("column 1: an expression is empty", column=1)
    return Parser(text, resolver).expression()
