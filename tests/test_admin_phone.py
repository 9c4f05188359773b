"""The admin on a 360 px phone: tap targets of 44 px, and no password hash on a player's page."""

from pathlib import Path

import pytest

from tests.browsing import log_in, screenshot
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
        # A player's check boxes («Juega»…), each with its label, and the password's choice.
        ".form-row .checkbox-row .checkbox",
        "#id_password_mode label",
        # The list's search, its actions and its filters' headings, and each row's check
        # box.
        "#searchbar",
        "#changelist-search input[type=submit]",
        ".actions select",
        ".actions button",
        "#changelist-filter summary",
        "#result_list tbody input.action-select",
    ]
)
WIDTHS = (320, 360, 390)


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
        screenshot(page, ARTIFACTS / f"admin-{name}-360.png", full_page=True)
        assert page.locator(TAPPED).count() > 3, name
        assert small_targets(page) == [], name
    # A row's check box toggles from anywhere in it, a tap's size.
    page.goto(pages["players"])
    row = page.locator("#result_list tbody tr", has_text="Ana")
    row.locator("input.action-select").click(position={"x": 3, "y": 3}, timeout=2000)
    assert row.locator("input.action-select").is_checked()
    assert "selected" in row.get_attribute("class")
    page.goto(pages["player"])
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
    screenshot(page, ARTIFACTS / "admin-import-errors-360.png", full_page=True)
    assert small_targets(page) == []
    page.locator("#id_text").fill("lucia,Lucía\nmarcos,Marcos Pérez\n")
    page.get_by_role("button", name="Registrar a todos").click()
    table = page.locator("table.issued-passwords")
    assert table.locator("tbody tr").count() == 2
    screenshot(page, ARTIFACTS / "admin-imported-360.png", full_page=True)
    assert small_targets(page) == []
    # Printed, the page is the table: the header, the breadcrumbs and the warning are not.
    page.emulate_media(media="print")
    screenshot(page, ARTIFACTS / "admin-imported-print.png", full_page=True)
    assert table.is_visible()
    for hidden in ("#header", ".breadcrumbs", ".messagelist", "#content-main > p"):
        assert page.locator(hidden).first.evaluate("e => getComputedStyle(e).visibility") == (
            "hidden"
        ), hidden
    assert table.bounding_box()["y"] < 20
    caption = table.locator("caption").evaluate("e => getComputedStyle(e).backgroundColor")
    assert caption == "rgb(255, 255, 255)"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_players_pages_fit_a_phone_and_the_sections_open_what_they_say(admin_page, width):
    from django.contrib.auth import get_user_model

    page = admin_page
    page.set_viewport_size({"width": width, "height": 740})
    ana = get_user_model().objects.get(username="ana")
    pages = {
        "index": "/admin/",
        "add": "/admin/accounts/user/add/",
        "player": f"/admin/accounts/user/{ana.pk}/change/",
        "accesses": "/admin/accesses/accesslog/",
    }
    for name, url in pages.items():
        page.goto(url)
        if width == 360:
            screenshot(page, ARTIFACTS / f"admin-phone-{name}-360.png", full_page=True)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, (name, wide)
        assert small_targets(page) == [], name
    # «Jugadores» opens the players' section, and only theirs; the sign-in records are a
    # section of their own.
    page.goto("/admin/")
    main = page.locator("#content-main")
    assert main.locator(".app-accounts tbody tr").count() == 1
    assert "acceso" not in main.locator(".app-accounts").inner_text().lower()
    assert main.locator(".app-accesses caption").text_content().strip() == "Accesos"
    assert main.locator(".app-accesses tbody tr").count() == 3
    main.locator(".app-accounts caption a").click()
    page.wait_for_url("**/admin/accounts/")
    assert page.locator("#content-main tbody th").all_inner_texts() == ["Jugadores"]
    assert small_targets(page) == []
    # «Juega»: a box of 24 px in a row of 44 px that toggles it from its label.
    page.goto(f"/admin/accounts/user/{ana.pk}/change/")
    plays = page.locator("#id_plays")
    box = plays.bounding_box()
    assert box["width"] >= 24, box
    assert box["height"] >= 24, box
    row = page.locator(".field-plays .checkbox-row .checkbox").bounding_box()
    assert row["height"] >= 44, row
    assert plays.is_checked()
    page.locator("label[for=id_plays]").click(position={"x": 2, "y": 2})
    assert not plays.is_checked()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_chosen_password_shows_only_when_chosen(admin_page, width):
    page = admin_page
    page.set_viewport_size({"width": width, "height": 740})
    page.goto("/admin/accounts/user/add/")
    chosen = page.locator("#id_password1, #id_password2")
    assert page.locator("#id_password_mode_0").is_checked()
    assert [field.is_visible() for field in chosen.all()] == [False, False]
    page.get_by_label("Elegirla yo").check()
    assert [field.is_visible() for field in chosen.all()] == [True, True]
    if width == 360:
        screenshot(page, ARTIFACTS / "admin-phone-add-chosen-360.png", full_page=True)
    assert small_targets(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.get_by_label("Generar una contraseña temporal").check()
    assert [field.is_visible() for field in chosen.all()] == [False, False]
