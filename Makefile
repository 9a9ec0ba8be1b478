# Two commands work on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT := out

.PHONY: venv test lint typecheck pytest demo bench bench-analysis docs clean codegen

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
	$(BIN)/stepswitch compile graphs/support.py:support -o $(OUT)/support_runner.py
	cmp $(OUT)/support_runner.py codegen/support.py
	$(BIN)/stepswitch compile graphs/support.py:support -o codegen/support.py --check
	$(BIN)/python examples/generated_runner.py
	$(BIN)/stepswitch check graphs/
	-$(BIN)/stepswitch check examples/broken_workflow.py

bench: venv
	$(BIN)/python bench/bench_build.py
	$(BIN)/python bench/bench_analysis.py
	$(BIN)/python bench/bench_codegen.py

bench-analysis: venv
	$(BIN)/python bench/bench_analysis.py

# docs/diagnostics/ is generated from the pages shipped in src/stepswitch/analysis/docs/.
docs: venv
	$(BIN)/python -c "import json, stepswitch.graph.spec as s; print(json.dumps(s.spec_json_schema(), indent=2, sort_keys=True))" > docs/spec.schema.json
	$(BIN)/python -m stepswitch.analysis.export_docs docs/diagnostics

# One runner per workflow file: graphs/x.py -> codegen/x.py (tests fail when one is stale).
codegen: venv
	@for f in graphs/*.py; do \
	  case $$f in */__init__.py) continue;; esac; \
	  $(BIN)/stepswitch compile $$f -o codegen/$$(basename $$f) || exit 1; \
	done

clean:
	rm -rf $(VENV) $(OUT) .mypy_cache .ruff_cache .pytest_cache
