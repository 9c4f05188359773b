"""The admin on a 360 px phone: tap targets of 44 px, and no password hash on a player's page."""

from pathlib import Path

import pytest

from tests.browsing import log_in
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
# What a staff member taps on each page: the header's links, the index's, the list's and
# the form's buttons.
TAPPED = ", ".join(
    [
        "#user-tools a",
        "#user-tools button",
        ".app-list a",
        ".object-tools a",
        "#result_list a",
        "#changelist-filter a",
        ".paginator a",
        ".breadcrumbs a",
        ".submit-row a",
        ".submit-row input",
        ".field-password a",
    ]
)


@pytest.fixture
def admin_page(browser, server):
    UserFactory(username="admin", display_name="Admin", is_staff=True, is_superuser=True)
    UserFactory(username="ana", display_name="Ana")
    context = browser.new_context(viewport={"width": 360, "height": 740}, base_url=server)
    page = context.new_page()
    log_in(page, "admin")
    yield page
    context.close()


def small_targets(page) -> list[str]:
    """The visible tap targets less than 44 px high, or narrower than WCAG 2.2's 24 px (a
    short name in the list, a sort arrow), as «text: width x height»."""
    small = []
    for target in page.locator(TAPPED).all():
        if not target.is_visible():
            continue
        box = target.bounding_box()
        if box["height"] < 44 or box["width"] < 24:
            text = target.inner_text() or target.get_attribute("value") or ""
            small.append(f"{text.strip()}: {box['width']:.0f} x {box['height']:.0f}")
    return small


def test_the_admin_can_be_tapped_on_a_phone(admin_page):
    page = admin_page
    from django.contrib.auth import get_user_model

    ana = get_user_model().objects.get(username="ana")
    pages = {
        "index": "/admin/",
        "players": "/admin/accounts/user/",
        "player": f"/admin/accounts/user/{ana.pk}/change/",
    }
    for name, url in pages.items():
        page.goto(url)
        page.screenshot(path=ARTIFACTS / f"admin-{name}-360.png", full_page=True)
        assert page.locator(TAPPED).count() > 3, name
        assert small_targets(page) == [], name
    # The player's page says what the password is for, without its hash.
    password = page.locator(".field-password")
    assert "pbkdf2" not in password.inner_text()
    assert "salt" not in password.inner_text().lower()
