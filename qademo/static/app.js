// The demo page: asks /api/ask, reads its Server-Sent Events, and draws the result.
// Every piece of server data reaches the DOM through textContent or attributes, never as markup.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const MAX_TURN_CHARS = 4000;
let maxTurns = 20;
let history = [];

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const c of children) node.append(c);  // strings become text nodes
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function short(text, n) {
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}

// Shows the error and hides the previous result, so that nothing under the banner looks like its answer.
function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
  $("result").hidden = true;
}

// Reads an event stream from a fetch response and calls onEvent(name, data) for each event.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      onEvent(name, data ? JSON.parse(data) : null);
    }
    if (done) return;
  }
}

function renderTags(view) {
  $("asked").textContent = view.query;
  const tag = $("type-tag");
  tag.textContent = view.query_type;
  tag.className = "tag type-" + view.query_type.replace(/[^a-z_]/g, "");
  $("strategy").textContent = view.strategy;
  $("classified-by").textContent = view.classified_by || "?";
  $("total-ms").textContent = Math.round(view.latency_ms.total) + " ms" + (view.from_cache ? " (from cache)" : "");
  $("cost").textContent = view.cost.toFixed(4);
  $("expression").textContent = "λq. " + view.expression;
  $("effects").textContent = view.effect_signature;
  const rewritten = $("rewritten");
  rewritten.hidden = view.rewritten_query === view.query;
  rewritten.textContent = "searched as: " + view.rewritten_query;
}

function renderFallbacks(fallbacks) {
  const list = $("fallbacks");
  list.replaceChildren(...fallbacks.map((f) =>
    el("li", {}, el("code", {}, f.term), ": " + f.reason)));
  $("fallbacks-box").hidden = fallbacks.length === 0;
}

function citationKey(source, section) {
  return section ? source + "#" + section : source;
}

function renderCitations(citations) {
  const list = $("citations");
  list.replaceChildren();
  if (citations.length === 0) {
    list.append(el("li", { className: "note" }, "no citations"));
    return;
  }
  citations.forEach((c, i) => {
    const summary = el("summary", {}, citationKey(c.source, c.section));
    if (c.date) summary.append(el("span", { className: "note" }, "  " + c.date));
    const body = c.text
      ? el("blockquote", { className: "chunk" }, c.text)
      : el("p", { className: "note" }, "the cited passage is not among the retrieved chunks");
    if (c.origin === "quote") body.title = "quoted by the answer (not a retrieved chunk)";
    const details = el("details", { id: "cite-" + i }, summary, body);
    details.dataset.key = citationKey(c.source, c.section);
    const item = el("li", {}, details);
    if (queryId && c.chunk_id) item.append(vote(c.chunk_id, "up", "👍"), vote(c.chunk_id, "down", "👎"));
    list.append(item);
  });
}

let queryId = "";

// A 👍/👎 button that confirms or rejects one cited chunk for this answer's question (POST /api/feedback).
function vote(chunkId, verdict, label) {
  const button = el("button", { type: "button", className: "vote" }, label);
  button.dataset.verdict = verdict;
  button.addEventListener("click", async () => {
    const r = await fetch("/api/feedback", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ query_id: queryId, chunk_id: chunkId, verdict: verdict, index: chosenIndex() }),
    });
    button.disabled = true;
    const reply = await r.json();
    button.title = !r.ok ? reply.error || "not recorded"
      : reply.status === "pending" ? "recorded; it counts once an operator approves it" : "recorded";
  });
  return button;
}

// Rewrites the streamed answer so each [来源: …] marker becomes a button that opens its citation.
function linkMarkers(answer, citations) {
  const box = $("answer");
  const index = new Map(citations.map((c, i) => [citationKey(c.source, c.section), i]));
  const parts = [];
  const marker = /\[(?:来源|[Ss]ource):\s*([^\]]+)\]/g;
  let last = 0, m;
  while ((m = marker.exec(answer)) !== null) {
    parts.push(answer.slice(last, m.index));
    const key = m[1].trim().replace(/#$/, "");
    const i = index.has(key) ? index.get(key) : index.get(key.split("#")[0]);
    if (i === undefined) {
      parts.push(m[0]);
    } else {
      const button = el("button", { type: "button", className: "marker" }, m[0]);
      button.addEventListener("click", () => {
        const d = $("cite-" + i);
        d.open = true;
        d.scrollIntoView({ block: "nearest" });
      });
      parts.push(button);
    }
    last = marker.lastIndex;
  }
  parts.push(answer.slice(last));
  box.replaceChildren(...parts);
}

// Draws head -relation-> tail edges around a hub (the question's first entity in the graph, else the
// best-connected one): the hub's neighbours come first, then the best-connected others; nodes sit on an
// ellipse in order of first appearance, so the same relations always give the same drawing. A compare
// answer has two hubs (its sides), side by side, and only their neighbours around them.
function renderGraph(relations, total, entities, sides, missing) {
  const box = $("graph");
  box.replaceChildren();
  const unknown = (missing || []).length ? "the entity graph has no " + missing.join("、") : "";
  if (relations.length === 0) {
    box.append(el("p", { className: "note" }, unknown || "this strategy used no entity relations"));
    return;
  }
  if (unknown) box.append(el("p", { className: "note" }, unknown));
  const MAX_NODES = 9, MAX_EDGES = 14, W = 460, H = 320;
  const unique = new Map();
  for (const r of relations) {
    const key = [r.head, r.relation, r.tail].join("\u0000");
    if (!unique.has(key)) unique.set(key, r);
  }
  const degree = new Map();
  for (const r of unique.values()) {
    for (const n of [r.head, r.tail]) degree.set(n, (degree.get(n) || 0) + 1);
  }
  const order = [...degree.keys()];  // Map keeps first appearance order
  const byDegree = (a, b) => degree.get(b) - degree.get(a) || order.indexOf(a) - order.indexOf(b);
  const asked = (entities || []).map((e) => order.find((n) => n === e) || order.find((n) => n.includes(e)))
    .find((n) => n !== undefined);
  const hubs = (sides || []).filter((n) => degree.has(n)).length === 2 ? sides
    : [asked || [...order].sort(byDegree)[0]];
  const hub = hubs[0];
  const isHub = (n) => hubs.includes(n);
  const near = new Set([...unique.values()].flatMap((r) => (isHub(r.head) ? [r.tail] : isHub(r.tail) ? [r.head] : [])));
  const others = hubs.length > 1 ? [] : order.filter((n) => !isHub(n) && !near.has(n)).sort(byDegree);
  const ranked = [...hubs, ...[...near].filter((n) => !isHub(n)).sort(byDegree), ...others];
  const shown = new Set(ranked.slice(0, MAX_NODES));
  const touchesHub = (r) => (isHub(r.head) || isHub(r.tail) ? 0 : 1);
  const edges = [...unique.values()].filter((r) => shown.has(r.head) && shown.has(r.tail))
    .sort((a, b) => touchesHub(a) - touchesHub(b)).slice(0, MAX_EDGES);
  const ring = order.filter((n) => shown.has(n) && !isHub(n));
  const pos = new Map(hubs.length > 1 ? [[hubs[0], [W / 3, H / 2]], [hubs[1], [(2 * W) / 3, H / 2]]]
    : [[hub, [W / 2, H / 2]]]);
  ring.forEach((n, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / ring.length;
    pos.set(n, [W / 2 + (W / 2 - 70) * Math.cos(a), H / 2 + (H / 2 - 34) * Math.sin(a)]);
  });
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
                            "aria-label": "entity subgraph" });
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 17, refY: 5,
                                 markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
  const defs = svg("defs");
  defs.append(marker);
  root.append(defs);
  const pairCount = new Map();
  for (const r of edges) {
    const [x1, y1] = pos.get(r.head), [x2, y2] = pos.get(r.tail);
    const pair = [r.head, r.tail].sort().join("\u0000");
    const k = pairCount.get(pair) || 0;
    pairCount.set(pair, k + 1);
    const g = svg("g", { class: "edge" });
    g.append(svg("title", {}, `${r.head} —${r.relation}→ ${r.tail}${r.source ? " (" + r.source + ")" : ""}`));
    g.append(svg("line", { x1, y1, x2, y2, "marker-end": "url(#arrow)" }));
    const label = svg("text", { "text-anchor": "middle" }, short(r.relation, 8));
    label.dataset.line = JSON.stringify([x1, y1, x2, y2, k]);
    g.append(label);
    root.append(g);
  }
  for (const n of [...hubs, ...ring]) {
    const [x, y] = pos.get(n);
    const g = svg("g", { class: isHub(n) ? "node hub" : "node" });
    g.append(svg("title", {}, n));
    g.append(svg("circle", { cx: x, cy: y, r: isHub(n) ? 9 : 7 }));
    g.append(svg("text", { x, y: y + (y > H / 2 ? 21 : -12), "text-anchor": "middle" }, short(n, 12)));
    root.append(g);
  }
  box.append(root);
  placeEdgeLabels(root);
  const hidden = total - edges.length;
  if (hidden > 0) {
    box.append(el("p", { className: "note" },
                  `${edges.length} of ${total} relations drawn (duplicates and the least connected entities left out)`));
  }
}

// Puts each edge label by its line where it covers no node label (and no label placed before it):
// the middle first, then points nearer either end, then the same a line above or below; the middle if
// nothing is free. The measuring needs the drawing in the page.
const LABEL_SPOTS = [0, -12, 12].flatMap((dy) => [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8].map((t) => [t, dy]));

function placeEdgeLabels(root) {
  const boxes = [...root.querySelectorAll(".node text")].map((t) => t.getBBox());
  const overlaps = (a) => boxes.some((b) => a.x < b.x + b.width && b.x < a.x + a.width
                                            && a.y < b.y + b.height && b.y < a.y + a.height);
  for (const label of root.querySelectorAll(".edge text")) {
    const [x1, y1, x2, y2, k] = JSON.parse(label.dataset.line);
    const put = ([t, dy]) => {
      label.setAttribute("x", x1 + (x2 - x1) * t);
      label.setAttribute("y", y1 + (y2 - y1) * t - 3 + k * 12 + dy);
    };
    if (!LABEL_SPOTS.some((spot) => { put(spot); return !overlaps(label.getBBox()); })) put(LABEL_SPOTS[0]);
    boxes.push(label.getBBox());
  }
}

function renderWaterfall(rows, totalMs) {
  const box = $("waterfall");
  box.replaceChildren();
  const end = Math.max(totalMs, ...rows.map((r) => r.start_ms + r.duration_ms), 1);
  for (const r of rows) {
    const name = el("span", { className: "wf-name" }, r.name);
    name.style.paddingLeft = Math.min(r.depth, 8) * 12 + "px";
    const bar = el("div", { className: "wf-bar " + (r.kind === "named" ? "named" : r.effect)
                                      + (r.fallback ? " fallback" : "") + (r.error ? " failed" : "") });
    bar.style.left = (100 * r.start_ms) / end + "%";
    bar.style.width = Math.max((100 * r.duration_ms) / end, 0.4) + "%";
    const track = el("div", { className: "wf-track" }, bar);
    const row = el("div", { className: "wf-row" }, name, track,
                   el("span", { className: "wf-ms" }, r.duration_ms.toFixed(1) + " ms"));
    row.title = `${r.name} (${r.kind}, ${r.effect}) starts at ${r.start_ms.toFixed(1)} ms, `
      + `takes ${r.duration_ms.toFixed(1)} ms` + (r.fallback ? `; fallback: ${r.fallback}` : "")
      + (r.error ? `; error: ${r.error}` : "");
    box.append(row);
  }
}

// A turn is one question with its answer: count the questions, not the messages.
function renderTurns() {
  $("turns").textContent = String(history.filter((m) => m.role === "user").length);
}

function chosenIndex() {
  return $("index-picker").value || undefined;
}

// Lists the built indexes; choosing another one starts a new conversation (earlier turns were about the old one).
function renderIndexes(names, current) {
  const picker = $("index-picker");
  picker.replaceChildren(...names.map((n) => el("option", { value: n, selected: n === current }, n)));
  picker.addEventListener("change", () => {
    $("index-name").textContent = picker.value;
    history = [];
    renderTurns();
  });
}

async function ask(event) {
  event.preventDefault();
  const query = $("query").value;
  const body = { query, index: chosenIndex(), checked_only: $("checked-only").checked };
  if ($("follow-up").checked && history.length) body.history = history.slice(-maxTurns);
  $("error").hidden = true;
  $("ask").disabled = true;
  $("status").textContent = "searching…";
  let view = null, answer = "";
  try {
    const response = await fetch("/api/ask", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    if (!response.ok) {
      let message = `server error (${response.status})`;
      try { message = (await response.json()).error || message; } catch (_) { /* not JSON */ }
      showError(message);
      $("status").textContent = "";
      return;
    }
    const attempts = new Map();  // attempt number → its span in #answer, until it is retracted
    let tokens = 0;
    $("result").hidden = false;
    $("asked").textContent = query;
    for (const id of ["evidence", "retracted", "answer", "warning"]) $(id).replaceChildren();
    $("warning").hidden = true;
    $("mode-note").hidden = true;
    $("unchecked-note").hidden = true;
    await readEvents(response, (name, data) => {
      if (name === "evidence") {
        $("evidence").dataset.tokensBefore = String(tokens);
        for (const h of data.hits) {
          const item = el("li", {}, el("span", { className: "place" }, `${h.source}#${h.section}`), short(h.text, 80));
          if (h.instructions && h.instructions.length) {   // text that gives orders: shown, never quoted or trusted
            item.classList.add("flagged");
            item.prepend(el("span", { className: "flag" }, `instruction-like text (${h.instructions.join(", ")})`));
          }
          $("evidence").append(item);
        }
        $("status").textContent = "answer arriving…";
      } else if (name === "answer") {
        tokens += 1;
        if (!attempts.has(data.attempt)) {   // provisional until the result: marked as not yet checked
          attempts.set(data.attempt, el("span", { className: "attempt unchecked", title: "not yet checked" }));
          $("answer").append(attempts.get(data.attempt));
          $("unchecked-note").hidden = false;
        }
        attempts.get(data.attempt).append(data.text);
      } else if (name === "retract") {
        const span = attempts.get(data.attempt);
        const struck = el("del", {}, span ? span.textContent : "");
        if (span) span.remove();
        attempts.delete(data.attempt);
        $("retracted").append(struck, el("span", { className: "why" }, `retracted: ${short(data.reason, 160)}`));
      } else if (name === "result") {
        view = data;
        answer = view.answer;
        $("unchecked-note").hidden = true;
        for (const span of attempts.values()) span.classList.remove("unchecked");
        if (view.degraded) {
          $("warning").textContent = view.warning;
          $("warning").hidden = false;
        }
        $("mode-note").textContent = view.mode || "";
        $("mode-note").hidden = !view.mode;
        renderTags(view);
        renderFallbacks(view.fallbacks);
        queryId = view.query_id || "";
        renderCitations(view.citations);
        renderGraph(view.relations, view.relations_total, view.entities, view.sides, view.not_in_graph);
        renderWaterfall(view.waterfall, view.latency_ms.total);
      } else if (name === "failed") {
        showError(data.error);
        $("status").textContent = "";
      } else if (name === "done") {
        linkMarkers(answer, view.citations);
        $("status").textContent = "";
        history.push({ role: "user", content: query.slice(0, MAX_TURN_CHARS) },
                     { role: "assistant", content: answer.slice(0, MAX_TURN_CHARS) });
        renderTurns();
      }
    });
  } catch (e) {
    showError("request failed: " + e.message);
    $("status").textContent = "";
  } finally {
    $("ask").disabled = false;
  }
}

async function init() {
  $("ask-form").addEventListener("submit", ask);
  $("query").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("reset").addEventListener("click", () => { history = []; renderTurns(); });
  try {
    const info = await (await fetch("/api/info")).json();
    $("index-name").textContent = info.index;
    renderIndexes(info.indexes || [info.index], info.index);
    $("query").maxLength = info.max_query_chars;
    maxTurns = info.max_turns;
  } catch (_) {
    $("index-name").textContent = "?";
  }
}

init();
