# Dados: `make run` serves the app on SQLite, `make test` runs every check.
PYTHON ?= python3.12
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000

# Local serving runs with DEBUG on and a throwaway key; production sets its own.
RUN_ENV := DEBUG=$${DEBUG:-true}
TEST_ENV := DEBUG=false SECURE_SSL_REDIRECT=false SECRET_KEY=dados-test-only-secret-key-not-for-deployment-0123456789

.PHONY: run test bench lint format migrate venv clean chromium

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet -e . --group dev
	touch $(STAMP)

venv: $(STAMP)

# English: the .po file is the source, the compiled .mo is built here (ignored by git).
# Defined before any rule that lists $(MO) as a prerequisite: make expands those at once.
MO := locale/en/LC_MESSAGES/django.mo
$(MO): locale/en/LC_MESSAGES/django.po locale/es/LC_MESSAGES/django.po $(STAMP)
	@command -v msgfmt >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext; \
	  else \
	    echo "gettext is missing: run 'sudo apt-get install gettext' and try again." >&2; exit 1; \
	  fi; }
	DEBUG=true $(BIN)/python manage.py compilemessages --ignore=.venv --ignore=node_modules -v0

migrate: $(STAMP) $(MO)
	$(RUN_ENV) $(BIN)/python manage.py migrate --noinput

run: migrate
	$(RUN_ENV) $(BIN)/python manage.py bootstrap_admin
	$(RUN_ENV) $(BIN)/python manage.py runserver $(HOST):$(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# axe-core, injected into pages by the accessibility tests.
node_modules/.installed-stamp: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The browser tests drive Debian's Chromium; Playwright's own download does not work here.
chromium:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else \
	    echo "Chromium is missing: run 'sudo apt-get install chromium' and try again." >&2; exit 1; \
	  fi; }

# The whole suite twice: on SQLite, then on a throwaway PostgreSQL server.
test: $(STAMP) $(MO) lint chromium node_modules/.installed-stamp
	$(TEST_ENV) $(BIN)/python manage.py makemigrations --check --dry-run
	$(TEST_ENV) $(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(TEST_ENV) $(BIN)/pytest
	$(TEST_ENV) $(BIN)/python scripts/with_postgres.py -- $(BIN)/pytest -p no:cacheprovider

# Club-night load test (bench/run.py): N tables of 6 phones against gunicorn with production
# settings, SQLite then PostgreSQL; fails when N=50 misses p95 <= 100 ms or any request fails.
# Quick look: BENCH_ARGS="--db sqlite --tables 10 --runs 1 --duration 10"; --write-results
# updates bench/RESULTS.md.
BENCH_ARGS ?=
bench: $(STAMP) $(MO) chromium
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .ruff_cache .hypothesis bench/.cache
