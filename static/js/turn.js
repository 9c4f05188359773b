// The turn said to screen readers; a digital turn on its player's phone: the focus after
// one's own roll or box, and the dice tapped to hold.
//   - A turn swapped in says what is new once in #turn-status (outside the swapped parts,
//     so that screen readers hear it): a digital turn's dice, a physical card's latest
//     change; to the turn's own player («te toca a ti») or to the others;
//     whose turn it is, the sheet says (data-turn, the same for everyone), who is looking,
//     the page (data-me).
//   - After one's own roll or box, focus goes back into the turn when the button pressed
//     is gone (the third roll, «Anotar»).
//   - A die tapped holds or releases it at once (its pressed state, its name and the kept
//     position the roll sends), then the dice held are sent (#hold) for the other phones
//     to see, queued with «Tirar» (card.html says why).
const state = {announced: "", acted: 0};  // the turn said last; when one's own move was answered

function announcement(turn) {
  const page = document.querySelector(".card-page[data-me]");
  const mine = page && turn.getAttribute("data-turn") === page.getAttribute("data-me");
  return turn.getAttribute(mine ? "data-announce-mine" : "data-announce") || "";
}

function settled() {
  const turn = document.getElementById("turn");
  const status = document.getElementById("turn-status");
  // The turn said anew (a roll, the turn passing on), or, once it is gone, the result.
  const result = document.querySelector("#sheet .result");
  const text = turn ? announcement(turn) : result ? result.textContent : "";
  if (status && text && text !== state.announced) status.textContent = text;
  state.announced = text;
  // Then, after one's own move, the focus: once the move is in (a whole sheet settled, or
  // a patch applied, versions.js).
  if (!state.acted || Date.now() - state.acted > 2000) return;
  const focused = document.activeElement;
  if (focused && focused !== document.body && document.body.contains(focused)) return;
  state.acted = 0;
  const next = ["#roll-button", "#turn .score-form input[type=radio]", "#turn-title", ".result"]
    .map((selector) => document.querySelector(selector)).find((element) => element !== null);
  if (next) {
    if (!next.hasAttribute("tabindex") && next.tagName === "P") next.setAttribute("tabindex", "-1");
    next.focus();
  }
}

function tapped(event) {
  const die = event.target.closest("button.die[aria-pressed]");
  if (!die || die.disabled) return;
  const held = die.getAttribute("aria-pressed") !== "true";
  die.setAttribute("aria-pressed", held ? "true" : "false");
  die.setAttribute("aria-label", die.getAttribute(held ? "data-held" : "data-free"));
  const kept = die.nextElementSibling;
  if (kept && kept.name === "guardar") kept.disabled = !held;
  const hold = document.getElementById("hold");
  if (hold) htmx.trigger(hold, "dice-held");
}

export function start() {
  const turn = document.getElementById("turn");
  state.announced = turn ? announcement(turn) : "";
  document.addEventListener("htmx:beforeRequest", (event) => {
    const source = event.detail.elt;
    // A die held is no move of the turn: the focus stays on the die. A move counts from its
    // sending: a poll or the stream may bring it before its own answer.
    if (source && source.closest && source.closest("#turn") && source.id !== "hold") {
      state.acted = Date.now();
      event.detail.xhr.addEventListener("loadend", () => { state.acted = Date.now(); });
    }
  });
  document.addEventListener("htmx:afterSettle", settled);
  document.addEventListener("dados:patched", settled);
  document.addEventListener("click", tapped);
}
