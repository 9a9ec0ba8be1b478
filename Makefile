# Two commands work on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT := out

.PHONY: venv test lint typecheck pytest demo bench clean diagrams golden

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: venv
	$(BIN)/ruff check src tests graphs examples bench codegen

typecheck: venv
	$(BIN)/mypy --strict src

pytest: venv
	$(BIN)/pytest -q

test: lint typecheck pytest

demo: venv
	@mkdir -p $(OUT)
	$(BIN)/stepswitch show graphs/support.py:support
	$(BIN)/stepswitch render graphs/support.py:support --format svg -o $(OUT)/support.svg
	$(BIN)/stepswitch render graphs/support.py:support --format mermaid

bench: venv
	$(BIN)/python bench/bench_build.py
	$(BIN)/python bench/bench_render.py

# Rewrite the diagram gallery in docs/diagrams.md from every workflow in graphs/.
diagrams: venv
	$(BIN)/python -m stepswitch.cli._gallery graphs docs/diagrams.md

# Rewrite the renderer's golden Mermaid/DOT files; review the diff before committing.
golden: venv
	STEPSWITCH_REGEN_GOLDEN=1 $(BIN)/pytest -q tests/render/test_mermaid.py tests/render/test_dot.py

clean:
	rm -rf $(VENV) $(OUT) .mypy_cache .ruff_cache .pytest_cache
