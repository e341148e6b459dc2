# Jarvis Graph — set-up and main targets. `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# llama-cpp-python builds from source (about 8 minutes on 2 cores the first time; pip's
# wheel cache makes later installs take seconds). LLaVA is not needed.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF
# An MCP server from npm that the tests run (stdio and streamable HTTP); installed once.
EVERYTHING_VERSION := 2026.8.31
EVERYTHING := .cache/mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js
# bfcl-eval (data and checkers of bench/bfcl.py and its test) goes in without its requirements,
# which pull torch and vendor SDKs; the modules it imports are the `bench` extra. pip then lists
# the requirements left out as conflicts: expected.
BFCL_EVAL_VERSION := 2026.3.23

.PHONY: demo demo-scripted test lint bench clean mcp-test-servers

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The package's bytecode is compiled here, as pip does for installed packages, so that it is
# not compiled on every start where PYTHONDONTWRITEBYTECODE is set (a stale file is ignored).
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[dev,local,bench]"
	$(BIN)/pip install --quiet --no-deps "bfcl-eval==$(BFCL_EVAL_VERSION)"
	$(BIN)/python -m compileall -q jarvis_graph > /dev/null
	touch $(STAMP)

# The main job: the embedded local model, no API key, no network.
demo: $(STAMP)
	$(BIN)/jarvis models pull local
	@cd examples/workspace && ../../$(BIN)/jarvis run -n --yes --platform local \
	    "Look at the files in this workspace, then run report.py with python3 and tell me the total it prints and how many rows it read."

# The same workspace driven by a scripted model (instant, shows a multi-step run).
demo-scripted: $(STAMP)
	@cd examples/workspace && ../../$(BIN)/jarvis run -n --yes \
	    --platform scripted --script ../demo_script.yaml \
	    "Find the Python files, read the data file and run the report script; what total does it print?"

$(EVERYTHING):
	npm install --silent --no-audit --no-fund --prefix .cache/mcp-npm \
	    @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION)

mcp-test-servers: $(EVERYTHING)

test: $(STAMP) $(EVERYTHING)
	$(BIN)/ruff check jarvis_graph tests bench
	$(BIN)/ruff format --check jarvis_graph tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check jarvis_graph tests bench
	$(BIN)/ruff format --check jarvis_graph tests bench
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/pip install --quiet -e ".[dev,local,bench]"
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/local_agent.py
	$(BIN)/python bench/local_threads.py
	$(BIN)/python bench/mcp_calls.py
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/local_decode.py
	$(BIN)/python bench/planner.py
	$(BIN)/python bench/checkpoints.py
	$(BIN)/python bench/tool_filter.py
	$(BIN)/python bench/sec_speed.py
	$(BIN)/python bench/kill_resume.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .cache
