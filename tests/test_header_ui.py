"""The header on a phone, in a real browser: from 320 px its links and the account's
menu never overlap, the page does not scroll sideways, and the account's name is whole,
so a phone passed round the table says whose session it is."""

import json
from pathlib import Path

import pytest

from tests.browsing import log_in, screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
NAME = "Maximiliano Gó"  # fourteen characters
WIDTHS = (320, 360, 390)

# Each link's rectangle, the account's, and how far apart each link is from the account
# (negative: they overlap), from the bounding boxes the page draws.
MEASURE = """() => {
  const rect = e => e.getBoundingClientRect();
  const apart = (a, b) =>
    Math.max(b.left - a.right, a.left - b.right, b.top - a.bottom, a.top - b.bottom);
  const visible = e => rect(e).width > 1 && getComputedStyle(e).visibility !== 'hidden';
  const selector = '.site-header > .brand, .site-nav a, .site-header > .admin-link';
  const links = [...document.querySelectorAll(selector)].filter(visible);
  const account = rect(document.querySelector('.site-user summary'));
  const name = document.querySelector('.user-name');
  const overlaps = [];
  links.forEach((a, i) => links.slice(i + 1).forEach(b => {
    if (apart(rect(a), rect(b)) < 0) overlaps.push([a.textContent, b.textContent]);
  }));
  // A phone shows a link's short text; the whole one is read out.
  const text = a => (a.querySelector('.narrow-only') || a).textContent.trim();
  return {
    gaps: Object.fromEntries(
      links.map(a => [text(a), Math.round(apart(rect(a), account) * 10) / 10])),
    overlaps,
    links: links.map(text),
    inside: links.every(a => rect(a).left >= 0 && rect(a).right <= window.innerWidth)
      && account.left >= 0 && account.right <= window.innerWidth,
    page: document.documentElement.scrollWidth, viewport: window.innerWidth,
    name: name.textContent, nameScroll: name.scrollWidth, nameClient: name.clientWidth,
    header: rect(document.querySelector('.site-header')).height,
  };
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("staff", [False, True], ids=["player", "staff"])
def test_the_header_fits_a_phone_with_a_long_name(server, browser, scheme, staff):
    UserFactory(username="maxi", display_name=NAME, is_staff=staff)
    context = browser.new_context(
        viewport={"width": 390, "height": 740}, base_url=server, color_scheme=scheme
    )
    page = context.new_page()
    log_in(page, "maxi")
    measured = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 740})
        found = page.evaluate(MEASURE)
        who = "staff" if staff else "player"
        screenshot(page, ARTIFACTS / f"header-{width}-{who}-{scheme}.png")
        measured[width] = found["gaps"]
        assert found["links"][1:] == ["Tarjeta", "Historial", "Clasificación"], found
        assert min(found["gaps"].values()) >= 0, found
        assert found["overlaps"] == [], found
        assert found["inside"], found
        assert found["page"] <= found["viewport"], found
        assert found["name"] == NAME
        assert found["nameScroll"] <= found["nameClient"], found
        # Two rows at most: the brand and the account, then the links.
        assert found["header"] <= 2 * 44 + 4, found
    # Staff reach the admin from the account's menu on a phone, and it fits there too.
    if staff:
        page.locator(".site-user summary").click()
        admin = page.locator(".site-user-menu .admin-link")
        assert admin.is_visible()
        screenshot(page, ARTIFACTS / f"header-menu-390-staff-{scheme}.png")
        box = admin.bounding_box()
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= WIDTHS[-1]
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / f"header-gaps-{'staff' if staff else 'player'}-{scheme}.json"
    out.write_text(json.dumps(measured, ensure_ascii=False, indent=1))
    context.close()
