// The outbox's protocol (static/js/outbox.js), on its own: for every kind of answer, whether
// a write is kept, taken or shown. The page and the service worker send with the same code
// (drain), so this is both senders' test. IndexedDB is fake-indexeddb's; the server is a
// fake fetch that answers as Dados does.
import "fake-indexeddb/auto";
import assert from "node:assert/strict";
import {beforeEach, describe, test} from "node:test";

import {add, drain, list, nextToSend, put, remove, send, session, setSession, verdict} from "../../static/js/outbox.js";

const USER = "7";

function write(fields = {}) {
  return {
    key: crypto.randomUUID(), user: USER, card: "1", url: "/tarjetas/1/casilla/3/threes/",
    body: "was=&value=15", cell: "c3-threes", value: "15", shown: "15", said: "Treses — Ana",
    ...fields,
  };
}

// An answer as fetch gives it.
function answer(status, headers = {}, {redirected = false, text = ""} = {}) {
  return {status, text, redirected, headers: new Headers(headers)};
}

// The server: each request answered by the next of `answers` (null: no network).
function server(answers) {
  const asked = [];
  globalThis.fetch = async (url, init) => {
    asked.push({url, init});
    const next = answers.shift();
    if (next === null || next === undefined) throw new TypeError("Failed to fetch");
    return new Response(next.text, {status: next.status, headers: next.headers});
  };
  return asked;
}

beforeEach(async () => {
  for (const kept of await list(USER)) await remove(kept.id);
});

describe("verdict: what each answer means for its write", () => {
  const cases = [
    ["taken: a patch on the page's version", answer(200, {"X-Dados-Base": "4", "X-Dados-To": "5"}), "taken"],
    ["taken: a whole sheet", answer(200, {"X-Dados-Version": "5"}), "taken"],
    ["replayed: its key already taken", answer(200, {"X-Dados-Version": "9", "X-Dados-Replayed": "1"}), "taken"],
    ["409, another value", answer(409, {"X-Dados-Version": "9", "X-Dados-Now": "9"}), "conflict"],
    // In play, a write whose value is there is answered 200: this 409 is another refusal.
    ["409 in play, the value there (a joker's order)", answer(409, {"X-Dados-Now": "15"}), "conflict"],
    ["409, finalized with another value", answer(409, {"X-Dados-Refusal": "closed", "X-Dados-Now": ""}), "closed"],
    ["409, finalized with this value", answer(409, {"X-Dados-Refusal": "closed", "X-Dados-Now": "15"}), "taken"],
    ["401: the session ended", answer(401, {"X-Dados-Login": "/entrar/?next=/tarjetas/1/"}), "login"],
    ["a redirect to log in (HX-Redirect)", answer(200, {"HX-Redirect": "/entrar/?next=/"}), "login"],
    ["a log-in page, redirected to", answer(200, {}, {redirected: true}), "login"],
    ["200 without a version: not the card's answer", answer(200, {}), "kept"],
    ["403: the token expired", answer(403, {"X-Dados-Refusal": "expired"}), "kept"],
    ["404: the card is gone", answer(404), "closed"],
    ["400: refused for good", answer(400, {"X-Dados-Version": "9"}), "conflict"],
    ["422: its key made another write", answer(422, {"X-Dados-Version": "9"}), "conflict"],
    ["500", answer(500), "kept"],
    ["502 from a proxy", answer(502), "kept"],
    ["no answer (no network, or a timeout)", null, "offline"],
  ];
  for (const [name, given, kind] of cases) {
    test(name, () => assert.equal(verdict(write(), given).kind, kind));
  }

  test("a 401 says where to log in", () => {
    const said = verdict(write(), answer(401, {"X-Dados-Login": "/entrar/?next=/tarjetas/1/"}));
    assert.equal(said.login, "/entrar/?next=/tarjetas/1/");
  });

  test("a conflict says what the box holds now", () => {
    assert.equal(verdict(write(), answer(409, {"X-Dados-Now": "9"})).now, "9");
  });

  test("a 403 says why", () => {
    assert.equal(verdict(write(), answer(403, {"X-Dados-Refusal": "expired"})).reason, "expired");
    assert.equal(verdict(write(), answer(403)).reason, "forbidden");
  });
});

describe("drain: which writes leave the store", () => {
  async function keep(...writes) {
    for (const kept of writes) kept.id = await add(kept);
    return writes;
  }

  const drainStored = (options = {}) => drain({writes: () => list(USER), token: () => "token", ...options});

  test("taken writes leave, in order, each sent once with its key and the current token", async () => {
    const [first, second] = await keep(write(), write({cell: "c3-fours", body: "was=&value=8"}));
    const asked = server([answer(200, {"X-Dados-Version": "1"}), answer(200, {"X-Dados-Version": "2"})]);
    assert.equal((await drainStored()).kind, "done");
    assert.deepEqual(asked.map((a) => a.init.headers["Idempotency-Key"]), [first.key, second.key]);
    assert.deepEqual(asked.map((a) => a.init.headers["X-CSRFToken"]), ["token", "token"]);
    assert.deepEqual(await list(USER), []);
  });

  for (const [name, kept, kind] of [
    ["a 401 keeps it and the later ones", answer(401, {"X-Dados-Login": "/entrar/"}), "login"],
    ["a log-in redirect keeps it", answer(200, {"HX-Redirect": "/entrar/"}), "login"],
    ["a 403 keeps it", answer(403), "kept"],
    ["a 500 keeps it", answer(500), "kept"],
    ["no network keeps it", null, "offline"],
  ]) {
    test(name, async () => {
      await keep(write(), write({cell: "c3-fours"}));
      const asked = server([kept]);
      assert.equal((await drainStored()).kind, kind);
      assert.equal(asked.length, 1, "the later write waits for the first");
      assert.equal((await list(USER)).length, 2);
    });
  }

  test("a conflict stays, waiting for the organizer, and so do the later writes on its cell; the others go", async () => {
    const [mine, again, other] = await keep(write(), write({value: "9", shown: "9"}), write({cell: "c3-fours"}));
    const asked = server([answer(409, {"X-Dados-Now": "6"}), answer(200, {"X-Dados-Version": "3"})]);
    assert.equal((await drainStored()).kind, "done");
    assert.deepEqual(asked.map((a) => a.init.headers["Idempotency-Key"]), [mine.key, other.key]);
    const left = await list(USER);
    assert.deepEqual(left.map((w) => w.key), [mine.key, again.key]);
    assert.equal(left[0].conflict, "conflict");
    assert.equal(left[0].now, "6");
    assert.equal(nextToSend(left), null);
  });

  test("a finalized card takes nothing more: each write leaves, said by the page", async () => {
    await keep(write(), write({cell: "c3-fours"}));
    const shown = [];
    server([answer(409, {"X-Dados-Refusal": "closed", "X-Dados-Now": ""}),
      answer(409, {"X-Dados-Refusal": "closed", "X-Dados-Now": ""})]);
    await drainStored({answered: (w, said) => shown.push(said.kind)});
    assert.deepEqual(shown, ["closed", "closed"]);
    assert.deepEqual(await list(USER), []);
  });

  test("a write not stored yet is sent at once, and leaves the store once its storing is done", async () => {
    const fresh = write();
    fresh.saved = add(fresh);
    server([answer(200, {"X-Dados-Version": "1"})]);
    await drain({writes: () => [fresh]});
    assert.deepEqual(await list(USER), []);
  });

  test("a write sent at its tap is not sent again: its answer is the drain's, and the next one follows it", async () => {
    const [tapped, next] = [write(), write({cell: "c3-fours", body: "was=&value=8"})];
    tapped.saved = add(tapped);
    next.saved = add(next);
    const asked = server([answer(200, {"X-Dados-Version": "1"}), answer(200, {"X-Dados-Version": "2"})]);
    const sent = {write: tapped, answer: send(tapped, {version: "0", token: "token"})};
    const shown = [];
    await drain({writes: () => [tapped, next].filter((w) => !shown.includes(w)), sent,
      answered: (w) => shown.push(w)});
    assert.deepEqual(asked.map((a) => a.init.headers["Idempotency-Key"]), [tapped.key, next.key]);
    assert.deepEqual(shown, [tapped, next]);
    assert.deepEqual(await list(USER), []);
  });

  test("an undo is sent with the version it was tapped on, a box with the page's", async () => {
    await keep(write({kind: "undo", url: "/tarjetas/1/deshacer/", body: "", cell: null, version: "4"}), write());
    const asked = server([answer(200, {"X-Dados-Version": "5"}), answer(200, {"X-Dados-Version": "6"})]);
    await drainStored({version: () => "5"});
    assert.deepEqual(asked.map((a) => a.init.body), ["version=4", "was=&value=15&version=5"]);
  });

  test("an undo behind a write on its way waits for it, and undoes the version it made", async () => {
    const [box, undo] = await keep(write(), write({kind: "undo", url: "/tarjetas/1/deshacer/", body: "",
      cell: null, value: undefined, version: null}));
    undo.after = box.key;
    await put(undo);
    assert.equal(nextToSend([undo]), null, "no undo without its version");
    const asked = server([answer(200, {"X-Dados-Base": "4", "X-Dados-To": "5"}), answer(200, {"X-Dados-Version": "6"})]);
    await drainStored({version: () => "4"});
    assert.deepEqual(asked.map((a) => a.init.body), ["was=&value=15&version=4", "version=5"]);
    assert.deepEqual(await list(USER), []);
  });

  test("an undo behind a write refused is not sent: the organizer decides", async () => {
    const [box, undo] = await keep(write(), write({kind: "undo", url: "/tarjetas/1/deshacer/", body: "",
      cell: null, value: undefined, version: null}));
    undo.after = box.key;
    await put(undo);
    const asked = server([answer(409, {"X-Dados-Now": "9"})]);
    await drainStored({version: () => "4"});
    assert.equal(asked.length, 1);
    const left = await list(USER);
    assert.deepEqual(left.map((w) => w.conflict), ["conflict", "conflict"]);
  });

  test("another user's writes are not this user's to send", async () => {
    await keep(write({user: "8"}));
    const asked = server([]);
    assert.equal((await drainStored()).kind, "done");
    assert.equal(asked.length, 0);
    assert.equal((await list("8")).length, 1);
  });
});

test("the session says whose writes the worker sends, and with which token", async () => {
  await setSession("7", "abc");
  assert.deepEqual(await session(), {user: "7", token: "abc"});
});
