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


def screenshot(target, path, **options):
    """Save a page's or an element's picture, leaving the page as it was.

    Playwright hides the caret with an inline style that it leaves behind as style="",
    which htmx then copies while settling a swap: the page's CSP refuses it, an error in
    the console that the tests count.
    """
    target.screenshot(path=path, caret="initial", **options)


def go_offline(context):
    """Cut the network for the context's pages and for their service worker.

    context.set_offline alone is not a dropped network for the service worker: in
    bench/phone.py its Background Sync sent 9 of 10 writes "kept offline". A real dropped
    network fails the worker's requests too.
    """
    context.set_offline(True)
    context.route("**/*", _disconnected)


def go_online(context):
    context.unroute("**/*", _disconnected)
    context.set_offline(False)


def _disconnected(route):
    route.abort("internetdisconnected")


def table_fit(table) -> dict:
    """Where a table ends on the screen, and how wide its box is and scrolls."""
    return table.evaluate(
        "t => ({right: t.getBoundingClientRect().right, scroll: t.parentElement.scrollWidth,"
        " width: t.parentElement.clientWidth})"
    )


def misalignment(table) -> list[float]:
    """How far each heading's text is from its column's first cell's, in px: by their
    right edges where the cell aligns right, by their left edges otherwise."""
    return table.evaluate(
        """t => [...t.tHead.rows[0].cells].map((head, i) => {
            const cell = t.tBodies[0].rows[0].cells[i];
            const [h, c] = [head, cell].map(e => {
                const r = document.createRange(); r.selectNodeContents(e);
                return r.getBoundingClientRect(); });
            const style = getComputedStyle(cell).textAlign;
            return style === "right" ? Math.abs(h.right - c.right) : Math.abs(h.left - c.left);
        })"""
    )


# The page's outbox module (static/js/outbox.js), imported at its hashed address.
OUTBOX = "import(document.querySelector('link[rel=modulepreload][href*=\"/outbox.\"]').href)"


def kept_writes(page) -> int:
    """How many writes the page's user has kept in the outbox (IndexedDB)."""
    script = f"{OUTBOX}.then(o => o.list(document.body.dataset.user)).then(w => w.length)"
    return page.evaluate(script)
