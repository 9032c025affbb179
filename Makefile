# The two commands a fresh machine needs: `make bench` (the main job) and
# `make test`. Both do all the set-up: virtual environment, a Docker engine
# with Compose v2 (installed and started only when none answers), images;
# `make test` also a headless Chromium with its driver for the HTML reports'
# browser test (installed only when missing), and it builds docs/ (make docs).

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: setup venv engine browser images bench perf test test-repeat unit integration lint docs reference compose clean

venv: $(STAMP)
$(STAMP): pyproject.toml
	rm -f $(VENV)/.installed-*
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[test]'
	touch $@

engine:
	scripts/ensure-docker

browser:
	scripts/ensure-browser

images: venv engine
	$(BIN)/vnetbench images build

setup: venv engine images

# Ends with the paths of report.md and report.html (vnetbench report prints both).
# The matrix's exit status is make bench's (docs/exit-status.md): a measured miss (1: a
# pass failed, named on stderr and in the report) still gets its report first; bad
# input (2), the environment (3) or an interrupt (130) leave no run to report on.
bench: setup
	status=0; $(BIN)/vnetbench matrix --out results | tee .bench-dir || status=$$?; \
	if [ "$$status" -le 1 ]; then $(BIN)/vnetbench report "$$(tail -n 1 .bench-dir)"; fi; \
	exit $$status

# The testbed's own benchmark: this machine's limits and vnetbench's cost, each
# figure against its target (see docs/cost.md, "The testbed's own cost").
perf: setup
	$(BIN)/vnetbench calibrate --scale --out results

# ...and vNet's CI gate: the workflow (shellcheck on its steps too) and its script.
lint: venv
	$(BIN)/ruff check vnetbench tests research
	$(BIN)/mypy vnetbench
	$(BIN)/actionlint -shellcheck $(BIN)/shellcheck docs/ci/vnet-gate.yml
	$(BIN)/shellcheck scripts/vnet-gate images/tools/vnetbench-fault

# docs/ as a site in .site/, strict: a broken link or anchor, or a page missing
# from mkdocs.yml's nav, fails (and so fails `make test`).
docs: venv
	$(BIN)/mkdocs build --strict --site-dir .site

# Rewrite docs/reference/'s generated pages from the CLI and the scenarios' declarations
# after a change to either (tests/unit/generators/test_docsgen.py fails until they are).
reference: venv
	$(BIN)/python -m vnetbench.generators.docsgen

# The unit tests and the research campaigns' own (research/test_*.py: their plans,
# resuming and readers, no engine), on every core.
UNIT_TESTS := tests/unit research

unit: venv
	$(BIN)/pytest $(UNIT_TESTS)

integration: setup browser
	TESTCONTAINERS_RYUK_DISABLED=true $(BIN)/pytest -n 0 --durations=12 tests/integration

# Lint and the docs, then the unit tests (research/'s too) with no engine reachable
# at all (they must not need one), then the integration tests on the real engine. The set-up
# (engine, images, browser: 1-3 minutes on a fresh machine, mostly waiting on
# debootstrap and apt) runs meanwhile, its output kept in .setup.log and shown
# once the unit tests are done; it must have succeeded before the integration tests.
test: venv
	rm -f .setup.log; $(MAKE) --no-print-directory setup browser > .setup.log 2>&1 & setup=$$!; \
	checks=0; { $(MAKE) --no-print-directory lint docs && \
	  DOCKER_HOST=unix:///nonexistent $(BIN)/pytest $(UNIT_TESTS); } || checks=$$?; \
	if kill -0 $$setup 2>/dev/null; then echo "waiting for the set-up (engine, images, browser; its log: .setup.log)"; fi; \
	ready=0; wait $$setup || ready=$$?; echo "--- set-up (make setup browser):"; cat .setup.log; \
	if [ $$checks -ne 0 ]; then exit $$checks; fi; if [ $$ready -ne 0 ]; then exit $$ready; fi
	TESTCONTAINERS_RYUK_DISABLED=true $(BIN)/pytest -n 0 --durations=12 tests/integration

# The integration suite N times on this clone (make test-repeat N=5), then every test
# that failed in any run, with the runs it failed in (tests/repeat.py reads each run's
# JUnit XML); exits 1 when any test failed in any run.
N ?= 5
test-repeat: setup browser
	rm -rf .repeat && mkdir -p .repeat
	for run in $$(seq $(N)); do \
	  TESTCONTAINERS_RYUK_DISABLED=true $(BIN)/pytest -n 0 -q -p no:cacheprovider tests/integration \
	    --junitxml=.repeat/run-$$run.xml || true; done
	$(BIN)/python -m tests.repeat $$(seq -f '.repeat/run-%g.xml' $(N))

# Re-render the committed example compose files after a template change.
compose: venv
	$(BIN)/python -m vnetbench.generators.examples

clean: venv
	$(BIN)/vnetbench clean
