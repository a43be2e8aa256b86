#!/usr/bin/env bash
# Install every dependency at the floor pyproject.toml declares (">=X" becomes "==X") in a fresh venv, and
# run the tests that exercise those libraries: a floor the code outgrew fails here instead of on a user's
# machine. Not part of `make test` (it installs a second environment, ~5 min, and runs ~10 min).
#
#   scripts/check_floors.sh [VENV_DIR]        (default /tmp/codeqa-floors)
#
# Run from the repository root. torch is installed first and pinned, as in the Makefile.
set -euo pipefail
VENV=${1:-/tmp/codeqa-floors}
PYTHON=${PYTHON:-python3}
CONSTRAINTS=$(mktemp)
trap 'rm -f "$CONSTRAINTS"' EXIT

# "name>=1.2" (and "name>=1.2,<2") in the dependency lists -> "name==1.2"; the dev extra's floors where it
# raises one (streamlit for the page tests) win over the runtime floor
"$PYTHON" - "$CONSTRAINTS" <<'EOF'
import re, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
floors = {}
for spec in project["dependencies"] + project["optional-dependencies"]["dev"]:
    found = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)", spec)
    if found:
        name, version = found.group(1).lower(), found.group(2)
        if name not in floors or tuple(map(int, re.findall(r"\d+", version))) > tuple(map(int, re.findall(r"\d+", floors[name]))):
            floors[name] = version
open(sys.argv[1], "w").write("".join(f"{n}=={v}\n" for n, v in sorted(floors.items())))
EOF
echo "floors:"; sed 's/^/  /' "$CONSTRAINTS"

test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
"$VENV/bin/pip" install -q -c "$CONSTRAINTS" -e '.[dev]'
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    tests/test_ui.py tests/test_cli.py tests/test_chat.py tests/test_llm_answers.py tests/test_embed_openai.py \
    tests/test_watch.py tests/test_mcp.py tests/test_adapter.py tests/test_store.py tests/test_endpoints.py \
    tests/test_config.py tests/test_parse.py
