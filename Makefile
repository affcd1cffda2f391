# Hermes — `make demo` shows the tools working end to end; `make test` runs every test.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_VENV ?= .demo-venv
PACKS := file terminal web code agent ssh

.PHONY: install demo test lint bench docs dist clean

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

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

# sdists and wheels of hermes-tools and the five packs, checked with twine --strict (what a release publishes)
dist: install
	rm -rf dist
	$(BIN)/python scripts/build_dist.py dist --no-isolation

docs: install
	$(BIN)/mkdocs build --strict

bench: install
	$(BIN)/python bench/dispatch.py
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/mcp.py
	$(BIN)/python bench/agent_loop.py

clean:
	rm -rf $(VENV) $(DEMO_VENV) site dist
