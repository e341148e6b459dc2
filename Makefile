# Jarvis Graph — set-up and main targets. `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	@cd examples/workspace && ../../$(BIN)/jarvis run -n --yes \
	    --platform scripted --script ../demo_script.yaml \
	    "Find the Python files, read the data file and run the report script; what total does it print?"

test: $(STAMP)
	$(BIN)/ruff check jarvis_graph tests bench
	$(BIN)/ruff format --check jarvis_graph tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check jarvis_graph tests bench
	$(BIN)/ruff format --check jarvis_graph tests bench

bench: $(STAMP)
	$(BIN)/python bench/overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
