# The operations contract: setup, run, test, binary, lint (see README.md).
SHELL := /bin/bash
PY312 := $(shell command -v python3.12 2>/dev/null)
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: setup run test test-crash test-postgres test-postgres-all lint format binary bench bench-http clean vendor-maplibre

$(VENV)/.installed: requirements.lock pyproject.toml
	@if [ -z "$(PY312)" ]; then \
	  echo "Python 3.12 is required and python3.12 was not found on PATH."; \
	  echo "Install it (for example: pyenv install 3.12.1, or apt-get install python3.12) and run make again."; \
	  exit 1; fi
	@[ -x $(PY) ] || $(PY312) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

# anvil (Foundry's local Ethereum node) for the JSON-RPC chain tests, from the npm registry.
ANVIL_VERSION := 1.7.1
ANVIL := .tools/node_modules/.bin/anvil
$(ANVIL):
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-audit --no-fund --prefix .tools @foundry-rs/anvil-linux-amd64@$(ANVIL_VERSION); \
	else echo "npm not found: the tests against anvil will be skipped"; fi

setup: $(VENV)/.installed $(ANVIL)

run: setup
	$(VENV)/bin/appliance demo

test: setup
	$(PY) -m pytest -n 2 --dist loadfile --ignore=tests/crash $(PYTEST_ARGS)

# kill -9 of a real server mid-stream, three rounds (tests/crash, about 75 s): CI's crash stage.
test-crash: setup
	$(PY) -m pytest -p no:xdist tests/crash $(PYTEST_ARGS)

# The database-layer tests against a real PostgreSQL server started on a loopback port.
test-postgres: setup
	bash .ci/postgres.sh $(PY) -m pytest -m postgres $(PYTEST_ARGS)

# The whole suite on PostgreSQL: every test's app on its own pair of databases copied from
# templates (tests/conftest.py), against the same throwaway server.
test-postgres-all: setup
	bash .ci/postgres.sh env APPLIANCE_TEST_BACKEND=postgres $(PY) -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy appliance

format: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The one-folder bundle (pyinstaller.spec), packed behind packaging/launcher.c: docs/packaging.md.
binary: setup
	$(VENV)/bin/pyinstaller --noconfirm --clean pyinstaller.spec
	$(PY) packaging/pack.py dist/appliance-onedir dist/appliance

bench: setup
	@for b in bench/*/run.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# HTTP from outside: wrk against the appliance and a bare Flask + waitress + SQLite app (bench/http).
bench-http: setup
	$(PY) bench/http/run.py $(BENCH_ARGS)

clean:
	rm -rf build dist .pytest_cache .ruff_cache .mypy_cache

# MapLibre GL JS for the tracking page, vendored (committed) so that no npm is needed at run time.
MAPLIBRE_VERSION := 5.9.0
vendor-maplibre:
	rm -rf build/maplibre && mkdir -p build/maplibre static/vendor/maplibre-gl
	cd build/maplibre && npm pack --silent maplibre-gl@$(MAPLIBRE_VERSION) && tar xzf maplibre-gl-$(MAPLIBRE_VERSION).tgz
	cp build/maplibre/package/dist/maplibre-gl.js build/maplibre/package/dist/maplibre-gl.css \
	   build/maplibre/package/LICENSE.txt static/vendor/maplibre-gl/
	echo "maplibre-gl $(MAPLIBRE_VERSION) from the npm registry; BSD-3-Clause, see LICENSE.txt" > static/vendor/maplibre-gl/VERSION
