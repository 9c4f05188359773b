// The outbox's page side, on the organizer's physical card: a write (a box, the bonus line,
// an extra Yahtzee, «Deshacer») shows in its cell at once, marked as not sent yet, goes
// into the outbox (outbox.js) and is sent at once, while it is being stored; without a
// network it waits there, and goes when the network is back, in order, each once. The
// sums, the bonus and the positions are the server's: they wait for its answer. Without
// IndexedDB, the forms go to the server as htmx sends them.
import {add as store, available, drain, keepSheet as storeSheet, keptSheet, list, nextToSend, put, remove, send, uuid} from "./outbox.js";
import {askWhatMoved, endWrite, shownVersion, startWrite, swapAnswer} from "./versions.js";
import {hideError, showError} from "./messages.js";
import {token} from "./session.js";
import {show, unpaint, valueSaid, words} from "./unsent-view.js";

const state = {
  here: null,        // {user, card}: whose writes on which card this page keeps
  writes: [],        // this card's writes kept, oldest first, some perhaps not stored yet
  dropped: new Set(), // the keys of the writes «Deshacer» took back: never sent, whatever the store says
  settling: [],      // writes taken whose cells show them until the page reaches {version}
  closed: [],        // writes that did not go in: the card was finalized or discarded
  login: "",         // the session ended: the log-in page's address
  unreachable: false, // the last send had no answer: offline, whatever onLine says
  flushing: false,
  again: false,
};

function here() {
  const page = document.querySelector(".card-page[data-outbox]");
  if (!available() || !page) return null;
  return {user: page.getAttribute("data-me"), card: page.getAttribute("data-outbox")};
}

const offline = () => !navigator.onLine || state.unreachable;
const waiting = () => state.writes.filter((write) => !write.conflict);

// Whether writes wait here (what needs the server waits for them).
export const pending = () => !!state.here && state.writes.length > 0;
export const isOffline = offline;


// A form's write, from the tap that sent it.
function keep(form, button) {
  const data = new FormData(form);
  if (button && button.name) data.append(button.name, button.value);
  data.delete("csrfmiddlewaretoken");
  data.delete("version");
  const source = button && button.hasAttribute("data-cell") ? button : form;
  // What the box will hold: the value tapped (the bonus line's count), or the score an
  // extra Yahtzee leaves in the box chosen; what its cell shows (the bonus line's points).
  const value = !button ? "" : button.name === "box" ? button.getAttribute("data-shown") : button.value;
  const write = {
    key: uuid(),
    user: state.here.user,
    card: state.here.card,
    url: form.getAttribute("action"),
    body: new URLSearchParams(data).toString(),
    cell: source.getAttribute("data-cell"),
    said: source.getAttribute("data-said") || "",
    value,
    shown: (button && button.getAttribute("data-shown")) || value,
    at: Date.now(),
  };
  add(write);
}

// «Deshacer»: the newest write still waiting here is taken back, never sent; else the
// undo itself is a write, of the version the page shows (or, behind a write on its way,
// of the one its answer brings).
function undo(form) {
  const newest = waiting().pop();
  if (newest && !newest.sending) {
    newest.dropped = true;
    state.dropped.add(newest.key);
    state.writes = state.writes.filter((write) => write !== newest);
    const stored = newest.id !== undefined ? Promise.resolve(newest.id) : newest.saved;
    if (stored) stored.then((id) => id !== undefined && remove(id)).catch(() => {});
    paint();
    document.getElementById("undo-status").textContent = words("removed")
      .replace("{said}", newest.said).replace("{mine}", valueSaid(newest.shown));
    return;
  }
  add({
    key: uuid(), user: state.here.user, card: state.here.card, kind: "undo",
    url: form.getAttribute("action"), body: "", cell: null, said: words("undo"), shown: "",
    // Behind the write on its way: of the version its answer brings (outbox.js).
    version: newest ? null : shownVersion(), after: newest ? newest.key : null, at: Date.now(),
  });
}

function add(write) {
  state.writes.push(write);
  // Sent first, before the page repaints: alone in the page, it is sent at once (outbox.js,
  // drain's `sent`); behind others, in its turn; offline, it waits (and «Deshacer» can still
  // take it back unsent).
  const alone = !offline() && !state.flushing && !state.login && nextToSend(state.writes) === write;
  flush(alone ? {write, answer: send(write, {version: sending(write), token: token()})} : null);
  const dialog = document.getElementById("picker-dialog");
  if (dialog && dialog.open) dialog.close();
  paint();
  // Stored while it is sent: the tap never waits for the store.
  write.saved = store(write);
  write.saved.then((id) => {
    write.id = id;
    if (write.dropped) remove(id);
  }, () => {});
  flush();
}

// What the page does with a write's answer, once the store has settled it.
function answered(write, verdict, answer) {
  write.sending = false;
  if (verdict.kind !== "offline") state.unreachable = false;
  if (verdict.kind !== "login" && answer) state.login = "";
  const leaves = verdict.kind === "taken" || verdict.kind === "closed";
  if (leaves) state.writes = state.writes.filter((kept) => kept !== write);
  if (verdict.kind === "taken") {
    const version = answer.headers.get("X-Dados-To") || answer.headers.get("X-Dados-Version");
    if (write.cell) state.settling.push({write, version: Number(version)});
    if (answer.status === 409) askWhatMoved(); else swapAnswer(answer);
  } else if (verdict.kind === "closed") {
    state.closed.push(write);
    askWhatMoved();
  } else if (verdict.kind === "conflict") {
    swapAnswer(answer);
  } else if (verdict.kind === "login") {
    state.login = verdict.login || state.login || document.getElementById("outbox-login").getAttribute("href");
  } else if (verdict.kind === "kept") {
    showError(verdict.reason === "expired" ? "expired" : verdict.reason === "forbidden" ? "forbidden" : "failed",
      {status: answer.status});
  } else if (verdict.kind === "offline") {
    state.unreachable = true;
  }
  if (verdict.kind !== "kept" && verdict.kind !== "offline") hideError({kind: "offline"});
  paint();
}

// The page's version, for a write about to be sent.
function sending(write) {
  write.sending = true;
  return shownVersion();
}

// `sent`: the write just tapped, already on its way (add).
function flush(sent = null) {
  if (!state.here || state.login) return;
  if (state.flushing) {
    state.again = true;
    return;
  }
  state.flushing = true;
  startWrite();
  drain({
    // Those of this page, at once while one is still being stored (the tap never waits for
    // the store); else the store's, which another tab or the worker may have sent.
    writes: async () => {
      if (state.writes.every((write) => write.id !== undefined)) await reload();
      return state.writes;
    },
    version: sending,
    token,
    answered,
    sent,
  }).catch(() => {}).then(() => {
    state.flushing = false;
    endWrite();
    if (state.again) {
      state.again = false;
      flush();
    }
  });
}

// The writes kept, as the store has them now (the worker may have sent some), with those
// not stored yet.
async function reload() {
  if (!state.here) return;
  let stored = await list(state.here.user, state.here.card).catch(() => null);
  if (!stored) return;
  // Taken back before its storing was done: removed again, never shown nor sent.
  stored.filter((write) => state.dropped.has(write.key)).forEach((write) => remove(write.id).catch(() => {}));
  stored = stored.filter((write) => !state.dropped.has(write.key));
  const ids = new Set(stored.map((write) => write.id));
  // Those another sender took (the worker's Background Sync): their cells keep them until
  // the page's next version (the patch that brings it is made from the page's version to
  // the card's, which has them all), and the page asks for it now.
  const next = Number(shownVersion()) + 1;
  const taken = state.writes.filter((write) => write.id !== undefined && !ids.has(write.id) && write.cell);
  taken.forEach((write) => state.settling.push({write, version: next}));
  if (taken.length) askWhatMoved();
  const mine = new Map(state.writes.filter((write) => write.id !== undefined).map((write) => [write.id, write]));
  state.writes = stored.map((write) => mine.get(write.id) || write)
    .concat(state.writes.filter((write) => write.id === undefined && !write.dropped))
    .filter((write) => write.id === undefined || ids.has(write.id));
  paint();
}

function paint() {
  if (!state.here) return;
  const shown = Number(shownVersion());
  state.settling = state.settling.filter((taken) => taken.version > shown);
  show(state, {offline: offline(), again: sendAgain, drop});
}

// «Volver a anotar»: the same value over what the server has now, as a new write.
function sendAgain(write) {
  const params = new URLSearchParams(write.body);
  if (params.has("was")) params.set("was", write.now ?? "");
  const next = {...write, key: uuid(), body: params.toString(), conflict: undefined, now: undefined};
  if (write.kind === "undo") next.version = shownVersion();
  delete next.saved;
  state.writes[state.writes.indexOf(write)] = next;
  put(next).catch(() => {});
  paint();
  flush();
}

function drop(write) {
  state.writes = state.writes.filter((kept) => kept !== write);
  if (write.id !== undefined) remove(write.id).catch(() => {});
  paint();
}

// After a swap (each part of a patch swaps and settles on its own: once for them all,
// before the next frame): the writes painted again over what the server sent, and then
// the sheet kept for a reload without a network.
let repainting = false;
function repaint() {
  if (repainting || !state.here) return;
  repainting = true;
  requestAnimationFrame(() => {
    repainting = false;
    paint();
    setTimeout(keepSheet, 0);
  });
}

function keepSheet() {
  const sheet = document.getElementById("sheet");
  if (!state.here || !sheet) return;
  const copy = sheet.cloneNode(true);
  copy.querySelectorAll("td[data-unsent]").forEach(unpaint);
  copy.classList.remove("totals-unsent");
  storeSheet(state.here.card, state.here.user, shownVersion(), copy.outerHTML).catch(() => {});
}

// The page's session has ended (live.js): with writes kept, the page says to log in.
export function sessionEnded(url) {
  if (!pending()) return false;
  state.login = url;
  paint();
  return true;
}

export function start() {
  state.here = here();
  if (!state.here) return;
  // Before htmx (listening on the form) sends it.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.id === "undo-form") {
      event.preventDefault();
      event.stopPropagation();
      undo(form);
    } else if (form.hasAttribute && form.hasAttribute("data-outbox")) {
      event.preventDefault();
      event.stopPropagation();
      keep(form, event.submitter);
    }
  }, true);
  document.addEventListener("htmx:afterSwap", repaint);
  document.addEventListener("htmx:oobAfterSwap", repaint);
  document.addEventListener("htmx:afterSettle", repaint);
  document.addEventListener("dados:patched", repaint);
  window.addEventListener("online", () => { state.unreachable = false; paint(); flush(); });
  window.addEventListener("offline", paint);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible") return;
    state.login = "";  // logged in again elsewhere, maybe: the next answer says
    flush();
  });
  document.addEventListener("htmx:sseOpen", () => { state.unreachable = false; flush(); });
  // While writes wait with no answer, ask again now and then.
  setInterval(() => { if (state.writes.length && state.unreachable && !state.flushing) flush(); }, 10000);
  if (window.BroadcastChannel) new BroadcastChannel("dados-outbox").addEventListener("message", reload);
  // A reload without a network shows the page last loaded: the newest sheet seen goes
  // over it, then the writes kept.
  const {card, user} = state.here;
  keptSheet(card).then((kept) => {
    const sheet = document.getElementById("sheet");
    if (kept && kept.user === user && sheet && kept.version > Number(shownVersion())) {
      htmx.swap(sheet, kept.html, {swapStyle: "outerHTML"}, {eventInfo: {target: sheet}});
    }
  }).catch(() => {}).then(reload).then(flush);
}
