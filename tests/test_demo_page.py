"""The demo page in headless Chromium: one question per route, citations, waterfall, subgraph, errors, escaping.

Needs Debian's chromium at /usr/bin/chromium (`.ci/run` installs it) and the
`playwright` Python package; no browser is downloaded. Without them the tests
fail rather than skip: the page is a capability, and this is its test.
A full-page screenshot lands in test-artifacts/demo.png (git-ignored).
"""
from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import expect, sync_playwright

from lambdarag.qademo.app import create_app
from tests.scripted_server import Reply
from tests.test_search import config_with

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ANSWER_TIMEOUT_MS = 120_000

ROUTES = [
    ("船长在保障海上生命安全和防治船舶污染方面有什么权力？", "fact", "hybrid_search"),
    ("海上交通安全法与水污染防治法在船舶管理方面有何异同？", "compare", "compare_search"),
    ("船员条例由哪个部门主管？", "relation", "relation_search"),
    ("梳理船员管理法规体系", "synthesis", "synthesis"),
    ("海洋环境保护法最新版本是哪一年修订的？", "temporal", "temporal_search"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(app):
    """Yields the URL of `app` served by uvicorn in a thread on a free local port."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def base_url():
    """Yields the URL of the demo app (offline, default config), warmed by one question as `lambdarag serve` warms
    before it accepts requests: the waterfall tests measure steps, not a cold first open of the knowledge base."""
    import httpx

    with serving(create_app()) as url:
        assert httpx.post(f"{url}/api/search", json={"query": ROUTES[0][0]}, timeout=120).status_code == 200
        yield url


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: apt-get install chromium (see .ci/run)"

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, base_url):
    """Yields a fresh page on the demo; fails the test if the page logged a script error (e.g. a CSP violation)."""
    yield from open_page(browser, base_url)


def open_page(browser, url: str):
    """Yields a fresh page on the demo at `url`, then checks that it logged no script error."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN")
    p = context.new_page()
    problems: list[str] = []
    p.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    p.on("console", lambda m: problems.append(m.text) if m.type == "error"
         and not m.text.startswith("Failed to load resource") else None)
    p.goto(url)
    expect(p.locator("#index-name")).to_have_text("demo")
    yield p
    context.close()
    assert problems == []


def ask(page, question: str) -> None:
    """Submits a question and waits until the page has finished (answer streamed, or an error shown)."""
    page.fill("#query", question)
    page.click("#ask")
    expect(page.locator("#ask")).to_be_enabled(timeout=ANSWER_TIMEOUT_MS)
    expect(page.locator("#status")).to_have_text("")


def open_first_citation(page) -> str:
    """Clicks the first citation and returns the cited text it reveals (it must be hidden before the click)."""
    chunk = page.locator("#citations details").first.locator(".chunk")
    assert not chunk.is_visible()
    page.locator("#citations summary").first.click()
    chunk.wait_for(state="visible")
    return chunk.text_content()


@pytest.mark.parametrize("question, query_type, strategy", ROUTES, ids=[r[1] for r in ROUTES])
def test_each_route_shows_tag_strategy_expression_citations_and_waterfall(page, question, query_type, strategy):
    ask(page, question)
    assert page.locator("#error").is_hidden()
    assert page.text_content("#asked") == question
    assert page.text_content("#type-tag") == query_type
    assert page.text_content("#strategy") == strategy
    assert page.text_content("#expression").startswith("λq. ")
    assert page.text_content("#effects")
    assert page.text_content("#answer").strip()
    assert len(open_first_citation(page).strip()) > 10
    bars = page.locator("#waterfall .wf-bar")
    assert bars.count() >= 3
    names = page.locator("#waterfall .wf-name").all_text_contents()
    assert "retrieval_plan" in names and "answer_generate" in names
    # every bar is drawn to the scale of the whole query: its share of the total time (a floor of 0.4 % for the
    # shortest), not a fixed width; the widest bar's size depends on how the time split, which a test cannot fix
    widths = page.eval_on_selector_all("#waterfall .wf-bar", "els => els.map(e => e.getBoundingClientRect().width)")
    tracks = page.eval_on_selector_all("#waterfall .wf-track", "els => els.map(e => e.getBoundingClientRect().width)")
    durations = [float(t.split()[0]) for t in page.locator("#waterfall .wf-ms").all_text_contents()]
    total = max(float(page.text_content("#total-ms").split()[0]), max(durations), 1.0)
    for name, width, track, ms in zip(names, widths, tracks, durations):
        assert width > 0 and abs(width - max(ms / total, 0.004) * track) <= 0.03 * track + 1, (name, width, ms, total)


def test_relation_question_draws_the_entity_subgraph_and_links_answer_markers(page):
    ask(page, "船员条例由哪个部门主管？")
    nodes = page.locator("#graph svg .node")
    assert nodes.count() >= 2
    labels = page.locator("#graph svg .node title").all_text_contents()
    assert any("船员条例" in label for label in labels)
    assert page.locator("#graph svg .edge line").count() >= 1
    marker = page.locator("#answer button.marker").first
    marker.click()
    assert page.locator("#citations details[open]").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "demo.png"), full_page=True)
    assert (ARTIFACTS / "demo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_offline_answer_says_so_once_and_shows_no_degradations(page):
    ask(page, "船员条例由哪个部门主管？")
    assert page.text_content("#mode-note") == "offline answer (no LLM configured)"
    assert page.locator("#mode-note").is_visible() and page.locator("#fallbacks-box").is_hidden()
    assert page.content().count("no LLM configured") == 1


def test_empty_query_shows_the_error_message(page):
    ask(page, "   ")
    error = page.locator("#error")
    assert error.is_visible()
    assert "query is empty" in error.text_content()
    assert page.locator("#result").is_hidden()


def test_markup_in_the_query_is_shown_as_text_and_never_runs(page):
    attack = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    ask(page, attack)
    assert page.text_content("#asked") == attack
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#result script, #result img").count() == 0


def test_the_turn_count_counts_questions_not_messages(page):
    page.check("#follow-up")
    ask(page, "船员条例由哪个部门主管？")
    expect(page.locator("#turns")).to_have_text("1")
    ask(page, "它的上位法是什么？")
    expect(page.locator("#turns")).to_have_text("2")
    page.click("#reset")
    expect(page.locator("#turns")).to_have_text("0")


def test_an_error_hides_the_previous_result(page):
    ask(page, "船员条例由哪个部门主管？")
    assert page.locator("#result").is_visible()
    ask(page, "   ")
    assert page.locator("#error").is_visible()
    assert page.locator("#result").is_hidden()


def test_at_420_px_the_waterfall_bars_get_the_width_of_the_page(browser, base_url):
    context = browser.new_context(viewport={"width": 420, "height": 900}, locale="zh-CN")
    p = context.new_page()
    p.goto(base_url)
    ask(p, "船员条例由哪个部门主管？")
    tracks = p.eval_on_selector_all("#waterfall .wf-track", "els => els.map(e => e.getBoundingClientRect().width)")
    names = p.eval_on_selector_all("#waterfall .wf-name", "els => els.map(e => e.getBoundingClientRect().width)")
    scroll = p.evaluate("document.documentElement.scrollWidth")
    context.close()
    assert tracks and min(tracks) > 0.7 * 420 and min(names) > 150
    assert scroll <= 420


def test_the_index_picker_lists_the_built_indexes_and_asks_the_chosen_one(page):
    from lambdarag.skills.store.index import built_indexes

    options = page.locator("#index-picker option").all_text_contents()
    assert options == sorted({"demo", *built_indexes()})
    assert page.input_value("#index-picker") == "demo"
    sent = []
    page.on("request", lambda r: sent.append(r.post_data_json) if r.url.endswith("/api/ask") else None)
    ask(page, "船员条例由哪个部门主管？")
    assert sent and sent[0]["index"] == "demo"


def test_the_favicon_is_served(page, base_url):
    response = page.request.get(base_url + "/favicon.ico")
    assert response.status == 200 and response.headers["content-type"].startswith("image/svg+xml")
    assert page.locator("link[rel=icon]").get_attribute("href") == "/favicon.ico"


LABEL_BOXES = """root => {
  const box = (t) => { const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  return [[...root.querySelectorAll('.edge text')].map(box), [...root.querySelectorAll('.node text')].map(box)];
}"""


def overlapping(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# A hub with eight neighbours, each also related to the next: the short ring edges end beside node labels.
CROWDED = [{"head": "中华人民共和国船员条例", "relation": "主管部门", "tail": f"第{i}个海事管理机构"} for i in range(8)] + \
          [{"head": f"第{i}个海事管理机构", "relation": "上级机关", "tail": f"第{(i + 1) % 8}个海事管理机构"} for i in range(8)]


@pytest.mark.parametrize("question", ["船员条例由哪个部门主管？", "海商法和海上交通安全法有什么区别？", None],
                         ids=["relation", "compare", "crowded"])
def test_edge_labels_cover_no_node_label(page, question):
    if question:
        ask(page, question)
    else:   # drawn directly: no corpus question yields this many relations among neighbours
        page.evaluate("([rels]) => { document.getElementById('result').hidden = false; "
                      "renderGraph(rels, rels.length, ['船员条例'], []); }", [CROWDED])
    edges, nodes = page.eval_on_selector("#graph svg", LABEL_BOXES)
    assert edges and nodes
    assert not [(e, n) for e in edges for n in nodes if overlapping(e, n)]


def test_a_compare_subgraph_shows_both_sides_and_only_their_neighbours(page):
    ask(page, "海商法和海上交通安全法有什么区别？")
    hubs = page.locator("#graph svg .hub title").all_text_contents()
    assert len(hubs) == 2 and {"海商法", "海上交通安全法"} <= {h.removeprefix("中华人民共和国") for h in hubs}
    edges = page.locator("#graph svg .edge title").all_text_contents()
    assert edges and all(any(h in e for h in hubs) for e in edges)
    for node in page.locator("#graph svg .node title").all_text_contents():
        assert node in hubs or any(node in e and any(h in e for h in hubs) for e in edges), node


def test_a_relation_question_about_an_entity_the_graph_lacks_says_so(page):
    ask(page, "上海海事局的上级机关是谁？")
    note = page.locator("#graph .note").first.text_content()
    assert "上海海事局" in note and "no entity relations" not in note


def test_evidence_is_shown_before_the_answer_arrives(page):
    ask(page, "海上交通安全法与水污染防治法在船舶管理方面有何异同？")
    evidence = page.locator("#evidence li")
    assert evidence.count() >= 3
    assert page.get_attribute("#evidence", "data-tokens-before") == "0"  # no answer text had arrived yet
    assert page.text_content("#answer").strip()
    assert "海上交通安全法" in " ".join(evidence.all_text_contents())


def test_a_retracted_attempt_is_struck_through_and_the_retry_streams_in(browser, llm_server):
    good = "船长负责管理和指挥船舶[来源: 海上交通安全法(2021-04-29).md#第三十八条]。"
    verdicts = iter(["unsupported", "supported"])

    def route(body):
        prompt = "\n".join(m["content"] for m in body["messages"])
        if "知识库助手" in prompt:
            return Reply(text=good, rate=15, piece=2)      # the answer is plain text with markers
        if "请逐条核查" in prompt:
            items = [{"citation": "[来源: 海上交通安全法(2021-04-29).md#第三十八条]", "status": next(verdicts)}]
            return Reply(text=json.dumps({"items": items}, ensure_ascii=False))
        return Reply(status=500)

    llm_server.script.route = route
    config = config_with(llm__baseUrl=llm_server.url, llm__model="m", llm__timeout=20, limits__timeoutSeconds=120)
    with serving(create_app(config)) as url:
        for p in open_page(browser, url):
            p.fill("#query", "海上交通安全法与水污染防治法在船舶管理方面有何异同？")
            p.click("#ask")
            expect(p.locator("#evidence li").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
            expect(p.locator("#retracted del")).to_have_text(good, timeout=ANSWER_TIMEOUT_MS)
            expect(p.locator("#ask")).to_be_enabled(timeout=ANSWER_TIMEOUT_MS)
            assert p.text_content("#answer") == good
            assert "unsupported" in p.text_content("#retracted .why")
            assert p.get_attribute("#evidence", "data-tokens-before") == "0"  # evidence came before any answer text
