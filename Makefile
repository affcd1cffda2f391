# Hermes — `make demo` shows the tools working end to end; `make test` runs every test.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_VENV ?= .demo-venv
BENCH_VENV ?= .bench-venv
HERMES_AGENT_VENV ?= .hermes-agent-venv
# the first-party packs: every folder of hermes_plugins/ with a pyproject.toml (scripts/packs.py is the one list)
PACKS := $(shell $(PYTHON) scripts/packs.py)
ifeq ($(PACKS),)
$(error scripts/packs.py found no pack)
endif

.PHONY: install demo test test-fast lint bench bench-vs-hermes-agent docs dist wheelhouse clean compat

$(BIN)/hermes: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(BIN)/hermes

demo:
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q --disable-pip-version-check . $(addprefix ./hermes_plugins/,$(PACKS))
	HERMES_HOME="$(CURDIR)/$(DEMO_VENV)/hermes-home" PATH="$(CURDIR)/$(DEMO_VENV)/bin:$$PATH" \
		$(DEMO_VENV)/bin/python examples/demo.py

test: lint
	$(BIN)/python -m pytest -n 2

# every test but the ones that build wheels and venvs (marked slow)
test-fast: lint
	$(BIN)/python -m pytest -n 2 -m "not slow"

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

# sdists and wheels of hermes-tools and the first-party packs, checked with twine --strict (what a release publishes)
dist: install
	rm -rf dist
	$(BIN)/python scripts/build_dist.py dist --no-isolation

# dist/ plus a wheel of every dependency: `pip install --no-index --find-links wheelhouse hermes-tools ...` offline
wheelhouse: dist
	rm -rf wheelhouse
	$(BIN)/python scripts/build_wheelhouse.py dist wheelhouse

docs: install
	$(BIN)/mkdocs build --strict

# Published Hermes Agent plugins, each in a venv of its own: their status into registry-index/ and the docs' table.
compat: install
	$(BIN)/python scripts/compat.py

# Start-up is measured as users run it: the core and the first-party packs installed (not editable) in their own venv.
$(BENCH_VENV)/bin/python:
	$(PYTHON) -m venv $(BENCH_VENV)

bench: install $(BENCH_VENV)/bin/python
	$(BENCH_VENV)/bin/python -m pip install -q --disable-pip-version-check '.[mcp]' $(addprefix ./hermes_plugins/,$(PACKS))
	$(BENCH_VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall . \
		$(addprefix ./hermes_plugins/,$(PACKS))
	$(BIN)/python bench/dispatch.py
	$(BENCH_VENV)/bin/python bench/startup.py
	$(BIN)/python bench/mcp.py
	$(BIN)/python bench/agent_loop.py
	$(BIN)/python bench/frameworks.py
	$(BIN)/python bench/skills.py
	$(BIN)/python bench/tts.py
	$(BENCH_VENV)/bin/python bench/cron.py
	$(BIN)/python bench/sessions.py

# The same benchmarks beside Hermes Agent 0.19 (installed in a venv of its own, only for the comparison).
$(HERMES_AGENT_VENV)/bin/hermes:
	$(PYTHON) -m venv $(HERMES_AGENT_VENV)
	$(HERMES_AGENT_VENV)/bin/python -m pip install -q --disable-pip-version-check 'hermes-agent==0.19.0'

bench-vs-hermes-agent: $(HERMES_AGENT_VENV)/bin/hermes
	HERMES_AGENT_PYTHON="$(CURDIR)/$(HERMES_AGENT_VENV)/bin/python" $(MAKE) bench

clean:
	rm -rf $(VENV) $(DEMO_VENV) $(BENCH_VENV) $(HERMES_AGENT_VENV) site dist wheelhouse
