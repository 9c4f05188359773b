"""What a player feels, on a phone-sized Chromium: `python bench/phone.py BASE_URL TAPS`.

Debian's Chromium through Playwright, 360 px wide, its CPU throttled 4x and its network
slowed to "slow 4G" (150 ms round trip, 1.6 Mbit/s down, 750 kbit/s up) through the
DevTools protocol. It logs in, creates a card for six players through the pages, then
TAPS times: taps a blank box (timed until the picker is open, after the next frame) and taps
the first value it offers (timed until the box shows that value: at once, marked as not sent
yet; then until the server has it and the mark is gone, the totals with it: saved_ms, from
the tap's click event, as the page measures it; saved_outside_ms, as it was timed until
December 2026, from before Playwright's tap, adds Playwright's own work on a slowed page,
100-200 ms that no player's finger takes). A second phone, as slow, shows the
same card: each write is also timed from its tap, and from the moment the first phone had
the server's answer, until the second phone shows it (the page's stream, or its poll where
there is none). The second phone is slowed only from the moment the first one shows the tap
until it shows the write: Chromium slows a page by busy-waiting in a signal handler
(thread_cpu_throttler.cc), so an idle slowed page burns most of a core (4 CPU-seconds in 5 s,
measured), and on a two-core machine it stole ~25 ms from the other phone's tap, a cost no
real second phone puts on the first. Then the network goes away (for the service worker
too): up to ten more taps, each timed until its box shows the value, and, once the network
is back, the time until the server has them all.
It prints the medians as JSON; bench/run.py runs it against an idle server.
"""

import json
import statistics
import sys

from playwright.sync_api import sync_playwright

from bench.seed import PASSWORD

DEVICE = "360x780, 4x CPU throttling, slow 4G"
PHONE = {
    "viewport": {"width": 360, "height": 780},
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
    "locale": "es-ES",
}
NETWORK = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1.6 * 1024 * 1024 / 8,
    "uploadThroughput": 750 * 1024 / 8,
}
# Resolves, after the next frame, once `selector` matches (and shows `text`, if given), with
# the milliseconds since the next tap's click event.
TIMER = """([selector, text]) => {
  window.benchTimer = new Promise((resolve) => {
    let tapped = null;
    const done = () => {
      const element = document.querySelector(selector);
      return element && (text === null || element.textContent.trim() === text);
    };
    const observer = new MutationObserver(() => {
      if (tapped !== null && done()) {
        observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - tapped)));
      }
    });
    addEventListener("click", (event) => {
      tapped = window.benchTapped = event.timeStamp;
    }, {capture: true});
    observer.observe(document, {subtree: true, childList: true, attributes: true});
  });
}"""


# On the second phone: resolves with Date.now() once `selector` shows `text`.
SEEN = """([selector, text]) => {
  window.benchSeen = new Promise((resolve) => {
    const done = () => {
      const element = document.querySelector(selector);
      return element && element.textContent.trim() === text;
    };
    const observer = new MutationObserver(() => {
      if (done()) {
        observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => resolve(Date.now())));
      }
    });
    const all = {subtree: true, childList: true, attributes: true, characterData: true};
    observer.observe(document, all);
  });
}"""


# Resolves once no cell shows a write not sent yet (`selector` narrows it): with Date.now(),
# and the milliseconds since the last tap's click event (TIMER's), as the page measures them.
SAVED = """(selector) => new Promise((resolve, reject) => {
  const given = Date.now() + 30000;
  const check = () => {
    if (!document.querySelector(selector + ".unsent")) {
      resolve({at: Date.now(), since_tap: performance.now() - window.benchTapped});
    } else if (Date.now() > given) reject(new Error("bench/phone.py: not saved within 30 s"));
    else setTimeout(check, 5);
  };
  check();
})"""


def waited(page, promise: str):
    """What `promise` (an expression in the page) resolves to, or a clear failure after 30 s,
    rather than a benchmark that hangs."""
    return page.evaluate(
        f"""() => Promise.race([{promise}, new Promise((_, reject) => setTimeout(
            () => reject(new Error("bench/phone.py: not within 30 s: {promise}")), 30000))])"""
    )


def slow(context, page, cpu=4):
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu})
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", NETWORK)
    return cdp


def timed_tap(page, target, selector, text=None) -> float:
    page.evaluate(TIMER, [selector, text])
    page.locator(target).tap()
    return waited(page, "window.benchTimer")


def main(base: str, taps: int) -> int:
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(base_url=base, **PHONE)
        page = context.new_page()
        page.goto("/entrar/")
        page.fill('input[name="username"]', "jugador001")
        page.fill('input[name="password"]', PASSWORD)
        page.locator('form[action="/entrar/"] button[type="submit"]').click()
        page.wait_for_url(lambda url: "/entrar/" not in url)
        page.goto("/tarjetas/nueva/")
        for box in page.locator('input[name="p"]').all()[:6]:
            box.check()
        page.locator('button[type="submit"].primary').click()
        page.locator('form[action="/tarjetas/crear/"] button[type="submit"]').click()
        page.wait_for_url("**/tarjetas/*/")
        cells = page.eval_on_selector_all(
            "a.cell.blank", "cells => cells.map(cell => cell.getAttribute('href'))"
        )
        # The same organizer's second phone (a tablet at the table, say), on the same card.
        other_context = browser.new_context(
            base_url=base, storage_state=context.storage_state(), **PHONE
        )
        other = other_context.new_page()
        other.goto(page.url)
        network = slow(context, page)
        other_cpu = slow(other_context, other, cpu=1)  # slowed while it is the one measured
        other.wait_for_timeout(2000)  # its stream open, as a phone's that has been watching
        picker, write, saved, saved_outside, seen, seen_saved = [], [], [], [], [], []
        button = '#picker button[name="value"]:not([value=""]):not([value="0"])'
        for href in cells[:taps]:
            cell = f'a.cell[href="{href}"]'
            picker.append(timed_tap(page, cell, '#picker-dialog[open] button[name="value"]'))
            value = page.locator(button).first.get_attribute("value")
            other.evaluate(SEEN, [cell, value])
            tapped = page.evaluate("() => Date.now()")
            write.append(timed_tap(page, f"{button} >> nth=0", cell, value))
            other_cpu.send("Emulation.setCPUThrottlingRate", {"rate": 4})
            slowed = page.evaluate("() => Date.now()")
            done = page.evaluate(SAVED, cell)
            at = done["at"]
            if at <= slowed:  # the server had it before the second phone was slowed
                sys.exit("bench/phone.py: the write was saved before the second phone was slowed")
            saved.append(done["since_tap"])
            saved_outside.append(at - tapped)
            shown = waited(other, "window.benchSeen")
            other_cpu.send("Emulation.setCPUThrottlingRate", {"rate": 1})
            seen.append(shown - tapped)
            seen_saved.append(shown - at)
            page.wait_for_timeout(300)
        # No network: the taps still show at once, and are kept. The page's emulation does
        # not reach its service worker, whose Background Sync then sent the writes "kept
        # offline" (9 of 10, counted on the server): its requests are cut too, as a real
        # dropped network would.
        context.set_offline(True)
        context.route("**/*", lambda route: route.abort("internetdisconnected"))
        offline = []
        for href in cells[taps : taps + 10]:
            cell = f'a.cell[href="{href}"]'
            timed_tap(page, cell, '#picker-dialog[open] button[name="value"]')
            value = page.locator(button).first.get_attribute("value")
            offline.append(timed_tap(page, f"{button} >> nth=0", cell, value))
        back = page.evaluate("() => Date.now()")
        context.unroute("**/*")
        context.set_offline(False)
        network.send("Network.emulateNetworkConditions", NETWORK)  # slow 4G again
        flushed = page.evaluate(SAVED, "a.cell")["at"] - back
        browser.close()
    print(
        json.dumps(
            {
                "device": DEVICE,
                "taps": len(picker),
                "picker_ms": statistics.median(picker),
                "write_ms": statistics.median(write),
                "saved_ms": statistics.median(saved),
                "saved_outside_ms": statistics.median(saved_outside),
                "second_phone_ms": statistics.median(seen),
                "second_phone_after_saved_ms": statistics.median(seen_saved),
                "offline_taps": len(offline),
                "offline_write_ms": statistics.median(offline) if offline else None,
                "back_online_all_saved_ms": flushed,
                "picker_all": [round(t) for t in picker],
                "write_all": [round(t) for t in write],
                "saved_all": [round(t) for t in saved],
                "saved_outside_all": [round(t) for t in saved_outside],
                "second_phone_all": [round(t) for t in seen],
                "offline_write_all": [round(t) for t in offline],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
