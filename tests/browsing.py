"""Helpers for the browser tests: Debian's Chromium driven by Playwright."""

import re
from pathlib import Path

from tests.factories import PASSWORD

CHROMIUM = Path("/usr/bin/chromium")


def log_in(page, username):
    page.goto("/entrar/")
    page.get_by_label("Nombre de usuario").fill(username)
    page.get_by_label("Contraseña").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(re.compile(r"/$"))
