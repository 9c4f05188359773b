"""Helpers for the browser tests: Debian's Chromium driven by Playwright."""

import re
from pathlib import Path

from tests.factories import PASSWORD

CHROMIUM = Path("/usr/bin/chromium")


def log_in(page, username):
    """Log in through the form, in whichever language the page speaks."""
    page.goto("/entrar/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/$"))
