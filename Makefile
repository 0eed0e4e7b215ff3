# memoryapp — the two commands are `make run` and `make test`; everything else is a helper.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: help run test deploy-test lint format check migrate shell services-start services-stop services-status bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# CPU torch first: a bare "torch" requirement would pull several GB of CUDA packages.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check "torch==2.13.0"
	$(BIN)/pip install --quiet --disable-pip-version-check -e ".[dev]"
	@touch $(STAMP)

venv: $(STAMP)  ## create .venv and install everything

run: $(STAMP)  ## run the app: PostgreSQL, Redis, a worker, beat and the web server, until Ctrl-C
	$(BIN)/python -m memoryapp.local.serve --host $(HOST) --port $(PORT)

test: $(STAMP)  ## lint, Django checks, migrations check and the test suite on real PostgreSQL + Redis
	$(BIN)/python -m memoryapp.local.embedded exec -- $(MAKE) --no-print-directory _test

_test:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python manage.py check --fail-level WARNING
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python -m pytest $(PYTEST_ARGS)

deploy-test: $(STAMP)  ## only the team deployment test (tests/deployment; needs Debian's redis-server)
	$(BIN)/python -m memoryapp.local.embedded exec -- $(BIN)/python -m pytest tests/deployment $(PYTEST_ARGS)

lint: $(STAMP)  ## ruff check and format check only
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format: $(STAMP)  ## apply ruff fixes and formatting
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

migrate: $(STAMP)  ## apply migrations to the configured database
	$(BIN)/python -m memoryapp.local.embedded exec -- $(BIN)/python manage.py migrate

shell: $(STAMP)  ## Django shell against the configured database
	$(BIN)/python manage.py shell

services-start: $(STAMP)  ## start the embedded PostgreSQL and Redis (stay up until services-stop)
	$(BIN)/python -m memoryapp.local.embedded start

services-stop: $(STAMP)  ## stop the embedded PostgreSQL and Redis
	$(BIN)/python -m memoryapp.local.embedded stop

services-status: $(STAMP)  ## say which servers are in use and whether they run
	$(BIN)/python -m memoryapp.local.embedded status

bench: $(STAMP)  ## time a cold and a warm `make run` start to a healthy /healthz
	$(BIN)/python bench/startup.py

clean:  ## remove the virtualenv (keeps var/, your data)
	rm -rf $(VENV)
