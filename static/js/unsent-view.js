// What the organizer sees of the writes kept (unsent.js): their cells show what was typed,
// marked as not sent yet, and so do the cells of those taken whose answer the page has not
// reached yet; the rest of the sheet is the server's. Below the card, #outbox says how many
// wait and why (no network, sending, a session that ended), what did not go in, and each
// conflict with the organizer's choice. The words are card.html's, in the page.

export const words = (name) => document.getElementById("outbox").getAttribute("data-" + name);
export const valueSaid = (value) =>
  value === "" || value === undefined || value === null ? words("blank") : value;

// The cells of the writes kept and of those taken but not yet in the page show what was
// typed; the rest of the sheet is the server's. A painted cell keeps what the server sent
// in a <template> inside it, to put it back, and for the sheet kept for a reload.
export function show(state, {offline, again, drop}) {
  const sheet = document.getElementById("sheet");
  const box = document.getElementById("outbox");
  if (!sheet || !box) return;
  const waiting = state.writes.filter((write) => !write.conflict);
  const last = {};
  state.settling.forEach((taken) => { last[taken.write.cell] = taken.write; });
  waiting.forEach((write) => { if (write.cell) last[write.cell] = write; });
  sheet.querySelectorAll("td[data-unsent]").forEach((cell) => {
    const write = last[cell.id];
    if (!write || cell.getAttribute("data-unsent") !== write.key) unpaint(cell);
  });
  Object.keys(last).forEach((id) => {
    const cell = document.getElementById(id);
    if (cell && !cell.hasAttribute("data-unsent")) paintCell(cell, last[id], state.writes.includes(last[id]));
  });
  const count = waiting.length;
  sheet.classList.toggle("totals-unsent", count > 0 || state.settling.length > 0);
  say(box, count, state, offline);
  paintConflicts(box, state.writes, again, drop);
  const undoButton = document.getElementById("undo-button");
  if (undoButton) {
    if (!undoButton.hasAttribute("data-server")) undoButton.setAttribute("data-server", undoButton.disabled ? "disabled" : "");
    undoButton.disabled = !count && undoButton.getAttribute("data-server") === "disabled";
  }
  box.hidden = !state.writes.length && !state.closed.length;
}

function say(box, count, state, offline) {
  const plural = (name, n) => box.getAttribute("data-" + name + (n === 1 ? "-one" : "-many")).replace(/\d+/, n);
  let status = "";
  if (state.login && state.writes.length) {
    status = plural("login", state.writes.length);
  } else if (count) {
    status = plural(offline ? "offline" : "sending", count);
  }
  const said = box.querySelector("#outbox-status");
  if (said.textContent !== status) said.textContent = status;
  document.getElementById("outbox-login").hidden = !(state.login && state.writes.length);
  const totals = box.querySelector(".outbox-totals");
  const note = count ? words("totals") : "";
  if (totals.textContent !== note) totals.textContent = note;
  const closed = box.querySelector(".outbox-closed");
  const lost = state.closed.map((write) => write.said + ": " + valueSaid(write.shown)).join("; ");
  const text = lost ? words("closed").replace("{lost}", lost) : "";
  if (closed.textContent !== text) closed.textContent = text;
}

function paintCell(cell, write, kept) {
  const link = cell.querySelector("a.cell");
  if (!link) return;
  const was = document.createElement("template");
  was.className = "unsent-was";
  was.innerHTML = cell.innerHTML;
  const label = link.getAttribute("aria-label") || "";
  link.textContent = write.shown === "" ? "·" : write.shown;
  link.classList.add(kept ? "unsent" : "settling");
  link.classList.remove("blank", "scratched");
  link.setAttribute("data-value", write.value ?? write.shown);
  link.setAttribute("aria-label", label.replace(/:[^:]*$/, ": " + valueSaid(write.shown) +
    (kept ? ", " + words("unsent") : "")));
  cell.setAttribute("data-unsent", write.key);
  cell.appendChild(was);
}

export function unpaint(cell) {
  const was = cell.querySelector("template.unsent-was");
  cell.removeAttribute("data-unsent");
  if (was) cell.innerHTML = was.innerHTML;
}

// A write another device got to first, or one the server refused: said, with the
// organizer's choice.
function paintConflicts(box, writes, again, drop) {
  const items = box.querySelector(".outbox-conflicts");
  const conflicts = writes.filter((write) => write.conflict);
  const shown = conflicts.map((write) => write.key + "=" + write.now).join(" ");
  if (items.getAttribute("data-shown") === shown) return;
  items.setAttribute("data-shown", shown);
  items.replaceChildren(...conflicts.map((write) => {
    const item = box.querySelector("#outbox-conflict").content.firstElementChild.cloneNode(true);
    const text = write.kind === "undo" ? words("undo-conflict") : write.now === undefined || write.now === null
      ? words("refused") : words("conflict");
    item.querySelector("span").textContent = text.replace("{said}", write.said)
      .replace("{server}", valueSaid(write.now)).replace("{mine}", valueSaid(write.shown));
    item.querySelector(".again").addEventListener("click", () => again(write));
    item.querySelector(".drop").addEventListener("click", () => drop(write));
    return item;
  }));
}
