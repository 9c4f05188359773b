// «Orden en la mesa»'s own module (order.html loads it; no other page needs it, so it is
// not one of dados.js's): the organizer taps the players in the order they sit, each tap
// numbering one; once only one is left, it is the last, and the page asks for that order
// (the address the ↑/↓ links would reach, with what the list's data-taps keeps of this
// one): one page load, not one a step. Tapping a numbered player takes them back, with
// those tapped after them. Without JavaScript, the ↑/↓ links.
const seated = [];  // the players' ids, in the order tapped

function seat(event) {
  const button = event.target.closest(".seat-tap");
  if (!button) return;
  const list = button.closest("[data-taps]");
  const buttons = [...list.querySelectorAll(".seat-tap")];
  const ids = buttons.map((each) => each.getAttribute("data-player"));
  const at = seated.indexOf(button.getAttribute("data-player"));
  if (at >= 0) seated.splice(at); else seated.push(button.getAttribute("data-player"));
  if (seated.length === ids.length - 1) seated.push(ids.find((id) => !seated.includes(id)));
  buttons.forEach((each, i) => {
    const n = seated.indexOf(ids[i]) + 1;
    each.setAttribute("aria-pressed", n ? "true" : "false");
    each.firstElementChild.textContent = n || "";
  });
  if (seated.length < ids.length) return;
  buttons.forEach((each) => { each.disabled = true; });
  const kept = list.getAttribute("data-taps") || [];
  window.location.assign("?" + seated.map((id) => "p=" + id).concat(kept).join("&"));
}

function showSeating() {
  const list = document.querySelector("ol[data-taps]");
  if (!list) return;
  list.querySelectorAll(".seat-name, .seat-tap").forEach((each) => { each.hidden = !each.hidden; });
  document.getElementById("seat-taps-hint").hidden = false;
  list.addEventListener("click", seat);
}

showSeating();
