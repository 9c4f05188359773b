// What every page needs beyond htmx: the list filters, «Copiar», the service worker, and
// the questions asked before a log-out or an action that needs the network.
import {available, forget, list, setSession} from "./outbox.js";
import {isOffline, pending} from "./unsent.js";
import {token} from "./session.js";
import {showError} from "./messages.js";

// Case and accents aside, as the server's search: «oscar» finds Óscar.
const fold = (text) => text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLocaleLowerCase("es");

function filter(event) {
  const input = event.target;
  const selector = input.getAttribute && input.getAttribute("data-filter");
  if (!selector) return;
  const needle = fold(input.value.trim());
  let shown = 0;
  document.querySelectorAll(selector + " li").forEach((item) => {
    const checked = item.querySelector("input:checked");
    item.hidden = !!needle && !checked && fold(item.textContent).indexOf(needle) === -1;
    if (!item.hidden) shown += 1;
  });
  const empty = document.querySelector(input.getAttribute("data-filter-empty"));
  if (empty) empty.hidden = shown > 0;
}

// «Copiar»: the field it names, to the clipboard. Only with JavaScript is there a button;
// over plain HTTP (a club's Wi-Fi) there is no Clipboard API, and the selected text is
// copied the old way.
function showCopyButtons() {
  document.querySelectorAll("button[data-copy][hidden]").forEach((button) => { button.hidden = false; });
}

function copy(event) {
  const button = event.target.closest("button[data-copy]");
  const field = button && document.getElementById(button.getAttribute("data-copy"));
  if (!field) return;
  field.select();
  const copied = () => { button.textContent = button.getAttribute("data-copied"); };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(copied, () => {});
  } else if (document.execCommand("copy")) {
    copied();
  }
}

// What needs the server (finalizing, discarding, a rematch, a digital turn's dice) says so
// without a network, or while writes wait, instead of failing.
function needsNetwork(event) {
  const control = event.target.closest && event.target.closest("[data-needs-network]");
  if (!control || (event.type === "click" && control.tagName === "FORM")) return;
  if (!isOffline() && !pending()) return;
  event.preventDefault();
  event.stopPropagation();
  showError("needs-network");
}

// A page that works without JavaScript works with it: a link or form whose htmx answer has
// nowhere to go here (the finalize confirmation's or a box's own page, without the card's
// sheet) is left to the browser, as if there were no htmx.
function withoutTarget(event) {
  const elt = event.type === "submit" ? event.target : event.target.closest && event.target.closest("a[href]");
  const target = elt && elt.getAttribute("hx-target");
  if (target && target.startsWith("#") && !document.querySelector(target)) event.stopPropagation();
}

// Logging out with writes still kept: they stay on this phone for their user, who is
// asked first.
function loggingOut(event) {
  const form = event.target;
  const user = document.body.getAttribute("data-user");
  if (form.id !== "logout-form" || !available() || !user || form.dadosAsked) return;
  event.preventDefault();
  list(user).then((writes) => writes.length, () => 0).then((kept) => {
    if (kept && !window.confirm(form.getAttribute("data-unsent"))) return;
    form.dadosAsked = true;
    // Forgotten now, not only by the service worker (there is none over plain HTTP).
    forget().catch(() => {}).then(() => form.requestSubmit());
  });
}

// The service worker (templates/offline/sw.js) keeps the card pages seen and the files
// they need, and sends the outbox's writes with the page closed. Only in a secure context
// (HTTPS, or this machine): over a club's plain-HTTP Wi-Fi, the outbox works without it.
function register() {
  const worker = document.body.getAttribute("data-worker");
  if (worker && "serviceWorker" in navigator) {
    navigator.serviceWorker.register(worker, {type: "module"}).catch(() => {});
  }
  // Who the browser's session belongs to, and their token: the worker sends only their
  // writes, with the token of the newest page.
  if (available()) setSession(document.body.getAttribute("data-user") || "0", token()).catch(() => {});
}

// Writes still kept (unsent.js) as the page goes away: the browser's Background Sync sends
// them with the page closed. (Not while it is open: the page sends them itself, and the two
// would take turns at the lock.)
function syncLater() {
  if (!pending() || !navigator.serviceWorker || !navigator.serviceWorker.controller) return;
  navigator.serviceWorker.ready.then((registration) => registration.sync && registration.sync.register("dados-outbox"))
    .catch(() => {});
}

export function start() {
  document.addEventListener("input", filter);
  showCopyButtons();
  document.addEventListener("htmx:afterSettle", showCopyButtons);
  document.addEventListener("click", copy);
  document.addEventListener("click", needsNetwork, true);
  document.addEventListener("submit", needsNetwork, true);
  document.addEventListener("submit", loggingOut, true);
  document.addEventListener("click", withoutTarget, true);
  document.addEventListener("submit", withoutTarget, true);
  register();
  window.addEventListener("pagehide", syncLater);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible") syncLater();
  });
}
