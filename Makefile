# foldkit-agent: every target installs what it needs on its own.
#   make demo   the todo app driven by an agent over real MCP
#   make test   the whole test suite (Python, Node interop peers, the field check's agent
#               frameworks in .venv-field, headless Chromium,
#               a throwaway PostgreSQL cluster, nginx in front of three workers)
#   make unit   the Python suite without Node peers or Chromium (the fast loop)
#   make conformance  the MCP specification's server suite against examples/conformance

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NODE_STAMP := tests/interop/node_modules/.installed
CONFORMANCE_STAMP := tests/conformance/node_modules/.installed
FIELD_VENV := .venv-field
FIELD_STAMP := $(FIELD_VENV)/.installed
CREWAI_VENV := .venv-crewai
CREWAI_STAMP := $(CREWAI_VENV)/.installed
CHROMIUM ?= /usr/bin/chromium
WRK ?= wrk

.PHONY: demo test unit lint format bench soak check install node field field-crewai conformance-node conformance chromium postgres wrk nginx debs prerequisites clean view

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

$(NODE_STAMP): tests/interop/package.json tests/interop/package-lock.json
	# `npm ci` refuses this lockfile (it lacks an optional native package of another
	# platform, an npm quirk); `npm install --no-save` installs the locked versions and
	# leaves the lockfile as committed. better-sqlite3 (under @agent-native/core) compiles
	# SQLite from source here, its longest step: JOBS=max lets node-gyp build its three
	# objects at once.
	cd tests/interop && JOBS=max npm install --no-audit --no-fund --no-save
	touch $(NODE_STAMP)

node: $(NODE_STAMP)

# The todo copilot panel's one script: panel.src.js with the pinned @ag-ui/client, bundled by
# the pinned esbuild; tests/examples/test_copilot_panel.py rebuilds it and compares. One zod
# for every @ag-ui package (@ag-ui/core takes 3 or 4; the client ships 3): half the size.
.PHONY: copilot-panel
PANEL_DIR := examples/todo_web/copilot_panel
PANEL_OUT ?= $(PANEL_DIR)/panel.js
copilot-panel: | $(NODE_STAMP)
	NODE_PATH=tests/interop/node_modules tests/interop/node_modules/.bin/esbuild \
	  $(PANEL_DIR)/panel.src.js --bundle --minify --format=iife --target=es2020 \
	  --legal-comments=none --log-level=warning --outfile=$(PANEL_OUT) \
	  --alias:zod=./tests/interop/node_modules/@ag-ui/client/node_modules/zod

# The field check's agent frameworks whose MCP clients need the mcp 1.x SDK (LangChain's MCP
# adapters, Google ADK, mcp-use, smolagents, LlamaIndex) cannot share .venv (mcp 2.3): they
# get a venv of their own, and tests/interop/test_field_check.py runs each as a client process
# against `foldkit-agent serve` (about 3 minutes to install on a busy 2-core machine).
$(FIELD_STAMP): tests/interop/field/requirements.txt
	$(PYTHON) -m venv --clear $(FIELD_VENV)
	$(FIELD_VENV)/bin/python -m pip install -q --upgrade pip
	$(FIELD_VENV)/bin/python -m pip install -q -r tests/interop/field/requirements.txt
	touch $(FIELD_STAMP)

field: $(FIELD_STAMP)

# CrewAI cannot share .venv-field (its OpenTelemetry and pydantic pins conflict with ADK's) and
# is large (1.1 GB, 4 minutes), so make test leaves it out; once this has installed it, the
# field check runs CrewAI too.
$(CREWAI_STAMP): tests/interop/field/crewai-requirements.txt
	$(PYTHON) -m venv --clear $(CREWAI_VENV)
	$(CREWAI_VENV)/bin/python -m pip install -q --upgrade pip
	$(CREWAI_VENV)/bin/python -m pip install -q -r tests/interop/field/crewai-requirements.txt
	touch $(CREWAI_STAMP)

field-crewai: $(CREWAI_STAMP)

# The conformance suite needs Node 22 (it uses fs.globSync); the `node` npm package brings
# that Node into tests/conformance/node_modules/.bin, which the suite's test puts first on PATH,
# so the interop peers keep the machine's Node.
$(CONFORMANCE_STAMP): tests/conformance/package.json tests/conformance/package-lock.json
	cd tests/conformance && npm install --no-audit --no-fund --no-save
	touch $(CONFORMANCE_STAMP)

conformance-node: $(CONFORMANCE_STAMP)

# The generated MCP Apps view's one self-contained script: view.src.js with the pinned
# @modelcontextprotocol/ext-apps bundled in (its App speaks to the host). Commit the result;
# tests/adapters/mcp/test_view_bundle.py rebuilds it and compares.
VIEW_DIR := src/foldkit_agent/adapters/mcp/view
VIEW_OUT ?= $(VIEW_DIR)/view.js
view: | $(NODE_STAMP)
	NODE_PATH=tests/interop/node_modules tests/interop/node_modules/.bin/esbuild \
	  $(VIEW_DIR)/view.src.js --bundle --minify --format=iife --target=es2020 \
	  --legal-comments=none --log-level=warning --outfile=$(VIEW_OUT)

# Every server scenario of @modelcontextprotocol/conformance against
# `foldkit-agent serve examples.conformance:runtime`; a failure not in
# tests/conformance/expected-failures.yml fails (make test runs the same test).
conformance: $(STAMP) $(CONFORMANCE_STAMP)
	FOLDKIT_NO_SKIP=1 $(PY) -m pytest -q tests/examples/test_conformance.py

# The Debian packages the suites need, each with how to tell it is installed and what wants it.
# The single-package targets below (make chromium, make postgres...) and the suites' own
# recipes install through deb_install, so a fresh machine runs one apt-get update and one
# install for everything missing instead of one of each per package.
DEBS := chromium postgresql wrk nginx
DEB_CHECK_chromium   = [ -x "$(CHROMIUM)" ]
DEB_WHY_chromium     = the browser tests
# the audit tests start a throwaway PostgreSQL cluster from Debian's server binaries
# (tests/support/postgres.py); no service is started here and none is left running
DEB_CHECK_postgresql = ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
DEB_WHY_postgresql   = the PostgreSQL audit tests
# make bench's load scenarios (bench/wrk.py) drive the servers with Debian's wrk, a native
# load generator; the suite's smoke test of them (tests/test_bench.py) needs it too (or put
# a wrk built from its source on PATH)
DEB_CHECK_wrk        = command -v "$(WRK)" >/dev/null 2>&1
DEB_WHY_wrk          = the load benchmarks
# the deploy tests and `python -m deploy` run Debian's nginx from a temporary folder
# (deploy/stack.py); Debian's package starts no service here and none is left running
DEB_CHECK_nginx      = command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]
DEB_WHY_nginx        = the deploy tests

# $(call deb_install,PACKAGES): one apt-get for those of PACKAGES not installed yet.
define deb_install
@missing=""; \
$(foreach p,$(1),if ! { $(DEB_CHECK_$(p)); }; then \
  echo "installing Debian's $(p) for $(DEB_WHY_$(p))"; missing="$$missing $(p)"; fi; ) \
if [ -n "$$missing" ]; then \
  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing) \
  || { echo "could not install$$missing: run 'sudo apt-get install$$missing' and retry"; exit 1; }; \
fi
endef

chromium:
	$(call deb_install,chromium)

postgres:
	$(call deb_install,postgresql)

wrk:
	$(call deb_install,wrk)

nginx:
	$(call deb_install,nginx)

debs:
	$(call deb_install,$(DEBS))

# What make test needs before it runs, each independent of the others: .ci/run builds them
# with make -j so the installs overlap.
prerequisites: $(STAMP) node field conformance-node debs

demo: $(STAMP)
	$(VENV)/bin/foldkit-agent demo

# The suite runs on TEST_WORKERS pytest-xdist workers (one per core by default), a test file
# to a worker: each worker has its own temporary folders, free ports and throwaway PostgreSQL
# cluster, and a file's module-scoped servers start once.
TEST_WORKERS ?= auto
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadfile

test: $(STAMP) node field conformance-node
	$(call deb_install,$(DEBS))
	FOLDKIT_NO_SKIP=1 $(PY) -m pytest -q $(PYTEST_PARALLEL)

# Every test that needs a Node peer or Chromium carries the `interop` or `browser` marker
# (tests/test_architecture.py checks that), so this needs neither installed; the audit
# tests' throwaway PostgreSQL cluster and the deploy tests' nginx stay in.
unit: $(STAMP)
	$(call deb_install,postgresql wrk nginx)
	FOLDKIT_NO_SKIP=1 $(PY) -m pytest -q $(PYTEST_PARALLEL) -m "not interop and not browser"

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests examples bench deploy
	$(VENV)/bin/ruff format --check src tests examples bench deploy
	$(VENV)/bin/pyright
	# strict pyright on tests/typing/cases and examples/: each marked line rejected, the rest clean
	$(PY) -m tests.typing.check

format: $(STAMP)
	$(VENV)/bin/ruff format src tests examples bench deploy
	$(VENV)/bin/ruff check --fix src tests examples bench deploy

check: lint test

# Scenario 17 (bench/workers.py) runs the deploy stack: nginx in front of workers on PostgreSQL.
bench: $(STAMP)
	$(call deb_install,wrk nginx postgresql)
	$(PY) -m bench $(BENCH_ARGS)

soak: $(STAMP)
	$(PY) -m pytest -q -m soak tests/hardening --soak-seconds=60

clean:
	rm -rf $(VENV) $(FIELD_VENV) $(CREWAI_VENV) tests/interop/node_modules tests/conformance/node_modules .pytest_cache
