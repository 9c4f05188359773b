// The live card: the sheet follows the card's versions on every phone.
//   - The stream (scorecards/live.py), opened by htmx's SSE extension (sse-connect around
//     the sheet), brings each change's patch; when it says the card moved without one, the
//     poll asks. A stream that cannot open or keeps dropping (three times in a minute) is
//     closed, and the poll asks every few seconds instead; a stream that dropped opens
//     again when the network is back, or when its viewer returns to an idle one.
//   - The poll (#sheet-poll) asks only when told (card-moved): by the stream, or by the
//     timer here, which runs only while no stream is open.
//   - A digital card's stream also says who follows it («presence»), kept in data-here for
//     the CSS while it is open. Offline, the page closes it: the others see this phone gone.
import {hideError, showError} from "./messages.js";
import {applies, applyPatch, askWhatMoved, endWrite, headers, missed, shownVersion, startWrite, writing} from "./versions.js";

const state = {
  stream: null,     // {holder, source}: the element with sse-connect, its EventSource
  streaming: false, // the stream is open
  drops: [],        // when it dropped, in the last minute
  resting: null,    // {holder, url, why}: a stream closed idle or dropped, to open again
  timer: null,      // the poll's timer, while no stream is open
  login: () => false, // the session ended: true when the page said so (unsent.js)
};

// «Sin conexión» goes once the card is heard from, unless the browser still has no network.
const heardOnline = () => navigator.onLine && hideError({kind: "offline-poll"});

// A patch from the stream, as a poll's answer would bring it.
function patched(message) {
  heardOnline();
  const patch = JSON.parse(message.data);
  const what = applies({base: patch.base, to: message.lastEventId || null});
  if (what === "drop") return;
  if (writing()) {
    missed(message.lastEventId);
  } else if (what === "ask") {
    askWhatMoved();
  } else {
    applyPatch(patch.html);
  }
}

// Who follows the card, as the stream said (the players' ids), or null: not known here.
function following(here) {
  const page = document.querySelector(".card-page");
  if (page && here === null) page.removeAttribute("data-here");
  else if (page) page.setAttribute("data-here", here);
}

// `rest`: why it may open again ("idle": when its viewer is back; "dropped": when the
// network is); without, it is closed for good (refused, finalized, discarded).
function closeStream({rest = ""} = {}) {
  const {stream} = state;
  if (stream) {
    const url = stream.holder.getAttribute("sse-connect");
    if (rest && url) state.resting = {holder: stream.holder, url, why: rest};
    stream.holder.removeAttribute("sse-connect");  // so the extension does not reopen it
    stream.source.close();
  }
  state.stream = null;
  state.streaming = false;
  following(null);
  pollEvery();
}

// A stream closed, opened again from the version the page shows: an idle one when its
// viewer is back, a dropped one when the network is.
function reopenStream(event) {
  const {resting} = state;
  if (!resting || document.visibilityState !== "visible" || !navigator.onLine) return;
  if (resting.why === "dropped" && !(event && event.type === "online")) return;
  resting.holder.setAttribute("sse-connect", resting.url.split("?")[0] + "?version=" + shownVersion());
  // htmx processes an element anew only when its attributes changed: at the same version
  // as it first opened, the stream would not open again.
  resting.holder.setAttribute("data-opened", String(Date.now()));
  state.resting = null;
  state.drops = [];
  htmx.process(resting.holder);
}

function opened(event) {
  const source = event.detail.source;
  state.stream = {holder: event.target, source};
  state.streaming = true;
  pollEvery();
  // What moved while it was closed, it brings: it opens from the version the page shows.
  heardOnline();
  if (source.dadosFollows) return;  // the browser reconnected it: its listeners stay
  source.dadosFollows = true;
  source.addEventListener("patch", patched);
  source.addEventListener("version", (message) => askWhatMoved(message.data));
  source.addEventListener("presence", (message) => following(message.data));
  // Finalized or discarded: one last look says which, and nothing more will come.
  source.addEventListener("end", () => {
    closeStream();
    askWhatMoved();
  });
  // Open for a long while with no request from its viewer: the poll takes over until
  // they show they are there again.
  source.addEventListener("idle", () => closeStream({rest: "idle"}));
  // The session that opened it has ended: to log in, unless the page has writes to keep
  // (it says so, with the link).
  source.addEventListener("login", (message) => {
    closeStream();
    if (!state.login(message.data)) window.location.assign(message.data);
  });
}

function dropped(event) {
  const source = event.detail.source;
  state.stream = {holder: event.target, source};
  state.streaming = false;
  following(null);
  pollEvery();
  const now = Date.now();
  state.drops = state.drops.filter((at) => now - at < 60000).concat([now]);
  // CLOSED: refused (not a stream: 204, 4xx); else the browser reconnects, saying the
  // last version it heard (Last-Event-ID), unless it has dropped too often: then it
  // waits for the network to come back.
  if (source.readyState === EventSource.CLOSED) {
    closeStream();
  } else if (state.drops.length >= 3) {
    closeStream({rest: "dropped"});
  }
}

// The poll's timer runs only while no stream is open.
function pollEvery() {
  const poll = document.getElementById("sheet-poll");
  const every = poll ? Number(poll.getAttribute("data-every")) : 0;
  if (state.streaming || !every) {
    clearInterval(state.timer);
    state.timer = null;
  } else if (!state.timer) {
    state.timer = setInterval(() => {
      const current = document.getElementById("sheet-poll");
      if (!current) return pollEvery();
      if (!state.streaming && !writing()) htmx.trigger(current, "card-moved");
    }, every);
  }
}

const isPoll = (elt) => !!(elt && elt.classList && elt.classList.contains("poll"));

function beforeRequest(event) {
  const config = event.detail.requestConfig;
  const source = config ? config.elt : null;
  if (isPoll(source)) {
    if (!navigator.onLine) {  // it could only fail, an error htmx logs: say so instead
      event.preventDefault();
      showError("offline-poll");
    } else if (writing()) {
      missed(((config.triggeringEvent || {}).detail || {}).version);
      event.preventDefault();
    }
    return;
  }
  if (!source || config.verb !== "post") return;
  // What was said of the last try: this one will say its own (not a die held, which is no
  // try of the roll).
  if (source.id !== "hold") hideError({force: true});
  startWrite({form: true});
  // loadend: answered, failed, timed out or aborted alike.
  event.detail.xhr.addEventListener("loadend", () => endWrite({form: true}));
}

// An answer htmx got: dropped unless it applies (beforeOnLoad rather than beforeSwap: it
// fires on the element that asked, still in the page); a poll's log-in redirect, while the
// page keeps writes, becomes the page's own message.
function beforeOnLoad(event) {
  const xhr = event.detail.xhr;
  if (!xhr || !document.getElementById("sheet-version")) return;
  const redirect = xhr.getResponseHeader("HX-Redirect");
  if (redirect && state.login(redirect)) {
    event.preventDefault();
    return;
  }
  const said = headers((name) => xhr.getResponseHeader(name));
  // A poll's whole sheet is for the page that asked; a write's answers always apply
  // unless the page moved past them.
  const what = applies(said);
  if (what === "apply" && said.base !== null && xhr.status < 400) {
    event.preventDefault();  // a patch: applied here, as the stream's are
    heardOnline();
    applyPatch(xhr.response);
    return;
  }
  if (what === "apply" || (said.base === null && !isPoll(event.detail.elt) && said.version === null)) {
    if (xhr.status < 400) heardOnline();
    return;
  }
  event.preventDefault();  // (a picker's form is closed after it all the same: picker.js)
  if (what === "ask") askWhatMoved();
}

function failed(event) {
  const xhr = event.detail.xhr;
  const status = xhr ? xhr.status : 0;
  if (status === 404) {
    // The card is gone (discarded): stop asking for it.
    const poll = document.getElementById("sheet-poll");
    if (poll) poll.remove();
    closeStream();
    showError("gone");
  } else if (status === 403) {
    showError(xhr.getResponseHeader("X-Dados-Refusal") === "expired" ? "expired" : "forbidden");
  } else {
    showError("failed", {status});
  }
}

// The sheet's table where its viewer left it: a live refresh replaces the whole sheet, and
// a player looking at their own column, right of the first ones, stays on it.
let scrolled = null;
function keepScroll(event) {
  const target = event.detail.target;
  if (!target || target.id !== "sheet") return;
  const table = target.querySelector(".sheet-scroll");
  scrolled = table ? {table, left: table.scrollLeft} : null;
}
function restoreScroll() {
  if (scrolled === null) return;
  const table = document.querySelector("#sheet .sheet-scroll");
  // Only when the table was replaced (a write's answer patches cells in place).
  if (table && !scrolled.table.isConnected) table.scrollLeft = scrolled.left;
  scrolled = null;
}

// `login(url)`: what the page does when its session has ended (true: it said so).
export function start({login} = {}) {
  if (login) state.login = login;
  document.addEventListener("htmx:sseOpen", opened);
  document.addEventListener("htmx:sseError", dropped);
  document.addEventListener("htmx:beforeRequest", beforeRequest);
  document.addEventListener("htmx:beforeOnLoad", beforeOnLoad);
  document.addEventListener("htmx:responseError", failed);
  document.addEventListener("htmx:beforeSwap", keepScroll);
  document.addEventListener("htmx:afterSwap", restoreScroll);
  document.addEventListener("htmx:sendError", (event) => {
    const elt = event.detail.elt;
    if (isPoll(elt)) {
      showError("offline-poll");
    } else {
      // A digital turn's roll or box that did not go through: said until the next try.
      showError("offline", {keep: !!(elt && elt.closest && elt.closest("#turn"))});
    }
  });
  document.addEventListener("visibilitychange", reopenStream);
  document.addEventListener("pointerdown", reopenStream);
  document.addEventListener("keydown", reopenStream);
  // Without a network the stream is closed at once, rather than when the browser gives up
  // on it: the server, and so the table, knows sooner (presence); it opens again online.
  window.addEventListener("offline", () => { if (state.stream) closeStream({rest: "dropped"}); });
  window.addEventListener("online", (event) => {
    hideError({kind: "offline-poll"});
    reopenStream(event);
    askWhatMoved();
  });
  // The page's first poll timer, unless its stream opens first.
  pollEvery();
}
