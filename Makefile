# Jarvis Graph — set-up and main targets. `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# llama-cpp-python builds from source, about 8 minutes on 2 cores. Not for the build machine's
# own CPU (-march=native): on a CPU that reports AMX or AVX-512 that its virtual machine does
# not enable, llama.cpp dies with SIGILL on the first long prompt, and pip's wheel cache would
# hand such a wheel to every later install on any machine. So the wheel is built once for
# x86-64-v3 (AVX2, FMA, F16C), kept in a folder named for that, and installed only from there.
LLAMA_VERSION := 0.3.36
LLAMA_WHEELS ?= $(HOME)/.cache/jarvis-graph/wheels/llama-cpp-python-$(LLAMA_VERSION)-x86-64-v3
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
    -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
# An MCP server from npm that the tests run (stdio and streamable HTTP); installed once.
EVERYTHING_VERSION := 2026.8.31
EVERYTHING := .cache/mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js
# The web console draws graphs with Mermaid, served from the package (nothing from a CDN):
# its build from the npm registry, copied once into jarvis_graph/ui/static/vendor/.
MERMAID_VERSION := 12.3.0
MERMAID := jarvis_graph/ui/static/vendor/mermaid.min.js
# bfcl-eval (data and checkers of bench/bfcl.py and its test) goes in without its requirements,
# which pull torch and vendor SDKs; the modules it imports are the `bench` extra. pip then lists
# the requirements left out as conflicts: expected.
BFCL_EVAL_VERSION := 2026.3.23

# `jarvis serve` runs in an environment of its own (see the `serve` extra in pyproject.toml).
SERVE_VENV  ?= .venv-serve
SERVE_STAMP := $(SERVE_VENV)/.installed

.PHONY: demo demo-scripted test lint bench clean mcp-test-servers serve-env ui-assets

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(LLAMA_WHEELS)/.built: | $(BIN)/python
	mkdir -p $(LLAMA_WHEELS)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel --quiet --no-deps --no-cache-dir \
	    "llama-cpp-python==$(LLAMA_VERSION)" -w $(LLAMA_WHEELS)
	touch $@

# The package's bytecode is compiled here, as pip does for installed packages, so that it is
# not compiled on every start where PYTHONDONTWRITEBYTECODE is set (a stale file is ignored).
$(STAMP): $(BIN)/python pyproject.toml $(LLAMA_WHEELS)/.built
	$(BIN)/pip install --quiet --no-deps --force-reinstall \
	    $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/pip install --quiet --only-binary llama-cpp-python --find-links $(LLAMA_WHEELS) \
	    -e ".[dev,local,local-0.5b,bench,postgres,web,images,docs,ui]"
	$(BIN)/pip install --quiet --no-deps "bfcl-eval==$(BFCL_EVAL_VERSION)"
	$(BIN)/python -m compileall -q jarvis_graph > /dev/null
	touch $(STAMP)

$(MERMAID):
	npm install --silent --no-audit --no-fund --prefix .cache/ui-npm mermaid@$(MERMAID_VERSION)
	mkdir -p $(dir $(MERMAID))
	cp .cache/ui-npm/node_modules/mermaid/dist/mermaid.min.js $(MERMAID)

ui-assets: $(MERMAID)

# The main job: the embedded local model, no API key, no network.
demo: $(STAMP) $(MERMAID)
	$(BIN)/jarvis models pull local
	@cd examples/workspace && ../../$(BIN)/jarvis run -n --yes --platform local \
	    'Look at the files in this workspace, then run `python3 report.py` and tell me the total it prints and how many rows it read.'

# The same workspace driven by a scripted model (instant, shows a multi-step run).
demo-scripted: $(STAMP)
	@cd examples/workspace && ../../$(BIN)/jarvis run -n --yes \
	    --platform scripted --script ../demo_script.yaml \
	    "Find the Python files, read the data file and run the report script; what total does it print?"

$(SERVE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(SERVE_VENV)
	$(SERVE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SERVE_VENV)/bin/pip install --quiet -e ".[serve]"
	touch $@

serve-env: $(SERVE_STAMP)

$(EVERYTHING):
	npm install --silent --no-audit --no-fund --prefix .cache/mcp-npm \
	    @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION)

mcp-test-servers: $(EVERYTHING)

test: $(STAMP) $(SERVE_STAMP) $(EVERYTHING) $(MERMAID)
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
	$(BIN)/pip install --quiet -e ".[dev,local,local-0.5b,bench,postgres,web,images,docs]"
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
	rm -rf $(VENV) $(SERVE_VENV) .pytest_cache .ruff_cache .mypy_cache .cache
