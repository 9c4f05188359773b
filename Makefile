# Dados: `make run` serves the app on SQLite, `make test` runs every check.

# The virtualenv's Python: the first of PYTHONS on the PATH that is 3.12 or newer, looked
# for only when a recipe needs it; `make PYTHON=/path/to/python3 …` overrides it. python3.12
# comes first so that CI, through pyenv's shims, keeps the version .python-version names.
PYTHONS := python3.12 python3.13 python3.14 python3
python_is_new_enough := import sys; sys.exit(sys.version_info < (3, 12))
no_python := No Python 3.12 or newer on the PATH (tried $(PYTHONS)): install one, or name \
  it with make PYTHON=/path/to/python3
PYTHON ?= $(or $(shell for p in $(PYTHONS); do command -v $$p >/dev/null && \
  $$p -c '$(python_is_new_enough)' 2>/dev/null && { echo $$p; break; }; done),$(error $(no_python)))
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000

# `make run` serves as production does (uvicorn, DEBUG off unless DEBUG=true, static files
# by WhiteNoise, the app's own error pages), over plain HTTP for the phones on the same
# Wi-Fi, with a secret key generated once and kept beside the database (KEY). `make dev`
# is Django's auto-reloading server with DEBUG on, for changing the code. The tests'
# settings are in pyproject.toml ([tool.pytest_env]), so plain pytest has them too.
KEY := .secret_key
# SITE_URL: the address the QR codes give (docs/operations.md), unless set: HOST and PORT;
# served on every interface (HOST=0.0.0.0 or ::), this machine's address on the local
# network (scripts/lan_address.py), which the other phones at the table can open.
SITE_HOST = $(if $(filter 0.0.0.0 ::,$(HOST)),$(shell $(PYTHON) scripts/lan_address.py),$(HOST))
RUN_ENV = DEBUG=$${DEBUG:-false} SECRET_KEY="$$(cat $(KEY))" SECURE=false ALLOWED_HOSTS="$${ALLOWED_HOSTS:-*}" \
  SITE_URL="$${SITE_URL:-http://$(if $(findstring :,$(SITE_HOST)),[$(SITE_HOST)],$(SITE_HOST)):$(PORT)}"
DEV_ENV := DEBUG=true
# pytest-xdist processes: one per core is what this 2-core machine does best (make test).
WORKERS ?= 2

.PHONY: run dev static test check bench lint format migrate venv lock clean chromium caddy backup

# Runs the test (a shell command); when it fails, installs Debian's package as root or,
# as another user, says what to install.
debian_package = $(1) >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2); \
	  else \
	    echo "$(2) is missing: run 'sudo apt-get install $(2)' and try again." >&2; exit 1; \
	  fi; }

# What the tests passed with: every package pinned, with its hashes. requirements.lock is
# what a deployment installs; requirements-dev.lock adds the tools (pyproject.toml's dev
# group) at the same versions. `pip check` fails when pyproject.toml asks for a package the
# locks lack: run `make lock`.
$(STAMP): requirements-dev.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip check
	touch $(STAMP)

venv: $(STAMP)

# Updates both locks to the newest releases pyproject.toml's ranges allow; commit them
# once `make test` passes.
UV_COMPILE := $(BIN)/uv pip compile pyproject.toml --universal --python-version 3.12 --generate-hashes --quiet
lock: $(STAMP)
	$(UV_COMPILE) --group dev --upgrade -o requirements-dev.lock
	$(UV_COMPILE) -c requirements-dev.lock -o requirements.lock
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock

# English: the .po file is the source, the compiled .mo is built here (ignored by git).
# Defined before any rule that lists $(MO) as a prerequisite: make expands those at once.
MO := locale/en/LC_MESSAGES/django.mo
$(MO): locale/en/LC_MESSAGES/django.po locale/es/LC_MESSAGES/django.po $(STAMP)
	@$(call debian_package,command -v msgfmt,gettext)
	DEBUG=true $(BIN)/python manage.py compilemessages --ignore=.venv --ignore=node_modules -v0

$(KEY):
	umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(50))" > $@

migrate: $(STAMP) $(MO) $(KEY)
	$(RUN_ENV) $(BIN)/python manage.py migrate --noinput

static: $(STAMP) $(KEY)
	$(RUN_ENV) $(BIN)/python manage.py collectstatic --noinput --verbosity 0

# uvicorn believes X-Forwarded-For and X-Forwarded-Proto from this machine by default: a
# client on it could name any address, and get a fresh log-in lockout with each one
# (accounts.security.client_ip). Only BEHIND_PROXY (1/true/yes/on, as dados/settings.py
# reads it) says that a proxy here writes them (docs/operations.md).
PROXY_HEADERS = $$(case "$$(echo "$${BEHIND_PROXY:-}" | tr -d ' ' | tr A-Z a-z)" in \
  1|true|yes|on) ;; *) echo --no-proxy-headers ;; esac)

# Ctrl-C ends it at once: open live-card streams get 3 s to close.
run: migrate static
	$(RUN_ENV) $(BIN)/python manage.py bootstrap_admin
	@$(RUN_ENV) sh -c 'echo "Dados: $$SITE_URL (la dirección que dan los códigos QR de las tarjetas)"'
	$(RUN_ENV) $(BIN)/uvicorn dados.asgi:application --host $(HOST) --port $(PORT) \
	  --no-access-log --timeout-graceful-shutdown 3 $(PROXY_HEADERS)

dev: migrate
	$(DEV_ENV) $(BIN)/python manage.py bootstrap_admin
	$(DEV_ENV) $(BIN)/python manage.py runserver $(HOST):$(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# axe-core, injected into pages by the accessibility tests; fake-indexeddb, for the outbox's
# own tests (node --test tests/js/).
node_modules/.installed-stamp: package.json package-lock.json
	@$(call debian_package,command -v npm,npm)
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The browser tests drive Debian's Chromium; Playwright's own download does not work here.
chromium:
	@$(call debian_package,test -x /usr/bin/chromium,chromium)

# The production recipe's test (tests/test_proxy.py) puts Debian's Caddy in front of the app.
caddy:
	@$(call debian_package,command -v caddy,caddy)

# A backup of the club that `make run` serves (docs/operations.md, «Backups»): one file in
# backups/ beside the database, the newest 14 kept. BACKUP_ARGS="--to /media/usb" elsewhere.
BACKUP_ARGS ?=
backup: $(STAMP) $(KEY)
	$(RUN_ENV) $(BIN)/python manage.py backup $(BACKUP_ARGS)

# While working: ruff and the SQLite suite without the browser and server-starting tests
# (PostgreSQL's own skip themselves). A few minutes; `make test` before pushing.
check: $(STAMP) $(MO) lint node_modules/.installed-stamp
	node --test tests/js/
	$(BIN)/pytest -n $(WORKERS) -m "not browser and not server"

# Every test, on both databases: the whole suite on SQLite, then everything but the browser
# tests on a throwaway PostgreSQL server (docs/operations.md says why that loses nothing).
# Each pass ends with its 20 slowest steps: the loop's budget is 15 minutes (issue 56).
test: $(STAMP) $(MO) lint chromium caddy node_modules/.installed-stamp
	node --test tests/js/
	$(BIN)/pytest -n $(WORKERS) --durations=20
	$(BIN)/python scripts/with_postgres.py -- $(BIN)/pytest -n $(WORKERS) -p no:cacheprovider -m "not browser" --durations=20

# Club-night load test (bench/run.py): N tables of 6 phones, the pushed live card (pages under
# gunicorn, streams under uvicorn) against the polling one, with production settings, SQLite
# then PostgreSQL; fails when, up to N=100, a p95 passes 100 ms, the delivery p95 500 ms,
# a request fails or a phone ends behind its card.
# Quick look: BENCH_ARGS="--db sqlite --tables 10 --runs 1 --duration 10"; --write-results
# updates bench/RESULTS.md.
BENCH_ARGS ?=
bench: $(STAMP) $(MO) chromium
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .ruff_cache .hypothesis bench/.cache
