// The organizer's picker: a tap on a box opens it from the page, with no request. The card
// page carries a copy of each box's picker (template[data-picker], picker.html, the
// server's only HTML for it); this fills in the player, the addresses and the current
// value, from the cell tapped and its column's bonus line (what the server says of the
// player's Yahtzee). «Con dados» and the joker's steps ask the server, and swap inside
// the dialog. Without JavaScript, the cell's link is the picker's own page.
import {formWriting} from "./versions.js";

const state = {opener: null};  // what opened the picker, where focus goes back

const dialog = () => document.getElementById("picker-dialog");

// Sets an address on whatever carries one: a link's, a form's, and htmx's.
function address(element, url) {
  if (element.tagName === "FORM") {
    element.setAttribute("action", url);
    element.setAttribute("hx-post", url);
  } else {
    element.setAttribute("href", url);
    element.setAttribute("hx-get", url);
  }
}

function fill(content, link, cell, row) {
  const bonusRow = document.getElementById("row-yahtzee_bonuses");
  const bonus = bonusRow ? bonusRow.cells[cell.cellIndex].querySelector("a.cell") : null;
  const heading = document.querySelectorAll("#row-players th")[cell.cellIndex];
  const name = heading ? heading.getAttribute("title") : "";
  const current = link.getAttribute("data-value") || "";
  const joker = (bonus && bonus.getAttribute("data-joker")) || "";
  content.querySelectorAll("[data-fill=name], [data-fill=refused] bdi").forEach((part) => { part.textContent = name; });
  const now = content.querySelector("[data-fill=now]");
  now.textContent = current === "" ? now.getAttribute("data-blank") : now.getAttribute("data-current").replace("{value}", current);
  content.querySelectorAll("[data-address]").forEach((part) => address(part, link.getAttribute("href") + part.getAttribute("data-address")));
  content.querySelectorAll("[data-joker-address]").forEach((part) => address(part, joker + part.getAttribute("data-joker-address")));
  content.querySelectorAll("[data-cell]").forEach((part) => part.setAttribute("data-cell", cell.id));
  content.querySelectorAll("[data-said]").forEach((part) => part.setAttribute("data-said", part.getAttribute("data-said") + name));
  content.querySelector("input[name=was]").value = current;
  content.querySelectorAll("button[name=value]").forEach((button) => {
    if (button.value === current) button.setAttribute("aria-pressed", "true");
  });
  const joking = content.querySelector(".joker-offer");
  if (joking && link.hasAttribute("data-joker")) joking.hidden = false;
  if (row.id === "row-yahtzee_bonuses") {
    // No 50 in Yahtzee: no bonus, and the line may only go down (data-limit, rules.py's).
    content.querySelector("[data-fill=refused]").hidden = !link.hasAttribute("data-refused");
    const limit = Number(link.getAttribute("data-limit"));
    content.querySelectorAll(".values button").forEach((button) => { button.disabled = Number(button.value) > limit; });
  } else if (bonus && joker && !bonus.hasAttribute("data-refused")) {
    // With 50 in Yahtzee, five of a kind asks whether it was an extra Yahtzee.
    content.querySelector(".picker").setAttribute("data-asks", "");
  }
}

function open(link) {
  const cell = link.closest("td");
  const row = link.closest("tr");
  const template = row && document.querySelector(`template[data-picker="${row.id.replace(/^row-/, "")}"]`);
  const picker = document.getElementById("picker");
  if (!template || !cell || !picker || !dialog()) return false;
  // A write htmx sent from the picker, still on its way, must find its form in the page.
  if (formWriting()) return true;
  const content = template.content.cloneNode(true);
  fill(content, link, cell, row);
  picker.replaceChildren(content);
  htmx.process(picker);
  state.opener = link;
  show(picker, null);
  return true;
}

function show(picker, source) {
  if (!dialog().open) dialog().showModal();
  const next = focusIn(picker, source);
  if (next) next.focus();
}

// Where focus goes in the picker: while the dice are being tapped, the score they make or
// the faces; asked about an extra Yahtzee, the question; otherwise the box's score if it
// has one, else the title (never «Sin anotar», which would look like the suggested answer).
function focusIn(picker, source) {
  const tapping = source && source.closest && source.closest(".with-dice");
  const next = tapping ? picker.querySelector(".proposal button, .with-dice .face") : null;
  return next ||
    picker.querySelector(".values [aria-pressed='true'], .values-extra .scratch[aria-pressed='true']") ||
    picker.querySelector("#picker-title[tabindex]") ||
    picker.querySelector("button, a");
}

function clicked(event) {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.target.closest("#sheet a.cell[href]");
  if (link && open(link)) {
    event.preventDefault();
    return;
  }
  // Five of a kind, once the player has 50 in Yahtzee: asked first (picker.html); «No»
  // writes the value alone.
  const five = event.target.closest("#picker .picker[data-asks] button[data-five]");
  const ask = document.getElementById("picker-ask");
  if (five && ask && ask.hidden) {
    event.preventDefault();
    ask.hidden = false;
    ask.querySelector("button").focus();
    return;
  }
  if (event.target.closest("#picker-ask .ask-no")) {
    document.getElementById("picker-form").requestSubmit(document.querySelector("#picker button[data-five]"));
    return;
  }
  const close = event.target.closest(".close-picker");
  if (close && dialog() && dialog().open) {
    event.preventDefault();
    dialog().close();
  }
}

export function start() {
  document.addEventListener("click", clicked);
  // The server's steps («Con dados», the joker's), swapped inside the dialog.
  document.addEventListener("htmx:beforeRequest", (event) => {
    const source = event.detail.elt;
    if (source && source.getAttribute("hx-target") === "#picker" && !source.closest("#picker")) state.opener = source;
  });
  document.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target.id !== "picker" || !dialog()) return;
    const config = event.detail.requestConfig;
    show(event.detail.target, config && config.elt);
  });
  // A write from the picker answered: closed (a refusal shows at the top of the card).
  document.addEventListener("htmx:afterOnLoad", (event) => {
    const elt = event.detail.elt;
    if (elt && elt.tagName === "FORM" && elt.closest("#picker-dialog") && dialog() && dialog().open) dialog().close();
    const target = event.detail.target;
    if (!target || target.id !== "sheet" || (elt && elt.classList && elt.classList.contains("poll"))) return;
    const alert = document.querySelector("#sheet-alert > .alert-error");
    if (alert) {
      alert.setAttribute("tabindex", "-1");
      alert.focus();
      alert.scrollIntoView({block: "center"});
    }
  });
  document.addEventListener("close", (event) => {
    if (event.target.id !== "picker-dialog") return;
    if (state.opener && document.body.contains(state.opener)) state.opener.focus();
    state.opener = null;
  }, true);
}
