# One-command setup: `make run` starts the app, `make test` runs the test suite.
# Both create .venv and install what they need on first use (torch first, as the CPU build).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# torch==2.13.0 is the CPU build on this machine's disk; an unpinned torch pulls a multi-GB CUDA build.
TORCH  ?= torch==2.13.0

.PHONY: run test setup-app setup-test index browser clean-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)"

$(VENV)/.app-installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[qwen-1_5b,app]"
	touch $@

$(VENV)/.test-installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[qwen-1_5b,app,test]"
	touch $@

setup-app: $(VENV)/.app-installed
setup-test: $(VENV)/.test-installed

index: setup-app
	$(BIN)/adaptive-rag ingest wiki --if-missing

run: index
	$(BIN)/adaptive-rag serve

# The browser tests drive Debian's Chromium (a browser download is impossible offline).
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium is not installed and cannot be installed here: the browser tests will be skipped"

# The linter and the type checker run first: a finding fails the test command like a failed test.
test: setup-test browser
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

clean-venv:
	rm -rf $(VENV)
