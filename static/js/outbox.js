// Dados's outbox: the organizer's writes on a physical card (a box, the bonus line, an
// extra Yahtzee, «Deshacer»), kept in the browser (IndexedDB) from the tap until the
// server has them, in order, per user and card. The card page (unsent.js) and the service
// worker (sw.js, Background Sync) send them with the same code, drain() below, one sender
// at a time (a Web Lock).
//
// The protocol, which verdict() is the only place to decide:
//   - Each write carries its own Idempotency-Key: sent twice (its answer lost), the server
//     takes it once, and a replay of its key is answered as taken.
//   - "taken": a 2xx answer that carries the card's version for it (X-Dados-Version, or
//     X-Dados-Base for a patch); or, on a card finalized since (a 409), a box that already
//     holds the value written (X-Dados-Now): the write taken before, its answer lost. (A
//     card in play answers a write whose value is there already with a 200.) It leaves.
//   - "closed": the card no longer exists (404) or is finalized (409, X-Dados-Refusal:
//     closed) and the box holds another value. The write leaves, and the page names it.
//   - "conflict": another device changed the box first (409), or the server refused the
//     write for good (400, 422). The write stays, and waits for the organizer's choice
//     («Volver a anotar», «Descartar»), with the later writes on its cell.
//   - "login": the session ended (a log-out, a password changed elsewhere, a
//     deactivation): the server answers a write with 401 and X-Dados-Login, the log-in
//     page's address (a redirect to it, or HX-Redirect, counts the same). The write stays
//     until its user logs in again on this browser.
//   - "kept": anything else (403, 5xx, an answer without a version) and "offline" (no
//     answer within the time given): the write stays, and is sent again later.
// Sending stops at the first write that stays for any reason but a conflict: the later
// ones must not overtake it.
//
// A write: {id (the store's order), key (Idempotency-Key), user, card, url, body (the form,
// urlencoded), cell (its cell's id), value (what the box will hold), shown (what its cell
// shows meanwhile), said (the box and player, in words), version (an undo's: the card's
// version it was tapped on; null while the write before it, `after`, is on its way), after
// (an undo's: the key of the write it undoes, which must be taken first), conflict
// ("conflict" once refused so), now (the box's value the server said)}.

const NAME = "dados";
const WRITES = "outbox";
const LOCK = "dados-outbox";
// How long a write waits for its answer before it counts as sent without one.
export const WAIT = 5000;

let opened = null;

function open() {
  if (!opened) {
    opened = new Promise((resolve, reject) => {
      const request = globalThis.indexedDB.open(NAME, 1);
      request.onupgradeneeded = () => {
        const db = request.result;
        db.createObjectStore(WRITES, {keyPath: "id", autoIncrement: true}).createIndex("user", "user");
        db.createObjectStore("session");
        db.createObjectStore("sheets");
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => {
        opened = null;
        reject(request.error);
      };
    });
  }
  return opened;
}

// One transaction on a store: work(store) starts the requests, and the promise gives the
// last one's result once the transaction has committed.
async function run(name, mode, work) {
  const db = await open();
  return new Promise((resolve, reject) => {
    const tx = db.transaction(name, mode);
    const request = work(tx.objectStore(name));
    tx.oncomplete = () => resolve(request ? request.result : undefined);
    tx.onerror = tx.onabort = () => reject(tx.error);
  });
}

export const available = () => !!globalThis.indexedDB;

// A user's writes, oldest first; on one card if card is given.
export async function list(user, card) {
  const writes = await run(WRITES, "readonly", (store) => store.index("user").getAll(String(user)));
  writes.sort((a, b) => a.id - b.id);
  return card ? writes.filter((write) => write.card === String(card)) : writes;
}

// Stored, without what only the page holds while it is open (its promise of being stored,
// whether it is on its way or taken back).
function stored(write) {
  const {saved, sending, dropped, ...kept} = write;
  return kept;
}

export const add = (write) => run(WRITES, "readwrite", (store) => store.add(stored(write)));
export const put = (write) => run(WRITES, "readwrite", (store) => store.put(stored(write)));
export const remove = (id) => run(WRITES, "readwrite", (store) => store.delete(id));

// Who the browser's session belongs to and their CSRF token, as the last page said
// ({user: "0"}: logged out). The worker sends only that user's writes, with that token.
export async function session() {
  const kept = await run("session", "readonly", (store) => store.get("user"));
  // An older page stored the user alone.
  if (typeof kept === "string") return {user: kept, token: ""};
  return kept || {user: "0", token: ""};
}

export const setSession = (user, token) =>
  run("session", "readwrite", (store) => store.put({user: String(user || "0"), token: token || ""}, "user"));

// The newest sheet a card page showed, as the server sent it, to show on a reload
// without a network over the page kept (older: it is the one last loaded).
export const keepSheet = (card, user, version, html) =>
  run("sheets", "readwrite", (store) => store.put({user: String(user), version: Number(version), html}, String(card)));

export const keptSheet = (card) => run("sheets", "readonly", (store) => store.get(String(card)));

// Logged out: the pages shown are forgotten; the writes stay, to be sent when their user
// logs in again.
export const forget = () =>
  Promise.all([setSession("0", ""), run("sheets", "readwrite", (store) => store.clear())]);

// A random UUID, also where crypto.randomUUID is missing (plain HTTP on a club's Wi-Fi is
// not a secure context).
export function uuid() {
  const crypto = globalThis.crypto;
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => (b + 256).toString(16).slice(1)).join("");
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join("-");
}

// One write sent, with the page's version (an undo's own, if it has one) and the current
// CSRF token: the server's answer {status, text, headers, redirected}, or null when there
// is none (no network, or none within `wait`).
export async function send(write, {version = "", token = "", wait = WAIT} = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), wait);
  const sent = write.version === undefined || write.version === null ? version : write.version;
  try {
    const response = await fetch(write.url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "HX-Request": "true",
        "HX-Target": "sheet",
        "X-CSRFToken": token,
        "Idempotency-Key": write.key,
      },
      body: write.body + (write.body ? "&" : "") + "version=" + encodeURIComponent(sent ?? ""),
      signal: controller.signal,
    });
    const text = await response.text();
    return {status: response.status, text, headers: response.headers, redirected: response.redirected};
  } catch (error) {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

// What an answer means for its write (the protocol above): {kind, now, login, reason}.
export function verdict(write, answer) {
  if (!answer) return {kind: "offline"};
  const {status, headers} = answer;
  const header = (name) => headers.get(name);
  if (status === 401 || answer.redirected || header("HX-Redirect")) {
    return {kind: "login", login: header("X-Dados-Login") || header("HX-Redirect") || ""};
  }
  if (status >= 200 && status < 300) {
    const versioned = header("X-Dados-Version") !== null || header("X-Dados-Base") !== null;
    return {kind: versioned ? "taken" : "kept"};
  }
  if (status === 409) {
    const now = header("X-Dados-Now");
    if (header("X-Dados-Refusal") !== "closed") return {kind: "conflict", now};
    // Finalized since: a box that already holds the value was this write, its answer lost.
    const there = now !== null && write.value !== undefined && now === String(write.value ?? "");
    return {kind: there ? "taken" : "closed", now};
  }
  if (status === 404) return {kind: "closed"};
  if (status === 400 || status === 422) return {kind: "conflict"};
  return {kind: "kept", reason: status === 403 ? header("X-Dados-Refusal") || "forbidden" : "failed"};
}

// The verdicts that end a drain: the writes after the one answered so must wait.
const STOPS = new Set(["offline", "login", "kept"]);

// The first write to send: not one waiting for the organizer's choice, nor a later one on
// the same cell.
export function nextToSend(writes) {
  const waiting = new Set();
  for (const write of writes) {
    // An undo of a write on its way waits for that write's answer, which gives its version.
    if (write.kind === "undo" && !write.version) continue;
    if (write.conflict || waiting.has(write.cell)) {
      if (write.cell) waiting.add(write.cell);
      continue;
    }
    return write;
  }
  return null;
}

// Whoever sends holds this lock: the page and the service worker never send at once.
function exclusively(work) {
  const locks = globalThis.navigator && globalThis.navigator.locks;
  return locks ? locks.request(LOCK, work) : work();
}

// Sends the writes in order until none is left or one must wait (STOPS), and says why it
// stopped ({kind: "done"} when it sent everything it could).
//   writes(): the writes to send, oldest first (the page's: those it holds, some perhaps
//             not stored yet, each with `saved`, the promise of its storing; the worker's:
//             the store's);
//   version(), token(): what to send with the next write;
//   answered(write, verdict, answer): for the page to show, before the store settles it
//             (removed, or kept with its conflict);
//   sent:     {write, answer}, a write the page sent at its tap, before the lock was its
//             own (a lock is granted only after the page's next frame: 50-90 ms on a slow
//             phone), and the promise of its answer: taken as that write's send. The page
//             sends so only the one write it holds, with no drain of its own under way.
export function drain({writes, version = () => "", token = () => "", answered = () => {}, sent = null}) {
  return exclusively(async () => {
    for (;;) {
      const write = nextToSend(await writes());
      if (!write) return {kind: "done"};
      const all = await writes();
      const early = sent && sent.write === write ? sent.answer : null;
      sent = null;
      const answer = await (early || send(write, {version: await version(write), token: await token()}));
      const said = verdict(write, answer);
      if (said.kind === "conflict") Object.assign(write, {conflict: "conflict", now: said.now});
      const undos = all.filter((undo) => undo.kind === "undo" && undo.after === write.key && !undo.version);
      // The page shows the answer first; the store follows (a write kept by mistake is only
      // sent again, and taken once).
      await answered(write, said, answer);
      await settle(write, said, answer, undos).catch(() => {});
      if (STOPS.has(said.kind)) return said;
    }
  });
}

async function settle(write, said, answer, undos) {
  // An undo of this write: of the version its answer brought, or, the write not taken, a
  // conflict for the organizer to settle.
  for (const undo of undos) {
    if (said.kind === "taken") {
      undo.version = answer.headers.get("X-Dados-To") || answer.headers.get("X-Dados-Version");
    } else if (said.kind === "conflict" || said.kind === "closed") {
      undo.conflict = "conflict";
    } else {
      continue;
    }
    if (undo.saved) undo.id = await undo.saved.catch(() => undefined);
    if (undo.id !== undefined) await put(undo);
  }
  if (write.saved) write.id = await write.saved.catch(() => undefined);
  if (write.id === undefined) return;
  if (said.kind === "taken" || said.kind === "closed") {
    await remove(write.id);
  } else if (said.kind === "conflict") {
    await put(write);
  }
}
