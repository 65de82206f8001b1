"""The demo web app: one static page and a JSON/SSE API over `orchestration.search_unified.search`.

Routes:
  GET  /             the page (qademo/static/index.html, plain HTML+JS+CSS, no build step, no CDN)
  GET  /api/info     the default index, the built indexes and the query length limit, for the page's form
  GET  /favicon.ico  the page's icon (an SVG), so browsers asking for it get no 404
  POST /api/search   {"query", "history"?, "index"?} → the answer view as JSON
  POST /api/ask      the same request (and "checked_only"?) → Server-Sent Events as the search runs
                     (`search_stream`): `evidence` (the hits, as soon as retrieval ends), `answer` ({text, attempt}:
                     the answer as it is written, unchecked until `result`), `retract` ({attempt, reason}: an
                     attempt withdrawn), then `result` (the whole, checked answer view; `degraded` and `warning`
                     when the final check failed it) and `done`.
  POST /api/feedback {"query_id", "chunk_id", "verdict": "up"|"down", "index"?} → a vote confirming (👍) or
                     rejecting (👎) a chunk the answer cited or showed to this caller; it waits for an
                     operator's review (`lambdarag feedback review|approve`) unless enough sources agree
                     (`orchestration.feedback.votes`). Anything else is refused (400, 429 past the source's
                     rate limit) without echoing what was sent.

Every route reads as the app's `user` (default `PUBLIC`: the page has no login), and so does every store it
reads, the entity graph of the compare view included. Questions are asked from the client's address
(`orchestration.feedback.asking`): what they teach waits for distinct callers to agree.

What streams: the search's first event is awaited before the first byte is
sent, so errors still get a proper status (unusable query or unknown index →
400 with a one-line message); from then on the page sees the evidence, then
the answer as the model writes it. A client that hangs up closes the stream,
which cancels the search and its LLM request.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator, Literal, Optional

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from pydantic import BaseModel, ConfigDict, Field

from lambdarag import User
from lambdarag.errors import ConfigError, DeadlineExceeded, FeedbackRateLimited, LambdaRAGError, QueryError
from lambdarag.runtime import LATE_SKIPPED
from lambdarag.state import PUBLIC
from lambdarag.orchestration.feedback import open_feedback
from lambdarag.orchestration.feedback.asking import asking_from
from lambdarag.orchestration.knowledge import open_knowledge
from lambdarag.orchestration.feedback.votes import SHOWN_HITS, Voter, weight_of
from lambdarag.orchestration.result import Citation, Hit, SearchResult, Span
from lambdarag.orchestration.search_unified import search, search_stream
from lambdarag.orchestration.setup import ConfigArg, open_index, resolve_config

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY_BYTES = 64 * 1024
MAX_TURNS, MAX_TURN_CHARS = 20, 4000
MAX_RELATIONS, MAX_SPANS = 40, 300
MAX_EVIDENCE = SHOWN_HITS      # the evidence a vote may name as shown (besides the citations)
WATERFALL_KINDS = ("named", "lam", "tool")
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class Turn(BaseModel):
    """One earlier turn of the conversation, as the page sends it."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: str = Field(max_length=MAX_TURN_CHARS)


class AskRequest(BaseModel):
    """The body of /api/search and /api/ask; the query's own length limit is the config's (limits.maxQueryChars)."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(max_length=MAX_BODY_BYTES)
    history: list[Turn] = Field(default_factory=list, max_length=MAX_TURNS)
    index: Optional[str] = Field(default=None, pattern=r"^[\w-]{1,64}$")
    checked_only: bool = False
    """/api/ask: release the answer claim by claim once the check accepts each (README "Streaming")."""


def cited_chunks(citations: list[Citation], hits: list[Hit]) -> list[dict]:
    """Returns each citation with the text it points at: the cited hit's chunk (by chunk_id, else source#section),
    else the citation's own quote, else no text."""
    by_id: dict[str, Hit] = {}
    by_place: dict[str, Hit] = {}
    for h in hits:
        by_id.setdefault(h.chunk_id, h)
        by_place.setdefault(f"{h.source}#{h.section}", h)
    out = []
    for c in citations:
        hit = by_id.get(c.chunk_id) or by_place.get(f"{c.source}#{c.section}")
        if hit:
            text, origin = hit.text, "chunk"
        elif c.quote:
            text, origin = c.quote, "quote"
        else:
            text, origin = "", "none"
        out.append({"source": c.source, "section": c.section, "chunk_id": c.chunk_id,
                    "title": hit.title if hit else "", "date": hit.date if hit else "",
                    "text": text, "origin": origin})
    return out


def waterfall(spans: list[Span]) -> list[dict]:
    """Returns the latency waterfall rows, strategy and step spans in tree order, with start offset, duration, depth.

    Composite bookkeeping spans (compose, par, route…) are left out; a Named
    span that merely repeats its parent (same name, same interval) is shown once.
    Rows follow the pipeline's nesting (a step sits under its strategy), each
    level in order of start, so concurrent branches read as separate blocks.
    """
    kept: list[Span] = []
    seen: set[tuple] = set()
    for s in spans:
        key = (s.name, round(s.start_ms, 3), round(s.duration_ms, 3))
        if s.kind in WATERFALL_KINDS and key not in seen:
            seen.add(key)
            kept.append(s)
    children: dict[int, list[int]] = {-1: []}
    for i, s in enumerate(kept):
        owners = [j for j, o in enumerate(kept) if j != i and s.path.startswith(o.path + " › ")]
        parent = max(owners, key=lambda j: len(kept[j].path), default=-1)
        children.setdefault(parent, []).append(i)
    origin = min((s.start_ms for s in spans), default=0.0)
    rows: list[dict] = []

    def visit(i: int, depth: int) -> None:
        for j in sorted(children.get(i, []), key=lambda j: kept[j].start_ms):
            s = kept[j]
            rows.append({"name": s.name, "kind": s.kind, "effect": s.effect, "depth": depth,
                         "start_ms": round(s.start_ms - origin, 3), "duration_ms": round(s.duration_ms, 3),
                         "fallback": s.fallback, "error": s.error})
            visit(j, depth + 1)

    visit(-1, 0)
    return rows[:MAX_SPANS]


class FeedbackRequest(BaseModel):
    """The body of /api/feedback: a 👍 or 👎 on one cited chunk of a logged answer."""

    model_config = ConfigDict(extra="forbid")
    query_id: str = Field(pattern=r"^[\w-]{1,64}$")
    chunk_id: str = Field(min_length=1, max_length=1000)
    verdict: Literal["up", "down"]
    index: Optional[str] = Field(default=None, pattern=r"^[\w-]{1,64}$")


GRAPH_TYPES = ("compare", "relation")   # question types whose answer the page explains with the entity graph


def compare_sides(graph: Any, entities: list[str], user: User, per_side: int = 6) -> tuple[list[str], list[dict]]:
    """Returns the (first two) named entities the graph shows `user` and, for each, up to `per_side` relations
    touching it that `user` may see.

    A compare route reads no relations itself, and a relation route may find none on its path;
    drawing each named entity's own edges shows every side and no entity that is not a side or a
    direct neighbour of one.
    """
    sides = [c for c in dict.fromkeys(graph.resolve(e) for e in entities) if c and graph.visible(c, user)][:2]
    seen, relations = set(), []
    for side in sides:
        mine = [x for x in graph.neighbors(side, direction="both", user=user)
                if (x.head, x.relation, x.tail) not in seen]
        for x in sorted(mine, key=lambda x: -x.confidence)[:per_side]:
            seen.add((x.head, x.relation, x.tail))
            relations.append({"head": x.head, "relation": x.relation, "tail": x.tail, "source": x.source})
    return sides, relations


def answer_view(r: SearchResult) -> dict[str, Any]:
    """Returns what the page shows of a search result (a JSON-able dict)."""
    relations = [{"head": x.head, "relation": x.relation, "tail": x.tail, "source": x.source}
                 for x in r.relations[:MAX_RELATIONS]]
    return {
        "query": r.query, "rewritten_query": r.rewritten_query, "query_type": r.query_type,
        "strategy": r.strategy, "classified_by": r.classification.get("stage", ""),
        "entities": r.classification.get("entities", []),
        "expression": r.expression, "effect_signature": r.effect_signature, "answer": r.answer,
        "citations": cited_chunks(r.citations, r.hits), "relations": relations,
        "relations_total": len(r.relations), "waterfall": waterfall(r.trace.spans),
        "latency_ms": r.latency_ms, "cost": r.cost, "fallbacks": r.fallbacks, "index": r.index,
        "from_cache": r.from_cache, "query_id": r.query_id, "sides": [], "not_in_graph": [],
        "degraded": r.degraded, "warning": warning(r),
        "mode": next((m["reason"] for m in r.modes if m["term"] == "llm"), ""),
    }


def warning(r: SearchResult) -> str:
    """Returns what the page's warning says about a degraded answer (empty when it is not degraded)."""
    if not r.degraded:
        return ""
    late = [f["term"] for f in r.fallbacks if f["reason"] == LATE_SKIPPED]
    why = next((f["reason"] for f in r.fallbacks if f["term"] == "claim_check" and f["path"] == "degraded"),
               f"the deadline passed before {' and '.join(late)} ran, so it is unchecked" if late else
               "a configured LLM step failed and its offline path answered")
    return f"This answer is degraded: {why[:300]}"


SERVER_PATH = re.compile(r"(?<![\w.:/~-])(?:~|/)[^\s'\"]*/[^\s'\",;:)]*")
"""An absolute path inside an error message (a data home, an index folder): callers are shown ``<server path>``."""


def error_response(status: int, message: str) -> JSONResponse:
    """Returns the app's error shape; any server path in `message` is replaced, so callers never learn the layout."""
    return JSONResponse({"error": SERVER_PATH.sub("<server path>", message)}, status_code=status)


def failure(e: LambdaRAGError) -> JSONResponse:
    """Returns the response for a search that failed before answering: 400 for the request's fault, 504 past the deadline."""
    status = 400 if isinstance(e, (QueryError, ConfigError)) else 504 if isinstance(e, DeadlineExceeded) else 500
    return error_response(status, str(e))


def sse(event: str, data: Any) -> str:
    """Returns one Server-Sent Event; JSON data never contains a raw newline, so one `data:` line suffices."""
    return f"event: {event}\ndata: {json.dumps(jsonable_encoder(data), ensure_ascii=False)}\n\n"


def evidence_view(hits: list[dict]) -> list[dict]:
    """Returns the hits as the page's evidence list shows them (place, title, a clipped text)."""
    return [{"source": h["source"], "section": h["section"], "title": h["title"], "text": h["text"][:200],
             "instructions": h.get("instructions", [])} for h in hits[:MAX_EVIDENCE]]


def page_view(r: SearchResult, config: ConfigArg, user: User) -> dict[str, Any]:
    """Returns the answer view the page shows `user`: for a compare or relation answer whose route found no
    relations, the two sides and their relations are taken from the entity graph, as far as `user` may see it."""
    view = answer_view(r)
    if r.query_type in GRAPH_TYPES and not view["relations"]:
        graph = open_knowledge(resolve_config(config), r.index).graph
        if graph is not None:
            view["sides"], view["relations"] = compare_sides(graph, view["entities"], user)
            view["relations_total"] = len(view["relations"])
            view["not_in_graph"] = [e for e in view["entities"]
                                    if (found := graph.resolve(e)) is None or not graph.visible(found, user)]
    return view


def stream_events(first: Any, rest: Iterator[Any], config: ConfigArg, user: User) -> Iterator[str]:
    """Yields the SSE stream of one question from its search events: evidence, answer pieces, retractions, result, done.

    A failure after the first byte can no longer change the status: it is sent as a `failed` event.
    """
    try:
        if first is not None:
            yield from event_sse(first, config, user)
        for event in rest:
            yield from event_sse(event, config, user)
    except LambdaRAGError as e:
        yield sse("failed", {"error": SERVER_PATH.sub("<server path>", str(e))})
    finally:
        rest.close()


def event_sse(event: Any, config: ConfigArg, user: User) -> Iterator[str]:
    """Yields the SSE of one search event that the page shows (others are left out)."""
    if event.kind == "hits":
        yield sse("evidence", {"hits": evidence_view(event.hits), "total": len(event.hits)})
    elif event.kind == "token":
        yield sse("answer", {"text": event.text, "attempt": event.attempt})
    elif event.kind == "retract":
        yield sse("retract", {"attempt": event.attempt, "reason": event.reason[:300]})
    elif event.kind == "result":
        view = page_view(event.result, config, user)
        yield sse("result", view)
        yield sse("done", {"chars": len(view["answer"])})


def source_of(request: Request) -> str:
    """Returns the source a request comes from (its client address): what votes and asking count per."""
    return f"web:{request.client.host if request.client else '-'}"


def create_app(config: ConfigArg = None, index: Optional[str] = None, user: User = PUBLIC) -> FastAPI:
    """Returns the demo ASGI app searching with `config` (default agent-config.yml) and `index` unless a request
    names one, as `user` (every caller of the page is that user)."""
    # max_body_size counts the bytes as they arrive (chunked bodies, lying Content-Lengths): orchestration.http_limits
    app = FastAPI(title="LambdaRAG demo", docs_url=None, redoc_url=None, openapi_url=None,
                  max_body_size=MAX_BODY_BYTES)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.middleware("http")
    async def guard(request: Request, call_next):
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """A body that passed the cap while arriving gets the app's error shape; one whose Content-Length
        declares more gets Starlette's plain "Content Too Large" before the route runs."""
        too_large = f"{exc.detail}: request body over {MAX_BODY_BYTES} bytes" if exc.status_code == 413 else None
        return error_response(exc.status_code, too_large or str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return error_response(400, f"{where}: {first.get('msg', 'invalid request')}")

    def served() -> list[str]:
        """Returns the indexes this app answers: the one it serves, then `server.indexes` (nothing else built)."""
        cfg = resolve_config(config)
        return list(dict.fromkeys([index or cfg.retrieval.index, *cfg.server.indexes]))

    def unserved(name: Optional[str]) -> Optional[JSONResponse]:
        """Returns the 404 for a request naming an index this app does not serve, else None."""
        if name is None or name in served():
            return None
        return error_response(404, f"index {name!r} is not served here; served: {', '.join(served())}")

    def answer(body: AskRequest, request: Request) -> dict[str, Any] | JSONResponse:
        refused = unserved(body.index)
        if refused is not None:
            return refused
        try:
            with asking_from(source_of(request)):
                r = search(body.query, index=body.index or index, history=[t.model_dump() for t in body.history],
                           user=user, config=config)
        except LambdaRAGError as e:
            return failure(e)
        return page_view(r, config, user)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/info")
    def info() -> dict[str, Any]:
        cfg = resolve_config(config)
        return {"index": served()[0], "indexes": served(),
                "max_query_chars": cfg.limits.max_query_chars, "max_turns": MAX_TURNS}

    @app.post("/api/search")
    def search_json(body: AskRequest, request: Request):
        return answer(body, request)

    @app.post("/api/ask")
    def ask_stream(body: AskRequest, request: Request):
        refused = unserved(body.index)
        if refused is not None:
            return refused
        events = search_stream(body.query, index=body.index or index,
                               history=[t.model_dump() for t in body.history], user=user, config=config,
                               checked_only=body.checked_only)
        try:
            with asking_from(source_of(request)):        # the run's thread starts here, with this context
                first = next(events, None)
        except LambdaRAGError as e:
            return failure(e)
        return StreamingResponse(stream_events(first, events, config, user), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    @app.post("/api/feedback")
    def feedback(body: FeedbackRequest, request: Request):
        cfg = resolve_config(config)
        voter = Voter(source_of(request), user)
        refused = unserved(body.index)
        if refused is not None:
            return refused
        try:
            kb = open_index(cfg, body.index or index)
            loop = open_feedback(cfg, kb)
            if loop is None:
                return error_response(409, "feedback is switched off (config or LAMBDARAG_FEEDBACK)")
            vote = loop.votes.cast(loop.log, kb.index, voter, body.query_id, body.chunk_id,
                                   "confirm" if body.verdict == "up" else "reject")
        except FeedbackRateLimited as e:
            return error_response(429, str(e))
        except LambdaRAGError as e:
            return error_response(400, str(e))
        return {"id": vote["id"], "origin": vote["verdict"], "status": vote["status"], "weight": weight_of(vote)}

    return app


app = create_app()
