// Dados's service worker (scorecards/views/offline.py renders it, from the site's root).
//   - The files every page loads are kept from the install on, by their hashed names;
//     a deploy that changes one installs a new worker, which deletes the old ones.
//   - A card page is asked of the network first; with no answer within a few seconds,
//     the copy kept from the last time it was seen is shown; a page never seen, the
//     offline page. Nothing else is kept: not the admin, not an answer to a POST, not
//     a page marked no-store. Logging out or in forgets every page kept.
//   - Background Sync: the organizer's writes kept in the outbox (outbox.js) are sent
//     when the network is back, even with the card's page closed, but only the writes
//     of whoever the browser's session belongs to, with the CSRF token of their newest
//     page, by the same code as the page's (drain).
// A module worker (the page registers it with type "module"), which imports the outbox.
import {drain, forget, list, session} from "{{ outbox|escapejs }}";

var STATIC = "dados-static-{{ version }}";
var PAGES = "dados-pages";
var PRECACHED = {{ precached|safe }};
var OFFLINE = "{{ offline|escapejs }}";
var CARD = new RegExp("{{ card|escapejs }}");
var FORGET = {{ forget|safe }};
var ADMIN = "{{ admin|escapejs }}";
// How long a card page waits for the network before the copy kept is shown.
var WAIT = 3000;

self.addEventListener("install", function (event) {
  // What a page asks with fetch, XHR or EventSource (the writes, the polls, the stream)
  // goes straight to the network, not through this worker: it would only add its start
  // to every tap (Chromium's static routing; elsewhere the fetch handler lets them by).
  if (event.addRoutes) {
    // (Not the page's modules, which are fetched in cors mode too, as scripts.)
    event.waitUntil(event.addRoutes([{condition: {requestMode: "cors", requestDestination: ""}, source: "network"}])
      .catch(function () {}));
  }
  event.waitUntil(
    caches.open(STATIC)
      .then(function (cache) { return cache.addAll(PRECACHED.concat([OFFLINE])); })
      .then(function () { return self.skipWaiting(); })
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(
    caches.keys().then(function (names) {
      return Promise.all(names.filter(function (name) {
        return name.indexOf("dados-static-") === 0 && name !== STATIC;
      }).map(function (name) { return caches.delete(name); }));
    }).then(function () { return self.clients.claim(); })
  );
});

self.addEventListener("fetch", function (event) {
  var request = event.request;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method !== "GET") {
    if (request.method === "POST" && FORGET.indexOf(url.pathname) !== -1) {
      event.respondWith(forgetting(request));
    }
    return;
  }
  if (PRECACHED.indexOf(url.pathname) !== -1) {
    event.respondWith(caches.match(request, {cacheName: STATIC}).then(function (kept) {
      return kept || fetch(request);
    }));
  } else if (request.mode === "navigate" && CARD.test(url.pathname)) {
    event.respondWith(cardPage(event, url.origin + url.pathname));
  } else if (request.mode === "navigate" && url.pathname.indexOf(ADMIN) !== 0) {
    event.respondWith(fetch(request).catch(offlinePage));
  }
});

function keepable(response) {
  return response.ok && response.type === "basic" && !response.redirected &&
    !/no-store/.test(response.headers.get("Cache-Control") || "");
}

function cardPage(event, key) {
  var network = fetch(event.request).then(function (response) {
    if (keepable(response)) {
      var copy = response.clone();
      event.waitUntil(caches.open(PAGES).then(function (cache) { return cache.put(key, copy); }));
    }
    return response;
  });
  function kept() {
    return caches.open(PAGES).then(function (cache) { return cache.match(key); });
  }
  var late = new Promise(function (resolve) { setTimeout(resolve, WAIT, "late"); });
  return Promise.race([network, late]).then(function (first) {
    if (first !== "late") return first;
    // Slow: the copy kept, or else wait on for the network.
    return kept().then(function (copy) { return copy || network; });
  }).catch(function () {
    return kept().then(function (copy) { return copy || offlinePage(); });
  });
}

function offlinePage() {
  return caches.match(OFFLINE, {cacheName: STATIC}).then(function (page) {
    return page || Response.error();
  });
}

// Logging out (or in, as someone else) forgets the pages kept: they were that user's.
function forgetting(request) {
  return fetch(request).then(function (response) {
    return Promise.all([caches.delete(PAGES), forget()])
      .then(function () { return response; }, function () { return response; });
  });
}

self.addEventListener("sync", function (event) {
  if (event.tag === "dados-outbox") event.waitUntil(sendKept());
});

// The session's user's writes, in order (drain, outbox.js, says which leave and which
// wait). One sent without an answer, or kept by the server, ends the sync in error, for
// the browser to try again later; a session that ended waits for its user's log-in.
async function sendKept() {
  const {user, token} = await session();
  if (user === "0") return;
  const said = await drain({writes: () => list(user), token: () => token});
  new BroadcastChannel("dados-outbox").postMessage("sent");
  if (said.kind === "offline" || said.kind === "kept") throw new Error(said.kind);
}
