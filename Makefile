# Two set-up commands work on a fresh machine with only Python and git: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-lint: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,lint]'
	touch $@

demo: $(VENV)/.installed
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(VENV)/.installed
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest

lint: $(VENV)/.installed-lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(VENV)/.installed
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memkeep_status.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memzoi_store.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memzoi_recall.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memzoi_recall_both.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/session_context.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/hooks.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/capture_range.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/secrets.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/hostile_files.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/team.py

clean:
	rm -rf $(VENV) build *.egg-info
