// Dados's outbox: the organizer's writes on a physical card, kept in the browser
// (IndexedDB) from the tap until the server has them, in order, per user and card. The
// card page (dados.js) and the service worker (sw.js, for Background Sync) both read it
// and send from it, one sender at a time (a Web Lock); each write carries its own
// idempotency key, so a write sent twice (its answer lost) is taken once.
//
// A write: {id (the order), key (Idempotency-Key), user, card, url, body (the form,
// urlencoded), token (the page's CSRF token), cell (its cell's id), shown (what the cell
// shows meanwhile), said (the box and player, in words), conflict (true when another
// device changed the box first: it waits for the organizer's choice)}.
(function (scope) {
  "use strict";
  var NAME = "dados";
  var STORE = "outbox";
  var opened = null;

  function open() {
    if (!opened) {
      opened = new Promise(function (resolve, reject) {
        var request = scope.indexedDB.open(NAME, 1);
        request.onupgradeneeded = function () {
          var store = request.result.createObjectStore(STORE, {keyPath: "id", autoIncrement: true});
          store.createIndex("user", "user");
          request.result.createObjectStore("session");
          request.result.createObjectStore("sheets");
        };
        request.onsuccess = function () { resolve(request.result); };
        request.onerror = function () { opened = null; reject(request.error); };
      });
    }
    return opened;
  }

  // One transaction on a store: work(store) starts the requests, and the promise gives
  // the last one's result once the transaction has committed.
  function run(store, mode, work) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction(store, mode);
        var request = work(tx.objectStore(store));
        tx.oncomplete = function () { resolve(request ? request.result : undefined); };
        tx.onerror = tx.onabort = function () { reject(tx.error); };
      });
    });
  }

  // A user's writes, oldest first; on one card if card is given.
  function list(user, card) {
    return run(STORE, "readonly", function (store) {
      return store.index("user").getAll(String(user));
    }).then(function (writes) {
      writes.sort(function (a, b) { return a.id - b.id; });
      return card ? writes.filter(function (w) { return w.card === String(card); }) : writes;
    });
  }

  function add(write) {
    return run(STORE, "readwrite", function (store) { return store.add(write); });
  }

  function put(write) {
    return run(STORE, "readwrite", function (store) { return store.put(write); });
  }

  function remove(id) {
    return run(STORE, "readwrite", function (store) { return store.delete(id); });
  }

  // Who the browser's session belongs to, as the last page said (0: logged out): the
  // service worker sends only that user's writes.
  function sessionUser() {
    return run("session", "readonly", function (store) { return store.get("user"); })
      .then(function (user) { return user || "0"; });
  }

  function setSessionUser(user) {
    return run("session", "readwrite", function (store) { return store.put(String(user), "user"); });
  }

  // The newest sheet a card page showed, as the server sent it, to show on a reload
  // without a network over the page kept (older: it is the one last loaded).
  function keepSheet(card, user, version, html) {
    return run("sheets", "readwrite", function (store) {
      return store.put({user: String(user), version: Number(version), html: html}, String(card));
    });
  }

  function keptSheet(card) {
    return run("sheets", "readonly", function (store) { return store.get(String(card)); });
  }

  // Logged out: the pages shown are forgotten; the writes stay, to be sent when their
  // user logs in again.
  function forget() {
    return Promise.all([
      setSessionUser("0"),
      run("sheets", "readwrite", function (store) { return store.clear(); })
    ]);
  }

  // A random UUID, also where crypto.randomUUID is missing (plain HTTP on a club's
  // Wi-Fi is not a secure context).
  function uuid() {
    if (scope.crypto.randomUUID) return scope.crypto.randomUUID();
    var bytes = scope.crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    var hex = Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
    return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join("-");
  }

  // One write sent: the server's answer {status, text, headers}, or a rejection when
  // there is none (no network, or none within the time given).
  function send(write, version, wait) {
    var controller = new AbortController();
    var timer = setTimeout(function () { controller.abort(); }, wait || 5000);
    var body = write.body + "&version=" + encodeURIComponent(version || "");
    return fetch(write.url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "HX-Request": "true",
        "HX-Target": "sheet",
        "X-CSRFToken": write.token,
        "Idempotency-Key": write.key
      },
      body: body,
      signal: controller.signal
    }).then(function (response) {
      return response.text().then(function (text) {
        clearTimeout(timer);
        return {status: response.status, text: text, headers: response.headers};
      });
    }, function (error) {
      clearTimeout(timer);
      throw error;
    });
  }

  // Whoever sends holds this lock: the page and the service worker never send at once.
  function exclusively(work) {
    if (scope.navigator.locks) return scope.navigator.locks.request("dados-outbox", work);
    return work();
  }

  scope.DadosOutbox = {
    list: list, add: add, put: put, remove: remove, send: send, uuid: uuid,
    exclusively: exclusively, sessionUser: sessionUser, setSessionUser: setSessionUser,
    keepSheet: keepSheet, keptSheet: keptSheet, forget: forget,
    available: !!scope.indexedDB
  };
})(self);
