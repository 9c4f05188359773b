"""The production recipe, run: deploy/Caddyfile's Caddy in front of gunicorn (the pages)
and uvicorn (the streams) with deploy/dados.env's proxy settings, over HTTPS.

Caddy's certificate comes from its own CA (the `local_certs` global option, what the
Caddyfile's `tls internal` does for one site), which the client here trusts, instead of a
public CA's that needs a public name. Everything else is the recipe's own file.
"""

import http.client
import json
import shutil
import ssl
import subprocess
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db import connection

from scorecards import live
from tests.liveserver import (
    HOST,
    ROOT,
    AppServer,
    Browser,
    Stream,
    database_copy,
    django_script,
    free_port,
    template_database,
)

pytestmark = pytest.mark.server

POSTGRES = connection.vendor == "postgresql"
PASSWORD = "clave-de-prueba-2026"
CADDY = shutil.which("caddy") or "/usr/bin/caddy"
DEPLOY = ROOT / "deploy"

SEED = """
import json, sys
from accounts.models import User
from scorecards.services import scorecard_create

def user(name):
    return User.objects.create_user(name, password=sys.argv[1], display_name=name.title())

olga, ana = user("olga"), user("ana")
card = scorecard_create(organizer=olga, players=[ana])
print(json.dumps({"card": card.pk, "seat": card.seats.get().pk}))
"""


@dataclass
class HttpsBrowser(Browser):
    """Browser, over HTTPS, trusting the proxy's CA."""

    context: ssl.SSLContext | None = None

    @property
    def origin(self) -> str:
        return f"https://{self.host}:{self.port}"

    def connect(self) -> http.client.HTTPConnection:
        conn = http.client.HTTPSConnection(
            self.host, self.port, timeout=self.timeout, context=self.context
        )
        conn.connect()
        return conn

    def stream(self, path, *, last_event_id=None, timeout=10.0) -> Stream:
        conn = http.client.HTTPSConnection(
            self.host, self.port, timeout=timeout, context=self.context
        )
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        conn.request("GET", path, headers=headers)
        return Stream(conn, conn.getresponse())


def recipe_env() -> dict[str, str]:
    """deploy/dados.env's settings, read as systemd's EnvironmentFile reads its lines."""
    settings = {}
    for line in (DEPLOY / "dados.env").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            settings[name.strip()] = value.strip()
    return settings


@pytest.fixture(scope="module")
def template_db(tmp_path_factory):
    with template_database(
        "dados_proxy_template", tmp_path_factory.mktemp("proxy"), POSTGRES
    ) as template:
        yield template


@pytest.fixture
def site(template_db, tmp_path):
    """The recipe on loopback ports: gunicorn and uvicorn as the units start them, with
    dados.env's proxy settings (read from the file), and Caddy in front with the
    Caddyfile; (https port, http port, the seeded card, the CA's SSL context)."""
    if not Path(CADDY).exists():
        pytest.fail("Caddy is missing: run `make test` (it installs Debian's caddy package)")
    https, http_port = free_port(), free_port()
    origin = f"https://localhost:{https}"
    recipe = recipe_env()
    proxy = {name: recipe[name] for name in ("BEHIND_PROXY", "TRUSTED_PROXIES", "STREAMS_APART")}
    proxy |= {
        # Production's defaults, which the tests' plain-HTTP servers turn off.
        "SECURE": "true",
        "SECURE_SSL_REDIRECT": "true",
        "SECURE_HSTS_SECONDS": "31536000",
        # This site's address, where dados.env has dados.example.org.
        "ALLOWED_HOSTS": f"localhost,{HOST}",
        "CSRF_TRUSTED_ORIGINS": origin,
        "SITE_URL": origin,
    }
    probe = {"X-Forwarded-Proto": "https"}
    with database_copy(template_db, tmp_path, POSTGRES, "dados_proxy") as db:
        seeded = json.loads(django_script(db, SEED, PASSWORD).strip().splitlines()[-1])
        pages = AppServer(db=db, log=tmp_path / "gunicorn.log", workers=2, env=proxy, probe=probe)
        streams = AppServer(
            db=db, log=tmp_path / "uvicorn.log", workers=1, asgi=True, env=proxy, probe=probe
        )
        caddy = None
        try:
            pages.start()
            streams.start()
            config = tmp_path / "Caddyfile"
            config.write_text(
                # grace_period: the test's streams are still open when it stops Caddy,
                # which would otherwise wait for them (the test's 10 s, then a kill).
                "{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\tgrace_period 1s\n"
                f"\thttp_port {http_port}\n\thttps_port {https}\n}}\n"
                f"import {DEPLOY / 'Caddyfile'}\n"
            )
            env = {
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path),
                "XDG_DATA_HOME": str(tmp_path / "data"),
                "XDG_CONFIG_HOME": str(tmp_path / "config"),
                "DADOS_SITE": f"localhost:{https}",
                "DADOS_PAGES": f"{HOST}:{pages.port}",
                "DADOS_STREAMS": f"{HOST}:{streams.port}",
            }
            log = (tmp_path / "caddy.log").open("w")
            caddy = subprocess.Popen(
                [CADDY, "run", "--config", str(config), "--adapter", "caddyfile"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            ca = tmp_path / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
            context = wait_for_https(https, ca, caddy, tmp_path / "caddy.log")
            yield https, http_port, seeded, context
        finally:
            if caddy is not None:
                caddy.terminate()
                with suppress(subprocess.TimeoutExpired):
                    caddy.wait(timeout=10)
                if caddy.poll() is None:
                    caddy.kill()
            streams.stop()
            pages.stop()


def wait_for_https(port, ca: Path, caddy, log: Path, timeout=30.0) -> ssl.SSLContext:
    """Caddy's CA, once Caddy answers over HTTPS with a certificate it signed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if caddy.poll() is not None:
            raise AssertionError(f"caddy exited {caddy.returncode}:\n{log.read_text()[-3000:]}")
        if ca.exists():
            context = ssl.create_default_context(cafile=str(ca))
            try:
                conn = http.client.HTTPSConnection("localhost", port, timeout=5, context=context)
                conn.request("GET", "/entrar/")
                conn.getresponse().read()
                conn.close()
                return context
            except (OSError, ssl.SSLError, http.client.HTTPException):
                pass
        time.sleep(0.2)
    raise AssertionError(f"no HTTPS answer from caddy in {timeout} s:\n{log.read_text()[-3000:]}")


def test_the_club_plays_through_caddy_over_https(site):
    https, http_port, seeded, context = site
    card, seat = seeded["card"], seeded["seat"]

    # Plain HTTP is sent to HTTPS by Caddy.
    plain = http.client.HTTPConnection("localhost", http_port, timeout=10)
    plain.request("GET", "/entrar/")
    moved = plain.getresponse()
    assert moved.status in (301, 308)
    # (To the standard port, whatever port this test's Caddy listens on.)
    assert moved.getheader("Location").startswith("https://localhost")
    assert moved.getheader("Location").endswith("/entrar/")
    plain.close()

    olga = HttpsBrowser("localhost", https, context=context)
    page = olga.get("/entrar/")
    # Django answers 200, not its redirect to HTTPS: it believed Caddy's X-Forwarded-Proto.
    assert page.status == 200
    assert page.headers["Strict-Transport-Security"] == (
        "max-age=31536000; includeSubDomains; preload"
    )
    # CSRF: a log-in without the page's token is refused; with it (and the Referer that
    # Django checks on HTTPS, against the host Caddy passed on) it goes through.
    stranger = HttpsBrowser("localhost", https, context=context)
    refused = stranger.post("/entrar/", {"username": "olga", "password": PASSWORD})
    assert refused.status == 403
    olga.log_in("olga", PASSWORD)

    ana = HttpsBrowser("localhost", https, context=context)
    ana.log_in("ana", PASSWORD)
    stream = ana.stream(f"/tarjetas/{card}/eventos/?version=0")
    try:
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        written = olga.post(
            f"/tarjetas/{card}/casilla/{seat}/sixes/",
            {"value": "24", "was": "", "version": "0"},
            htmx=True,
        )
        answered = time.monotonic()
        assert written.status == 200, written.body[:500]
        heard = stream.next_named("patch")
        delivery = heard.at - answered
    finally:
        stream.close()
    assert heard.id == "1"
    assert ">24<" in json.loads(heard.data)["html"]
    # Unbuffered: within the time the stream takes without a proxy (tests/test_live_stream).
    assert delivery < 0.5 + live.EVERY
    print(f"\nA write reached the stream through Caddy {delivery * 1000:.0f} ms after its answer")

    qr = olga.get(f"/tarjetas/{card}/qr/", htmx=True)
    assert qr.status == 200
    assert f'value="https://localhost:{https}/tarjetas/{card}/"' in qr.body


def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path):
    """As installed: /srv/dados is this checkout (whose .venv has the commands they run)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is missing: docs/operations.md says how to verify by hand")
    units = sorted([*DEPLOY.glob("*.service"), *DEPLOY.glob("*.timer")])
    assert [unit.name for unit in units] == [
        "dados-backup.service",
        "dados-backup.timer",
        "dados-pages.service",
        "dados-streams.service",
    ]
    for unit in units:
        (tmp_path / unit.name).write_text(unit.read_text().replace("/srv/dados", str(ROOT)))
    done = subprocess.run(
        [analyze, "verify", *(str(tmp_path / unit.name) for unit in units)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
