# Two commands work on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT := out
GALLERY := graphs examples/broken_workflow.py

# The studio's browser tests drive Debian's chromium through Playwright (no browser download).
CHROMIUM := /usr/bin/chromium

.PHONY: chromium venv test lint typecheck pytest demo bench bench-analysis bench-render docs diagrams golden mermaid-js codegen clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

chromium:
	@test -x $(CHROMIUM) || (apt-get update -qq && apt-get install -y -qq chromium)

lint: venv
	$(BIN)/ruff check $(wildcard src tests graphs examples bench codegen)

# mypy --strict over the library, the checked-in runners, the runners written only to be
# checked (hostile names, every step rule) and the tests, in one mypy run; ruff over the
# written runners too. Module names come from the paths (src/ is a base), so the tests'
# `import codegen.support` and the file codegen/support.py are one module.
typecheck: venv
	@rm -rf $(OUT)/typecheck
	$(BIN)/python -m tests.codegen.write_runners $(OUT)/typecheck
	$(BIN)/ruff check --no-cache $(OUT)/typecheck
	$(BIN)/ruff format --check --no-cache codegen $(OUT)/typecheck
	MYPYPATH=src $(BIN)/mypy --strict --explicit-package-bases src/stepswitch codegen $(OUT)/typecheck tests

# The suite on PYTEST_WORKERS pytest-xdist workers (`make test PYTEST_WORKERS=0` runs it in
# one process). Most tests wait on a subprocess, a server or the browser rather than
# compute, so 4 workers beat 2 on a 2-core machine. Each worker starts its own Temporal
# dev server (tests/temporal/conftest.py); every other resource a test uses is its own
# (tmp_path, free ports, random schema/prefix/queue names), so any split is safe.
PYTEST_WORKERS ?= 4

pytest: venv chromium
	$(BIN)/pytest -q --durations=10 -n $(PYTEST_WORKERS)

test: lint typecheck pytest

demo: venv chromium
	@mkdir -p $(OUT)
	@echo "== 1. the support workflow, as declared in graphs/support.py"
	$(BIN)/stepswitch show graphs/support.py:support
	@echo "== 2. static checks: graphs/ is clean; a deliberately broken example is not"
	$(BIN)/stepswitch check graphs/
	$(BIN)/stepswitch check examples/broken_workflow.py; test $$? -eq 1 && echo "(exit 1, as expected: this example is broken on purpose)"
	@echo "== 3. diagrams: SVG through Graphviz, Mermaid for GitHub"
	$(BIN)/stepswitch render graphs/support.py:support --format svg -o $(OUT)/support.svg
	$(BIN)/stepswitch render graphs/support.py:support --format mermaid
	@echo "== 4. compile and run on a scripted model: pause for approval, save, load, resume"
	$(BIN)/python examples/support_run.py --state $(OUT)/support_state.json
	@echo "== 5. codegen: a standalone runner module, identical to the checked-in one"
	$(BIN)/stepswitch compile graphs/support.py:support -o $(OUT)/support_runner.py
	cmp $(OUT)/support_runner.py codegen/support.py
	$(BIN)/stepswitch compile graphs/support.py:support -o codegen/support.py --check
	$(BIN)/python examples/generated_runner.py
	@echo "== 6. the real openai client over HTTP against the scripted server, both APIs"
	$(BIN)/python examples/support_over_http.py
	@echo "== 7. a conversation kept in a session: the second message goes straight to the refund agent"
	@rm -f $(OUT)/chat.db $(OUT)/chat.db-wal $(OUT)/chat.db-shm
	printf 'I want a refund\norder 42, it arrived damaged\n' | $(BIN)/stepswitch chat graphs/support.py:support --model scripted:examples/support_chat.json --approve all --session sqlite:///$(OUT)/chat.db --session-id demo
	@echo "== 8. the studio page in headless chromium: screenshots of an agent, a recorded run and a diff"
	$(BIN)/python examples/studio_screens.py $(OUT)
	@echo "== 9. the hosted Agents API: the support workflow as one session, against the bundled scripted server"
	$(BIN)/python examples/support_agents_api.py

bench: venv
	$(BIN)/python bench/bench_build.py
	$(BIN)/python bench/bench_analysis.py
	$(BIN)/python bench/bench_codegen.py
	$(BIN)/python bench/bench_runtime.py
	$(BIN)/python bench/bench_render.py
	$(BIN)/python bench/bench_openai_http.py
	$(BIN)/python bench/bench_sessions.py
	$(BIN)/python bench/bench_interop.py
	$(BIN)/python bench/bench_review.py
	$(BIN)/python bench/bench_flows.py

bench-analysis: venv
	$(BIN)/python bench/bench_analysis.py

bench-render: venv
	$(BIN)/python bench/bench_render.py

# docs/diagnostics/ is generated from the pages shipped in src/stepswitch/analysis/docs/.
docs: venv
	$(BIN)/python -c "import json, stepswitch.graph.spec as s; print(json.dumps(s.spec_json_schema(), indent=2, sort_keys=True))" > docs/spec.schema.json
	$(BIN)/python -m stepswitch.analysis.export_docs docs/diagnostics
	$(BIN)/python -m stepswitch.review.export_docs docs/trail
	$(BIN)/python -m stepswitch.cli._gallery docs/diagrams.md $(GALLERY)

# Rewrite the diagram gallery in docs/diagrams.md: every workflow in graphs/, then the
# broken example (to show findings drawn on a diagram).
diagrams: venv
	$(BIN)/python -m stepswitch.cli._gallery docs/diagrams.md $(GALLERY)

# Parse every golden Mermaid file with the real mermaid.js (needs node and npm; not
# part of `make test`).
mermaid-js: venv
	npm install --silent --no-audit --no-fund --prefix $(OUT)/mermaid-js mermaid@11 jsdom
	cp tests/render/mermaid_js/check.mjs $(OUT)/mermaid-js/
	node $(OUT)/mermaid-js/check.mjs tests/render/golden/*.mmd

# Rewrite the renderer's golden Mermaid/DOT files; review the diff before committing.
golden: venv
	STEPSWITCH_REGEN_GOLDEN=1 $(BIN)/pytest -q tests/render/test_mermaid.py tests/render/test_dot.py

# One runner per workflow file: graphs/x.py -> codegen/x.py (tests fail when one is stale).
codegen: venv
	@for f in graphs/*.py; do \
	  case $$f in */__init__.py) continue;; esac; \
	  $(BIN)/stepswitch compile $$f -o codegen/$$(basename $$f) || exit 1; \
	done

clean:
	rm -rf $(VENV) $(OUT) .mypy_cache .ruff_cache .pytest_cache
