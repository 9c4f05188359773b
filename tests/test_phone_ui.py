"""The card on a phone: keyboard and screen-reader use of the picker, and honest failures."""

import pytest
from playwright.sync_api import expect

from scorecards import services
from tests.browsing import log_in
from tests.factories import UserFactory

pytestmark = pytest.mark.browser


@pytest.fixture
def card_page(browser, server):
    organizer = UserFactory(username="olga", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana")
    card = services.scorecard_create(organizer=organizer, players=[ana])
    seat = card.seats.get()
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="ones", value="0", was="", author=organizer
    )
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=server)
    page = context.new_page()
    log_in(page, "olga")
    page.goto(f"/tarjetas/{card.pk}/")
    yield page
    context.close()


def test_the_picker_is_a_dialog_for_the_keyboard(card_page):
    page = card_page
    cell = page.locator('a.cell[aria-label="Doses — Ana: sin anotar"]')
    cell.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Doses — Ana")
    dialog.wait_for()
    assert page.evaluate(
        "document.getElementById('picker-dialog').contains(document.activeElement)"
    )
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "Doses — Ana: sin anotar"
    )
    # And the keyboard alone can score a box.
    page.keyboard.press("Enter")
    dialog.wait_for()
    page.locator('#picker button[name="value"][value="4"]').focus()
    page.keyboard.press("Enter")
    page.locator('a.cell[aria-label="Doses — Ana: 4"]').wait_for()


def test_blank_scratched_and_bonus_do_not_rely_on_colour(card_page):
    page = card_page
    blank = page.locator('a.cell[aria-label="Treses — Ana: sin anotar"]')
    scratched = page.locator('a.cell[aria-label="Unos — Ana: 0"]')
    assert blank.inner_text() == "·"
    decoration = scratched.locator(".zero").evaluate("e => getComputedStyle(e).textDecorationLine")
    assert "line-through" in decoration
    assert "faltan 63" in page.locator("tr.sum", has_text="Bonus superior").inner_text()


def test_a_write_the_server_does_not_answer_is_kept_and_says_so(card_page):
    page = card_page
    # Routed on the context: a request may pass through the page's service worker.
    page.context.route(
        "**/casilla/**",
        lambda route: route.abort() if route.request.method == "POST" else route.continue_(),
    )
    page.locator('a.cell[aria-label="Cincos — Ana: sin anotar"]').click()
    page.locator("#picker-dialog[open]").wait_for()
    page.locator('#picker button[name="value"][value="15"]').click()
    # Shown at once, marked, and kept until the server has it (the outbox).
    page.locator('a.cell.unsent[aria-label="Cincos — Ana: 15, pendiente de enviar"]').wait_for()
    status = page.locator("#outbox-status")
    status.filter(has_text="Sin conexión: 1 casilla pendiente de enviar").wait_for()
    page.context.unroute("**/casilla/**")
    page.evaluate("window.dispatchEvent(new Event('online'))")
    page.locator('a.cell[aria-label="Cincos — Ana: 15"]').wait_for()
    assert page.locator("a.cell.unsent").count() == 0


def test_an_undo_without_an_answer_is_kept_and_sent_later(card_page):
    page = card_page
    page.locator('a.cell[aria-label="Cincos — Ana: sin anotar"]').click()
    page.locator('#picker button[name="value"][value="15"]').click()
    page.locator('a.cell[aria-label="Cincos — Ana: 15"]').wait_for()
    page.context.route("**/deshacer/**", lambda route: route.abort())
    page.get_by_role("button", name="↶ Deshacer").click()
    # Kept in the outbox, as any write: said («Enviando…» while it is on its way, until
    # the network fails it), and sent once the network answers.
    expect(page.locator("#outbox-status")).to_contain_text("pendiente de enviar")
    assert page.locator('a.cell[aria-label="Cincos — Ana: 15"]').count() == 1
    page.context.unroute("**/deshacer/**")
    page.evaluate("window.dispatchEvent(new Event('online'))")
    page.locator('a.cell[aria-label="Cincos — Ana: sin anotar"]').wait_for()


def test_a_write_on_its_way_is_marked_in_its_cell(card_page):
    page = card_page
    held = []
    page.context.route("**/casilla/**", lambda route: held.append(route))
    # The picker opens from the page: nothing to wait for. Its write shows at once,
    # marked as not sent yet, while it is on its way.
    page.locator('a.cell[aria-label="Seises — Ana: sin anotar"]').click()
    page.locator("#picker-dialog[open]").wait_for()
    assert held == []
    page.locator('#picker button[name="value"][value="18"]').click()
    page.locator('a.cell.unsent[aria-label="Seises — Ana: 18, pendiente de enviar"]').wait_for()
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    held[0].continue_()
    page.context.unroute("**/casilla/**")
    page.locator('a.cell[aria-label="Seises — Ana: 18"]').wait_for()
    assert page.locator("a.cell.unsent").count() == 0


def test_the_small_controls_are_still_44_px_tall(card_page):
    """«+ Yahtzee adicional», «Borrar dados» and «Ver todos los cambios» are tapped with one
    hand at the table too."""
    page = card_page
    page.locator('a.cell[aria-label="Yahtzee — Ana: sin anotar"]').click()
    page.locator('#picker button[name="value"][value="50"]').click()
    page.locator('a.cell[aria-label="Yahtzee — Ana: 50"]').click()
    joker = page.locator("#picker").get_by_role("link", name="+ Yahtzee adicional")
    joker.wait_for()
    assert joker.bounding_box()["height"] >= 44
    page.keyboard.press("Escape")
    page.locator('a.cell[aria-label="Doses — Ana: sin anotar"]').click()
    page.locator("#picker .with-dice summary").click()
    page.get_by_role("link", name="Dado 2").click()
    clear = page.get_by_role("link", name="Borrar dados")
    clear.wait_for()
    assert clear.bounding_box()["height"] >= 44
    page.keyboard.press("Escape")
    # A finalized card whose change log is folded away.
    from django.contrib.auth import get_user_model

    from tests.factories import enter, full_card

    olga, ana = (get_user_model().objects.get(username=u) for u in ("olga", "ana"))
    finished = services.scorecard_create(organizer=olga, players=[ana])
    enter(finished, finished.seats.get(), olga, **full_card())
    services.scorecard_finalize(scorecard_id=finished.pk, author=finished.organizer)
    page.goto(f"/tarjetas/{finished.pk}/")
    summary = page.locator(".changes summary")
    assert summary.inner_text() == "Ver todos los cambios"
    assert summary.bounding_box()["height"] >= 44
