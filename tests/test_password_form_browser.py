"""The forced password change on a phone, in a real browser: each error right under the
field it is about, every one at once, and nothing wider than the screen."""

import re
from pathlib import Path

import pytest

from tests.browsing import screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
WIDTHS = (320, 360, 390)

# Each field's label, input and error list, top and bottom, and the page's width.
MEASURE = """() => {
  const box = s => {
    const e = document.querySelector(s);
    if (!e) return null;
    const r = e.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, height: r.height, text: e.textContent.trim()};
  };
  const fields = {};
  for (const name of ['new_password1', 'new_password2']) {
    fields[name] = {
      label: box(`label[for=id_${name}]`),
      input: box(`#id_${name}`),
      errors: box(`#id_${name}_error`),
    };
  }
  return {fields, button: box('main form button[type=submit]'),
          page: document.documentElement.scrollWidth, viewport: window.innerWidth};
}"""


def _at_the_forced_change(server, browser, width):
    """A phone of this width where Lucía has just logged in with a temporary password."""
    lucia = UserFactory(username="lucia", display_name="Lucía")
    temporary = lucia.set_temporary_password()
    lucia.save()
    context = browser.new_context(viewport={"width": width, "height": 740}, base_url=server)
    page = context.new_page()
    page.goto("/entrar/")
    page.locator("#id_username").fill("lucia")
    page.locator("#id_password").fill(temporary)
    page.locator("main form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/contrasena/$"))
    return context, page


@pytest.mark.parametrize("width", WIDTHS)
def test_the_password_forms_errors_sit_under_their_fields_on_a_phone(server, browser, width):
    context, page = _at_the_forced_change(server, browser, width)
    # Short, like the username, and not repeated alike: three errors in one try.
    page.locator("#id_new_password1").fill("lucia-2")
    page.locator("#id_new_password2").fill("lucia-3")
    page.locator("main form button[type=submit]").click()
    page.wait_for_selector("#id_new_password2_error")
    if width == 360:
        screenshot(page, ARTIFACTS / "password-change-errors-360.png", full_page=True)
    measured = page.evaluate(MEASURE)
    new, repeated = measured["fields"]["new_password1"], measured["fields"]["new_password2"]
    assert "demasiado corta" in new["errors"]["text"]
    assert "se parece demasiado" in new["errors"]["text"]
    assert new["input"]["bottom"] <= new["errors"]["top"] < repeated["label"]["top"]
    assert repeated["errors"]["text"] == "Los dos campos de contraseña no coinciden."
    assert repeated["input"]["bottom"] <= repeated["errors"]["top"]
    assert measured["page"] <= measured["viewport"], measured
    for tapped in (new["input"], repeated["input"], measured["button"]):
        assert tapped["height"] >= 44, measured
    # A good password repeated wrongly: it stays, only the repetition is typed again.
    page.locator("#id_new_password1").fill("dados-de-la-pena")
    page.locator("#id_new_password2").fill("dados-de-la-pene")
    page.locator("main form button[type=submit]").click()
    page.wait_for_selector("#id_new_password2_error")
    assert page.locator("#id_new_password1_error").count() == 0
    assert page.locator("#id_new_password1").input_value() == "dados-de-la-pena"
    assert page.locator("#id_new_password2").input_value() == ""
    page.locator("#id_new_password2").fill("dados-de-la-pena")
    page.locator("main form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/contrasena/cambiada/$"))
    context.close()


def test_the_forced_change_is_announced_as_something_to_do_not_a_success(server, browser):
    context, page = _at_the_forced_change(server, browser, 360)
    notice = page.locator(".messages .message")
    assert "message-info" in notice.get_attribute("class")
    colours = notice.evaluate(
        """e => { const probe = document.createElement('li');
        probe.className = 'message message-success';
        e.parentNode.appendChild(probe);
        const [a, b] = [getComputedStyle(e), getComputedStyle(probe)];
        return {notice: [a.backgroundColor, a.color], success: [b.backgroundColor, b.color]}; }"""
    )
    assert colours["notice"][0] != colours["success"][0]
    assert colours["notice"][1] != colours["success"][1]
    context.close()


def test_a_mismatch_below_the_fold_is_summed_up_at_the_top_with_a_link_to_its_field(
    server, browser
):
    """The change with the old password is taller than a phone: its errors are said at the
    top too, focused, each a link to its field."""
    from tests.browsing import log_in
    from tests.factories import PASSWORD

    UserFactory(username="ana", display_name="Ana")
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
    )
    page = context.new_page()
    try:
        log_in(page, "ana")
        page.goto("/contrasena/")
        page.locator("#id_old_password").fill(PASSWORD)
        page.locator("#id_new_password1").fill("dados-de-la-pena")
        page.locator("#id_new_password2").fill("dados-de-la-pene")
        page.locator("main form button[type=submit]").click()
        summary = page.locator(".error-summary")
        summary.wait_for()
        screenshot(page, ARTIFACTS / "password-change-summary-360.png")
        assert summary.evaluate("e => e === document.activeElement")
        box = summary.bounding_box()
        assert box["y"] >= 0
        assert box["y"] + box["height"] <= 740
        # The error under its field is out of sight on a 740 px high phone.
        assert page.locator("#id_new_password2_error").bounding_box()["y"] > 740
        link = summary.get_by_role("link")
        assert link.count() == 1
        assert link.inner_text() == (
            "Contraseña nueva (confirmación): Los dos campos de contraseña no coinciden."
        )
        link.click()
        field = page.locator("#id_new_password2")
        page.wait_for_url(re.compile(r"#id_new_password2$"))
        top = field.bounding_box()["y"]
        assert 0 <= top < 740
        screenshot(page, ARTIFACTS / "password-change-summary-link-360.png")
    finally:
        context.close()
