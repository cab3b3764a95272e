# The operations contract: setup, run, test, binary, lint (see README.md).
SHELL := /bin/bash
PY312 := $(shell command -v python3.12 2>/dev/null)
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: setup run test test-postgres lint format binary bench clean

$(VENV)/.installed: requirements.lock pyproject.toml
	@if [ -z "$(PY312)" ]; then \
	  echo "Python 3.12 is required and python3.12 was not found on PATH."; \
	  echo "Install it (for example: pyenv install 3.12.1, or apt-get install python3.12) and run make again."; \
	  exit 1; fi
	@[ -x $(PY) ] || $(PY312) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

setup: $(VENV)/.installed

run: setup
	$(VENV)/bin/appliance demo

test: setup
	$(PY) -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

# The database-layer tests against a real PostgreSQL server started on a loopback port.
test-postgres: setup
	bash .ci/postgres.sh $(PY) -m pytest -m postgres $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy appliance

format: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

binary: setup
	$(VENV)/bin/pyinstaller --noconfirm --clean pyinstaller.spec

bench: setup
	@for b in bench/*/run.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf build dist .pytest_cache .ruff_cache .mypy_cache
