// «Pantalla del club»'s own module (screen.html loads it; no other page needs it, so it is
// not one of dados.js's). Two concerns, both on the board the server rendered:
// - its updates: every few seconds (the page's data-every) it asks the page's update
//   address whether the board's state (data-state) moved: 204 says no; otherwise the
//   new board, the same for every screen, which takes its place. A withdrawn link (404),
//   or a session that ended (a redirect, 403), reloads the page, which says so;
// - its pages: when more tables are in play than a page holds (data-per-page), it shows
//   them a page at a time, turning every data-page-every ms.
// The page of tables shown, counted from 0.
const screen = { page: 0 };

function board() {
  return document.getElementById("board");
}

function showPage() {
  const shown = board();
  const tables = [...shown.querySelectorAll(".table")];
  const perPage = Number(shown.getAttribute("data-per-page")) || tables.length || 1;
  const pages = Math.max(1, Math.ceil(tables.length / perPage));
  screen.page %= pages;
  tables.forEach((table, i) => {
    table.hidden = Math.floor(i / perPage) !== screen.page;
  });
  const said = shown.querySelector(".board-page");
  if (said) {
    said.textContent = pages > 1
      ? " · " + shown.getAttribute("data-page-said")
        .replace("%(page)s", screen.page + 1).replace("%(pages)s", pages)
      : "";
  }
  return pages;
}

function turnPage() {
  screen.page += 1;
  showPage();
}

function replace(html) {
  const parsed = document.createElement("template");
  parsed.innerHTML = html;
  const next = parsed.content.getElementById("board");
  if (!next) return;
  board().replaceWith(next);
  showPage();
}

async function poll() {
  const address = document.body.getAttribute("data-live");
  const state = board().getAttribute("data-state");
  try {
    const response = await fetch(address + "?estado=" + encodeURIComponent(state), {
      cache: "no-store",
      credentials: "same-origin",
    });
    if (response.redirected || response.status === 403 || response.status === 404) {
      window.location.reload();
      return;
    }
    if (response.status === 200 && response.headers.has("X-Dados-Screen")) {
      replace(await response.text());
    }
    // After a failed poll the page says it may be behind; it goes on asking.
    document.body.classList.toggle("stale", !response.ok);
  } catch {
    document.body.classList.add("stale");
  }
  schedule();
}

function schedule() {
  const every = Number(document.body.getAttribute("data-every")) || 3000;
  window.setTimeout(poll, every);
}

if (board()) {
  showPage();
  window.setInterval(turnPage, Number(document.body.getAttribute("data-page-every")) || 12000);
  schedule();
}
