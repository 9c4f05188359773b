// The card's versions: which answer about the card applies to the page, and the write gate.
//   - Every answer about the card says which versions it is for: a patch the one it was
//     made from and the one it brings (X-Dados-Base, X-Dados-To), a whole sheet its own
//     (X-Dados-Version). applies() alone decides what the page does with it.
//   - While a write is on its way, patches and polls wait, so that a live refresh never
//     lands between a write and its answer; what moved meanwhile is asked for after it.
const gate = {
  writing: 0,    // writes on their way
  formWrites: 0, // of them, those htmx sent from a form (which must stay in the page)
  missed: 0,     // the newest version heard while writing (Infinity: one not said)
};

export function shownVersion() {
  const shown = document.getElementById("sheet-version");
  return shown ? shown.value : null;
}

// What an answer about the card is to the page that shows `shownVersion()`: "apply" it,
// "drop" it (the page shows that or later), or "ask" for what the page missed (it is
// behind the patch's start). `base`, `to`: a patch's versions; `version`: a whole sheet's.
export function applies({base = null, to = null, version = null}) {
  const shown = Number(shownVersion());
  if (base !== null) {
    if (Number(base) > shown) return "ask";
    if (to !== null) return Number(to) > shown ? "apply" : "drop";
    return Number(base) === shown ? "apply" : "drop";
  }
  if (version !== null) return Number(version) >= shown ? "apply" : "drop";
  return "apply";
}

export function headers(get) {
  return {base: get("X-Dados-Base"), to: get("X-Dados-To"), version: get("X-Dados-Version")};
}

// A version heard from the stream, as a number; Infinity if it says none (ask anyway).
function heard(version) {
  const number = Number(version);
  return version && number === number ? number : Infinity;
}

// The card moved to `version` (none said: ask anyway) while a write was on its way.
export function missed(version) {
  gate.missed = Math.max(gate.missed, heard(version));
}

export function askWhatMoved(version) {
  if (heard(version) <= Number(shownVersion())) return;
  if (gate.writing > 0) {
    missed(version);
    return;
  }
  const poll = document.getElementById("sheet-poll");
  if (poll) htmx.trigger(poll, "card-moved", {version: heard(version)});
}

// `form`: htmx sends it from a form in the page (the picker keeps that form until answered).
export function startWrite({form = false} = {}) {
  gate.writing += 1;
  if (form) gate.formWrites += 1;
}

export function endWrite({form = false} = {}) {
  gate.writing = Math.max(0, gate.writing - 1);
  if (form) gate.formWrites = Math.max(0, gate.formWrites - 1);
  if (gate.writing === 0 && gate.missed) {
    const version = gate.missed;
    gate.missed = 0;
    // After the answer has been swapped in, so the poll sends the version it made.
    setTimeout(() => askWhatMoved(version), 0);
  }
}

export const writing = () => gate.writing > 0;
export const formWriting = () => gate.formWrites > 0;

// Swaps an answer the outbox had (fetch's, not htmx's) as htmx would have, if it applies.
export function swapAnswer(answer) {
  const sheet = document.getElementById("sheet");
  if (!sheet) return;
  const said = headers((name) => answer.headers.get(name));
  const what = applies(said);
  if (what === "ask") missed();
  if (what !== "apply") return;
  if (said.base !== null) return applyPatch(answer.text);
  htmx.swap(sheet, answer.text, {swapStyle: "outerHTML"}, {eventInfo: {target: sheet}});
}

// A patch (card.html's), however it came (the stream, a poll, a write's answer): each part
// in its place by its id, as hx-swap-oob says ("true": the element, "innerHTML": its
// content, "afterbegin": its children first). htmx would do the same at several times the
// cost: after each part, it tells every part swapped so far (a box's 17 parts, 153 events:
// 95 ms of a slow phone's CPU). The page hears one event, dados:patched, with every part in.
export function applyPatch(html) {
  const parsed = document.createElement("template");
  parsed.innerHTML = html;
  const focused = document.activeElement;
  const swapped = [];
  for (const top of Array.from(parsed.content.children)) {
    // Table rows and cells come inside a <template>, where the parser keeps them.
    for (const part of top.tagName === "TEMPLATE" ? Array.from(top.content.children) : [top]) {
      const how = part.getAttribute("hx-swap-oob");
      const target = how && part.id && document.getElementById(part.id);
      if (!target) continue;
      part.removeAttribute("hx-swap-oob");
      if (how === "innerHTML") {
        target.replaceChildren(...part.childNodes);
      } else if (how === "afterbegin") {
        swapped.push(...part.children);
        target.prepend(...part.childNodes);
        continue;
      } else {
        target.replaceWith(part);
      }
      swapped.push(how === "innerHTML" ? target : part);
    }
  }
  swapped.forEach((element) => htmx.process(element));
  // The focus stays where it was, on the element of the same id (htmx does as much).
  if (focused && focused.id && !focused.isConnected) {
    const again = document.getElementById(focused.id);
    if (again) again.focus({preventScroll: true});
  }
  document.dispatchEvent(new CustomEvent("dados:patched"));
}
