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
        # Not a column's sort arrows: its name, 44 px high, sorts it too (WCAG 2.5.8's
        # equivalent control).
        "#result_list a:not(.sortoptions a)",
        "#changelist-filter a",
        ".paginator a",
        ".breadcrumbs a",
        ".submit-row a",
        ".submit-row input",
        ".field-password a",
        "input[type=file]",
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
    short name in the list), as «text: width x height»."""
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


def test_a_club_is_imported_from_a_phone_and_its_passwords_print_alone(admin_page):
    page = admin_page
    page.goto("/admin/accounts/user/")
    page.get_by_role("link", name="Importar jugadores").click()
    page.locator("#id_text").fill("lucia,Lucía\nana,Otra Ana\n")
    page.get_by_role("button", name="Registrar a todos").click()
    errors = page.locator(".errorlist")
    assert "Línea 2: el usuario «ana» ya está registrado." in errors.inner_text()
    page.screenshot(path=ARTIFACTS / "admin-import-errors-360.png", full_page=True)
    assert small_targets(page) == []
    page.locator("#id_text").fill("lucia,Lucía\nmarcos,Marcos Pérez\n")
    page.get_by_role("button", name="Registrar a todos").click()
    table = page.locator("table.issued-passwords")
    assert table.locator("tbody tr").count() == 2
    page.screenshot(path=ARTIFACTS / "admin-imported-360.png", full_page=True)
    assert small_targets(page) == []
    # Printed, the page is the table: the header, the breadcrumbs and the warning are not.
    page.emulate_media(media="print")
    page.screenshot(path=ARTIFACTS / "admin-imported-print.png", full_page=True)
    assert table.is_visible()
    for hidden in ("#header", ".breadcrumbs", ".messagelist", "#content-main > p"):
        assert page.locator(hidden).first.evaluate("e => getComputedStyle(e).visibility") == (
            "hidden"
        ), hidden
    assert table.bounding_box()["y"] < 20
    caption = table.locator("caption").evaluate("e => getComputedStyle(e).backgroundColor")
    assert caption == "rgb(255, 255, 255)"
