// «Orden en la mesa»: the organizer taps the players in the order they sit, each tap
// numbering one; once only one is left, it is the last, and the page asks for that order
// (the address the ↑/↓ links would reach, with what the list's data-taps keeps of this
// one): one page load, not one a step. Tapping a numbered player takes them back, with
// those tapped after them. Without JavaScript, the ↑/↓ links.
const state = {order: []};  // the players' ids, in the order tapped

function paint(buttons) {
  buttons.forEach((button) => {
    const at = state.order.indexOf(button.getAttribute("data-player"));
    button.setAttribute("aria-pressed", at >= 0 ? "true" : "false");
    button.querySelector(".seat-mark").textContent = at >= 0 ? String(at + 1) : "";
  });
}

function tapped(event) {
  const button = event.target.closest(".seat-tap");
  if (!button) return;
  const list = button.closest("[data-taps]");
  const buttons = [...list.querySelectorAll(".seat-tap")];
  const ids = buttons.map((each) => each.getAttribute("data-player"));
  const id = button.getAttribute("data-player");
  const at = state.order.indexOf(id);
  state.order = at >= 0 ? state.order.slice(0, at) : state.order.concat(id);
  if (state.order.length === ids.length - 1) {
    state.order.push(ids.find((each) => !state.order.includes(each)));
  }
  paint(buttons);
  if (state.order.length < ids.length) return;
  const query = new URLSearchParams(state.order.map((each) => ["p", each]));
  new URLSearchParams(list.getAttribute("data-taps")).forEach((value, name) => query.append(name, value));
  buttons.forEach((each) => { each.disabled = true; });
  window.location.assign("?" + query.toString());
}

export function start() {
  const list = document.querySelector("ol[data-taps]");
  if (!list) return;
  state.order = [];
  list.querySelectorAll(".seat-name").forEach((name) => { name.hidden = true; });
  list.querySelectorAll(".seat-tap").forEach((button) => { button.hidden = false; });
  const hint = document.getElementById("seat-taps-hint");
  if (hint) hint.hidden = false;
  list.addEventListener("click", tapped);
}
