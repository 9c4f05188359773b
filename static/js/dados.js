// Dados: the little the pages need beyond htmx. No inline script anywhere (CSP).
(function () {
  "use strict";
  var opener = null;

  function dialog() { return document.getElementById("picker-dialog"); }

  // Writes on their way: while there is one, the page does not poll, so a live refresh
  // never lands between a write and its answer. Of them, those htmx sent from a form
  // (not the outbox's, which need no form): that form must stay in the page.
  var writing = 0;
  var formWrites = 0;

  function startWrite() { writing += 1; }

  function endWrite() {
    writing = Math.max(0, writing - 1);
    if (writing === 0 && missed) {
      var version = missed;
      missed = 0;
      // After the answer has been swapped in, so the poll sends the version it made.
      setTimeout(function () { askWhatMoved(version); }, 0);
    }
  }

  function isPoll(elt) { return !!(elt && elt.classList && elt.classList.contains("poll")); }

  // The live card, pushed (scorecards/live.py): htmx's SSE extension opens the card's
  // stream (sse-connect, around the sheet). While it is open, the stream brings each
  // change's patch, and the poll asks only when the stream says the card moved without
  // one; where it cannot open or keeps dropping (three times in a minute), it is closed
  // for good and the poll asks every few seconds, as before.
  var stream = null;  // {holder, source}: the element with sse-connect, its EventSource
  var streaming = false;
  var drops = [];
  // The newest version the card moved to while a write was on its way (0: none; Infinity:
  // one not said): asked for after the write's answer, unless that answer brought it.
  var missed = 0;

  // A version heard from the stream, as a number; Infinity if it says none (ask anyway).
  function heard(version) {
    var number = Number(version);
    return version && number === number ? number : Infinity;
  }

  function shownVersion() {
    var shown = document.getElementById("sheet-version");
    return shown ? shown.value : null;
  }

  function askWhatMoved(version) {
    var wanted = heard(version);
    if (wanted <= Number(shownVersion())) return;  // there already
    var poll = document.getElementById("sheet-poll");
    if (poll) htmx.trigger(poll, "card-moved", {version: wanted});
  }

  // A patch from the stream, as a poll's answer would bring it: swapped in out of band
  // if the page shows the version it was made from or a later one (its own write's
  // answer, say), dropped if the page is there already; asked for again after a write
  // on its way, which must land first, or if the page is behind it.
  function applyPatch(message) {
    var patch = JSON.parse(message.data);
    var version = Number(message.lastEventId);
    var shown = Number(shownVersion());
    if (shown >= version) return;
    if (writing > 0) {
      missed = Math.max(missed, heard(message.lastEventId));
    } else if (shown < patch.base) {
      askWhatMoved();
    } else {
      var sheet = document.getElementById("sheet");
      // Its swap and settle events say #sheet, as a poll's answer's do.
      htmx.swap(sheet, patch.html, {swapStyle: "none"}, {eventInfo: {target: sheet}});
    }
  }

  function closeStream() {
    if (stream) {
      stream.holder.removeAttribute("sse-connect");  // so the extension does not reopen it
      stream.source.close();
    }
    stream = null;
    streaming = false;
  }

  document.addEventListener("htmx:sseOpen", function (event) {
    var source = event.detail.source;
    stream = {holder: event.target, source: source};
    streaming = true;
    if (source.dadosFollows) return;  // the browser reconnected it: its listeners stay
    source.dadosFollows = true;
    source.addEventListener("patch", applyPatch);
    source.addEventListener("version", function (message) { askWhatMoved(message.data); });
    // Finalized or discarded: one last look says which, and nothing more will come.
    source.addEventListener("end", function () { closeStream(); askWhatMoved(); });
    // Open for a long while with no request from its viewer: the poll takes over until
    // they show they are there again, and the stream opens anew.
    source.addEventListener("idle", function () {
      resting = {holder: stream.holder, url: stream.holder.getAttribute("sse-connect")};
      closeStream();
    });
    // The session that opened it has ended (a log-out, a deactivation, a password changed
    // elsewhere): to log in, as a poll's answer would send the page (HX-Redirect).
    source.addEventListener("login", function (message) {
      closeStream();
      window.location.assign(message.data);
    });
  });
  // A stream that ended idle, to open again (from the version the page shows) once its
  // viewer looks at the page or touches it.
  var resting = null;  // {holder, url}
  function reopenStream() {
    if (!resting || document.visibilityState !== "visible") return;
    var holder = resting.holder;
    holder.setAttribute("sse-connect", resting.url.split("?")[0] + "?version=" + shownVersion());
    resting = null;
    htmx.process(holder);
  }
  document.addEventListener("visibilitychange", reopenStream);
  document.addEventListener("pointerdown", reopenStream);
  document.addEventListener("keydown", reopenStream);

  document.addEventListener("htmx:sseError", function (event) {
    var source = event.detail.source;
    stream = {holder: event.target, source: source};
    streaming = false;
    var now = Date.now();
    drops = drops.filter(function (at) { return now - at < 60000; });
    drops.push(now);
    // CLOSED: refused (not a stream: 204, 4xx); else the browser reconnects, saying the
    // last version it heard (Last-Event-ID), unless it has dropped too often.
    if (source.readyState === EventSource.CLOSED || drops.length >= 3) closeStream();
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var config = event.detail.requestConfig;
    var source = config ? config.elt : null;
    if (isPoll(source)) {
      var pushed = config.triggeringEvent && config.triggeringEvent.type === "card-moved";
      if (writing > 0) {
        if (pushed) missed = Math.max(missed, heard((config.triggeringEvent.detail || {}).version));
        event.preventDefault();
      } else if (streaming && !pushed) {
        event.preventDefault();
      }
      return;
    }
    if (!source) return;
    var toPicker = source.getAttribute("hx-target") === "#picker";
    // The write's form stays in the page until its answer has been handled: an answer
    // to a form no longer in the page would be lost, and with it the page's updates.
    if (toPicker && formWrites > 0) {
      event.preventDefault();
      return;
    }
    if (toPicker && !source.closest("#picker")) opener = source;
    if (config.verb === "post") {
      startWrite();
      formWrites += 1;
      // loadend: answered, failed, timed out or aborted alike.
      event.detail.xhr.addEventListener("loadend", function () {
        formWrites = Math.max(0, formWrites - 1);
        endWrite();
      });
    }
    hideError();
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    var d = dialog();
    if (!d) return;
    if (target.id === "picker") {
      if (!d.open) d.showModal();
      var config = event.detail.requestConfig;
      var next = pickerFocus(target, config && config.elt);
      if (next) next.focus();
    }
  });

  // The organizer's tap on a box opens its picker from the page, with no request: the card
  // page carries every box's offer (picker-values: rules.py's values), and the cell its
  // value, what the server says of its bonus line and joker, and its links. «Con dados»
  // and the joker's order still ask the server. Without JavaScript, the link is the
  // picker's own page.
  document.addEventListener("click", function (event) {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    var link = event.target.closest("#sheet a.cell[href]");
    if (link && openPicker(link)) event.preventDefault();
  });

  function openPicker(link) {
    var template = document.getElementById("picker-template");
    var offers = document.getElementById("picker-values");
    var cell = link.closest("td");
    var row = link.closest("tr");
    var d = dialog();
    if (!template || !offers || !cell || !row || !d) return false;
    // A write htmx sent from the picker, still on its way, must find its form in the page.
    if (formWrites > 0) return true;
    var box = row.id.replace(/^row-/, "");
    // Read once: what the boxes offer never changes while the page is open.
    if (!offers.parsed) offers.parsed = JSON.parse(offers.textContent);
    var offer = offers.parsed[box];
    if (!offer) return false;
    var heading = document.querySelectorAll("#row-players th")[cell.cellIndex];
    var name = heading ? heading.getAttribute("title") : "";
    var url = link.getAttribute("href");
    var current = link.getAttribute("data-value") || "";
    var content = template.content.cloneNode(true);
    function part(name) { return content.querySelector("[data-fill='" + name + "']"); }
    part("label").textContent = offer.label;
    part("name").textContent = name;
    var now = part("now");
    now.textContent = current === "" ? now.getAttribute("data-blank") :
      now.getAttribute("data-current").replace("{value}", current);
    var form = content.querySelector("form");
    form.setAttribute("action", url);
    form.setAttribute("hx-post", url);
    form.querySelector("[name=was]").value = current;
    // For the outbox: the cell that shows the write until the server has it.
    form.setAttribute("data-cell", cell.id);
    form.setAttribute("data-said", offer.label + " — " + name);
    var refused = link.hasAttribute("data-refused");
    if (refused) {
      part("refused").querySelector("bdi").textContent = name;
    } else {
      part("refused").remove();
    }
    var values = content.querySelector(".values");
    offer.values.forEach(function (pair) {
      var button = document.createElement("button");
      button.type = "submit";
      button.name = "value";
      button.value = String(pair[0]);
      button.textContent = String(pair[0]);
      if (pair[1]) {
        var points = document.createElement("small");
        points.textContent = pair[1];
        button.append(" ", points);
        button.setAttribute("data-shown", pair[1]);
        values.classList.add("bonuses");
      }
      if (button.value === current) button.setAttribute("aria-pressed", "true");
      // No 50 in Yahtzee (the server says so): the bonus line may only go down.
      if (refused && pair[0] > Number(current)) button.disabled = true;
      values.appendChild(button);
    });
    var scratch = content.querySelector(".scratch");
    if (!offer.scratch) {
      scratch.remove();
      content.querySelector("#picker-scratch-hint").remove();
    } else if (current === "0") {
      scratch.setAttribute("aria-pressed", "true");
    }
    if (current === "") content.querySelector(".clear").setAttribute("aria-pressed", "true");
    var joker = link.getAttribute("data-joker");
    var offered = content.querySelector(".joker-offer");
    if (joker) {
      offered.querySelector("a").setAttribute("href", joker);
      offered.querySelector("a").setAttribute("hx-get", joker);
    } else {
      offered.remove();
    }
    if (offer.dice) {
      content.querySelectorAll(".with-dice .face").forEach(function (face) {
        var asked = url + "?dados=" + face.getAttribute("data-face");
        face.setAttribute("href", asked);
        face.setAttribute("hx-get", asked);
      });
    } else {
      content.querySelector(".with-dice").remove();
    }
    content.querySelector(".close-picker").setAttribute("href", window.location.pathname);
    var picker = document.getElementById("picker");
    picker.replaceChildren(content);
    htmx.process(picker);
    opener = link;
    if (!d.open) d.showModal();
    var next = pickerFocus(picker, null);
    if (next) next.focus();
    return true;
  }

  // Where focus goes in the picker: while the dice are being tapped, the score they make
  // or the faces; otherwise the box's score if it has one, else the title (never «Sin
  // anotar», which would look like the suggested answer).
  function pickerFocus(picker, source) {
    var tapping = source && source.closest && source.closest(".with-dice");
    var next = tapping ? picker.querySelector(".proposal button, .with-dice .face") : null;
    return next ||
      picker.querySelector(".values [aria-pressed='true'], .values-extra .scratch[aria-pressed='true']") ||
      picker.querySelector("#picker-title[tabindex]") ||
      picker.querySelector("button, a");
  }

  // Every answer about the card says which version it is for: a patch the version it
  // was made from (X-Dados-Base), a whole sheet its own (X-Dados-Version). An answer the
  // page has already moved past (a live refresh or another answer got there first)
  // would put an older state back: drop it. (beforeOnLoad rather than beforeSwap: it
  // fires on the element that asked, still in the page.)
  document.addEventListener("htmx:beforeOnLoad", function (event) {
    var xhr = event.detail.xhr;
    if (!xhr) return;
    var shown = document.getElementById("sheet-version");
    if (!shown) return;
    var base = xhr.getResponseHeader("X-Dados-Base");
    var version = xhr.getResponseHeader("X-Dados-Version");
    var stale = (base !== null && shown.value !== base) ||
      (version !== null && isPoll(event.detail.elt) && Number(version) < Number(shown.value));
    if (!stale) return;
    event.preventDefault();
    closePickerAfter(event.detail.elt);
  });

  // A write from the picker has been answered: close it (a refusal shows its message at
  // the top of the card, which must not stay behind the dialog).
  document.addEventListener("htmx:afterOnLoad", function (event) {
    closePickerAfter(event.detail.elt);
    var target = event.detail.target;
    if (!target || target.id !== "sheet" || isPoll(event.detail.elt)) return;
    var alert = document.querySelector("#sheet-alert > .alert-error");
    if (alert) {
      alert.setAttribute("tabindex", "-1");
      alert.focus();
      alert.scrollIntoView({block: "center"});
    }
  });

  function closePickerAfter(elt) {
    var d = dialog();
    if (elt && elt.tagName === "FORM" && elt.closest("#picker-dialog") && d && d.open) d.close();
  }

  document.addEventListener("close", function (event) {
    if (event.target.id !== "picker-dialog") return;
    // The picker's content stays (hidden) until the next one replaces it: a write still
    // on its way must find its form in the page for its answer to be handled.
    if (opener && document.body.contains(opener)) opener.focus();
    opener = null;
  }, true);

  // A digital turn swapped in: the new dice are said once in #turn-status (outside the
  // swapped parts, so screen readers hear it), and after one's own roll or box, focus goes
  // back into the turn when the button pressed is gone (the third roll, «Anotar»).
  var announced = null;
  var acted = 0;  // when one's own turn request was answered
  // The turn said to its own player («te toca a ti») or to the others: whose it is, the
  // sheet says (data-turn, the same for everyone); who is looking, the page (data-me).
  function announcement(turn) {
    var page = document.querySelector(".card-page[data-me]");
    var mine = page && turn.getAttribute("data-turn") === page.getAttribute("data-me");
    return turn.getAttribute(mine ? "data-announce-mine" : "data-announce") || "";
  }
  document.addEventListener("DOMContentLoaded", function () {
    var turn = document.getElementById("turn");
    announced = turn ? announcement(turn) : "";
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail.elt;
    // A die held is no move of the turn: the focus stays on the die.
    if (source && source.closest && source.closest("#turn") && source.id !== "hold") {
      event.detail.xhr.addEventListener("loadend", function () { acted = Date.now(); });
    }
  });
  document.addEventListener("htmx:afterSettle", function () {
    var turn = document.getElementById("turn");
    var status = document.getElementById("turn-status");
    // The turn said anew (a roll, the turn passing on), or, once it is gone, the result.
    var result = document.querySelector("#sheet .result");
    var text = turn ? announcement(turn) : result ? result.textContent : "";
    if (status && text && text !== announced) status.textContent = text;
    announced = text;
    // Every part of a patch settles on its own: the one after the turn's swap decides.
    if (!acted || Date.now() - acted > 2000) return;
    var focused = document.activeElement;
    if (focused && focused !== document.body && document.body.contains(focused)) return;
    acted = 0;
    // In this order of preference (querySelector alone would take the first in the page).
    var next = null;
    ["#roll-button", "#turn .score-form input[type=radio]", "#turn-title", ".result"].some(
      function (selector) { next = document.querySelector(selector); return next !== null; }
    );
    if (next) {
      if (!next.hasAttribute("tabindex") && next.tagName === "P") next.setAttribute("tabindex", "-1");
      next.focus();
    }
  });

  // A die of a digital turn: tapping holds it or releases it. Its pressed state, its
  // name and the kept position the roll sends (the hidden input after it) go together,
  // at once; then the dice held are sent (#hold), for the other phones to see, queued
  // with «Tirar» (card.html says why). Only the taps change these dice until the next
  // roll: a hold's answer moves the page's version and leaves them alone, and the
  // stream's patches wait while a hold is on its way (writing).
  document.addEventListener("click", function (event) {
    var die = event.target.closest("button.die[aria-pressed]");
    if (!die || die.disabled) return;
    var held = die.getAttribute("aria-pressed") !== "true";
    die.setAttribute("aria-pressed", held ? "true" : "false");
    die.setAttribute("aria-label", die.getAttribute(held ? "data-held" : "data-free"));
    var kept = die.nextElementSibling;
    if (kept && kept.name === "guardar") kept.disabled = !held;
    var hold = document.getElementById("hold");
    if (hold) htmx.trigger(hold, "dice-held");
  });

  document.addEventListener("click", function (event) {
    var link = event.target.closest(".close-picker");
    var d = dialog();
    if (link && d && d.open) {
      event.preventDefault();
      d.close();
    }
  });

  // The messages are in the page (#net-error's data-*), in the person's language.
  function showError(kind, status) {
    var box = document.getElementById("net-error");
    if (!box) return;
    box.textContent = (box.getAttribute("data-" + kind) || "").replace("%(status)s", status);
    box.hidden = false;
    // A poll that found no network only says so: the organizer may be typing a box
    // (kept in the outbox), whose picker must stay open under their thumb.
    if (kind === "offline-poll") return;
    // A write refused from the box's dialog: close it, or the message stays behind it.
    var d = dialog();
    if (d && d.open) d.close();
    box.focus();
    box.scrollIntoView({block: "center"});
  }
  function hideError() {
    var box = document.getElementById("net-error");
    if (box) box.hidden = true;
  }

  document.addEventListener("htmx:sendError", function (event) {
    showError(isPoll(event.detail.elt) ? "offline-poll" : "offline");
  });
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var status = xhr ? xhr.status : 0;
    if (status === 404) {
      // The card is gone (discarded): stop asking for it every few seconds.
      var poll = document.getElementById("sheet-poll");
      if (poll) poll.remove();
      closeStream();
      showError("gone");
    } else if (status === 403) {
      showError(xhr.getResponseHeader("X-Dados-Refusal") === "expired" ? "expired" : "forbidden");
    } else {
      showError("failed", status);
    }
  });

  // A live refresh replaces the whole sheet: keep the table scrolled where it was (a
  // player looking at their own column, right of the first ones).
  var scrolled = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "sheet") return;
    var table = target.querySelector(".sheet-scroll");
    scrolled = table ? {table: table, left: table.scrollLeft} : null;
  });
  document.addEventListener("htmx:afterSwap", function () {
    if (scrolled === null) return;
    var table = document.querySelector("#sheet .sheet-scroll");
    // Only when the table was replaced (a write's answer patches cells in place).
    if (table && !scrolled.table.isConnected) table.scrollLeft = scrolled.left;
    scrolled = null;
  });

  document.addEventListener("input", function (event) {
    var input = event.target;
    var selector = input.getAttribute && input.getAttribute("data-filter");
    if (!selector) return;
    var needle = fold(input.value.trim());
    var shown = 0;
    document.querySelectorAll(selector + " li").forEach(function (item) {
      var checked = item.querySelector("input:checked");
      item.hidden = !!needle && !checked && fold(item.textContent).indexOf(needle) === -1;
      if (!item.hidden) shown += 1;
    });
    var empty = document.querySelector(input.getAttribute("data-filter-empty"));
    if (empty) empty.hidden = shown > 0;
  });

  // «Copiar»: the field it names, to the clipboard. Only with JavaScript is there a button;
  // over plain HTTP (a club's Wi-Fi) there is no Clipboard API, and the selected text is
  // copied the old way.
  function showCopyButtons() {
    document.querySelectorAll("button[data-copy][hidden]").forEach(function (button) {
      button.hidden = false;
    });
  }
  document.addEventListener("DOMContentLoaded", showCopyButtons);
  document.addEventListener("htmx:afterSettle", showCopyButtons);
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (!button) return;
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    field.select();
    function copied() { button.textContent = button.getAttribute("data-copied"); }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(copied, function () {});
    } else if (document.execCommand("copy")) {
      copied();
    }
  });

  // The service worker (templates/offline/sw.js): keeps the card pages seen and the
  // files they need, for a reload without a network. Only in a secure context (HTTPS,
  // or this machine): over a club's plain-HTTP Wi-Fi, the outbox works without it.
  document.addEventListener("DOMContentLoaded", function () {
    var worker = document.body.getAttribute("data-worker");
    if (worker && "serviceWorker" in navigator) {
      navigator.serviceWorker.register(worker).catch(function () {});
    }
    if (outbox) {
      // Who the browser's session belongs to, for the worker to send only their writes.
      outbox.setSessionUser(document.body.getAttribute("data-user") || "0").catch(function () {});
    }
  });

  // The organizer's writes on a physical card (a box, the bonus line, an extra Yahtzee)
  // go through the outbox (static/js/outbox.js): the tap shows in its cell at once,
  // marked as not sent yet, and the write is kept in the browser until the server has
  // it, sent in order now or when the network is back, each with its own idempotency
  // key (taken once however often it is sent). The sums, the bonus and the positions are
  // the server's: they wait for its answer. Without IndexedDB, the form is sent as
  // before, by htmx.
  var outbox = window.DadosOutbox && window.DadosOutbox.available ? window.DadosOutbox : null;
  var unsent = [];        // this card's writes kept, oldest first (the outbox's, as painted)
  var sending = null;     // the write on its way
  var unreachable = false;  // the last send had no answer: offline, whatever onLine says
  var flushing = false;
  var flushAgain = false;
  // «Deshacer» pressed while the newest write was on its way: undone once it is answered.
  var undoWhenAnswered = false;
  var undoOnServer = false;  // that undo, let through to htmx
  var dropped = {};  // the keys of the writes «Deshacer» took back before they were sent

  // The card whose writes this page keeps: {user, card}, or null.
  function outboxCard() {
    var page = document.querySelector(".card-page[data-outbox]");
    if (!outbox || !page) return null;
    return {user: page.getAttribute("data-me"), card: page.getAttribute("data-outbox")};
  }

  function token() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
    } catch (error) {
      return "";
    }
  }

  function offline() { return !navigator.onLine || unreachable; }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var here = outboxCard();
    if (!here || !form.hasAttribute || !form.hasAttribute("data-outbox")) return;
    // Before htmx (listening on the form) sends it.
    event.preventDefault();
    event.stopPropagation();
    keep(form, event.submitter, here);
  }, true);

  function keep(form, button, here) {
    var data = new FormData(form);
    if (button && button.name) data.append(button.name, button.value);
    data.delete("csrfmiddlewaretoken");
    data.delete("version");
    var source = button && button.hasAttribute("data-cell") ? button : form;
    var value = button ? button.value : "";
    var write = {
      key: outbox.uuid(),
      user: here.user,
      card: here.card,
      url: form.getAttribute("action"),
      body: new URLSearchParams(data).toString(),
      token: token(),
      cell: source.getAttribute("data-cell"),
      said: source.getAttribute("data-said") || "",
      shown: (button && button.getAttribute("data-shown")) || value,
      at: Date.now()
    };
    var d = dialog();
    if (d && d.open) d.close();
    // Shown first, kept right after: the tap never waits.
    unsent.push(write);
    paintUnsent();
    outbox.add(write).then(function (id) {
      write.id = id;
      // Taken back by «Deshacer» before the outbox had stored it.
      if (dropped[write.key]) return outbox.remove(id);
      flush();
    }, function () {
      // No room in the browser: as before, straight to the server.
      unsent.splice(unsent.indexOf(write), 1);
      paintUnsent();
      htmx.ajax("POST", write.url, {source: form, values: Object.fromEntries(data), target: "#sheet", swap: "outerHTML"});
    });
  }

  // The cells of the writes kept show what was typed, marked; the rest of the sheet is
  // the server's. A cell keeps what the server sent in a <template> inside it, so that
  // it can be put back, and so that the sheet kept for a reload is the server's.
  function paintUnsent() {
    var here = outboxCard();
    var sheet = document.getElementById("sheet");
    var box = document.getElementById("outbox");
    if (!here || !sheet || !box) return;
    // Only the cells whose write changed are touched: a tap costs one cell.
    var last = {};
    unsent.forEach(function (write) { if (!write.conflict) last[write.cell] = write; });
    document.querySelectorAll("#sheet td[data-unsent]").forEach(function (cell) {
      var write = last[cell.id];
      if (!write || cell.getAttribute("data-unsent") !== write.key) unpaint(cell);
    });
    Object.keys(last).forEach(function (id) {
      var cell = document.getElementById(id);
      if (cell && !cell.hasAttribute("data-unsent")) paint(cell, last[id], box);
    });
    var waiting = unsent.filter(function (write) { return !write.conflict; }).length;
    sheet.classList.toggle("totals-unsent", waiting > 0);
    var status = "";
    if (waiting) {
      var kind = offline() ? "offline" : "sending";
      status = box.getAttribute("data-" + kind + (waiting === 1 ? "-one" : "-many")).replace(/\d+/, waiting);
    }
    var said = box.querySelector("#outbox-status");
    if (said.textContent !== status) said.textContent = status;
    var totals = box.querySelector(".outbox-totals");
    var note = waiting ? box.getAttribute("data-totals") : "";
    if (totals.textContent !== note) totals.textContent = note;
    // «Deshacer» takes back a write kept, even on a card the server has nothing of yet.
    var undo = document.getElementById("undo-button");
    if (undo) {
      if (!undo.hasAttribute("data-server")) undo.setAttribute("data-server", undo.disabled ? "disabled" : "");
      undo.disabled = !waiting && undo.getAttribute("data-server") === "disabled";
    }
    paintConflicts(box);
    box.hidden = !unsent.length;
  }

  function paint(cell, write, box) {
    if (!cell) return;
    var was = document.createElement("template");
    was.className = "unsent-was";
    was.innerHTML = cell.innerHTML;
    var link = cell.querySelector("a.cell");
    if (!link) return;
    var shown = write.shown === "" ? "·" : write.shown;
    var label = link.getAttribute("aria-label") || "";
    link.textContent = shown;
    link.classList.add("unsent");
    link.classList.remove("blank", "scratched");
    link.setAttribute("data-value", write.shown);
    link.setAttribute("aria-label", label.replace(/:[^:]*$/, ": " +
      (write.shown === "" ? box.getAttribute("data-blank") : write.shown) + ", " + box.getAttribute("data-unsent")));
    cell.setAttribute("data-unsent", write.key);
    cell.appendChild(was);
  }

  function unpaint(cell) {
    var was = cell.querySelector("template.unsent-was");
    cell.removeAttribute("data-unsent");
    if (was) cell.innerHTML = was.innerHTML;
  }

  // A write another device got to first: both values said, and the organizer's choice.
  function paintConflicts(box) {
    var list = box.querySelector(".outbox-conflicts");
    var template = box.querySelector("#outbox-conflict");
    var shown = unsent.filter(function (write) { return write.conflict; }).map(function (write) {
      var link = document.querySelector("#" + write.cell + " a.cell");
      return write.key + "=" + (link ? link.getAttribute("data-value") : "");
    }).join(" ");
    if (list.getAttribute("data-shown") === shown) return;
    list.setAttribute("data-shown", shown);
    list.replaceChildren();
    unsent.forEach(function (write) {
      if (!write.conflict) return;
      var item = template.content.firstElementChild.cloneNode(true);
      var link = document.querySelector("#" + write.cell + " a.cell");
      var server = link ? link.getAttribute("data-value") : "";
      item.querySelector("span").textContent = box.getAttribute("data-conflict")
        .replace("{said}", write.said)
        .replace("{server}", server === "" ? box.getAttribute("data-blank") : server)
        .replace("{mine}", write.shown === "" ? box.getAttribute("data-blank") : write.shown);
      item.querySelector(".again").addEventListener("click", function () { again(write); });
      item.querySelector(".drop").addEventListener("click", function () { drop(write); });
      list.appendChild(item);
    });
  }

  // «Volver a anotar»: the same value, over what the server has now, as a new write.
  function again(write) {
    var link = document.querySelector("#" + write.cell + " a.cell");
    var params = new URLSearchParams(write.body);
    if (params.has("was")) params.set("was", link ? link.getAttribute("data-value") : "");
    var next = Object.assign({}, write, {key: outbox.uuid(), body: params.toString(), conflict: false});
    outbox.put(next).then(refreshUnsent).then(flush);
  }

  function drop(write) {
    outbox.remove(write.id).then(refreshUnsent);
  }

  // The writes kept, and those tapped that the outbox has not stored yet (no id); not
  // those «Deshacer» took back.
  function withTapped(writes) {
    return writes.concat(unsent.filter(function (write) { return write.id === undefined; }))
      .filter(function (write) { return !dropped[write.key]; });
  }

  function refreshUnsent() {
    var here = outboxCard();
    if (!here) return Promise.resolve();
    return outbox.list(here.user, here.card).then(function (writes) {
      unsent = withTapped(writes);
      paintUnsent();
    }, function () {});
  }

  // Sent in order, one at a time, by one sender (the page or the service worker). A
  // conflict waits for the organizer's choice, and the later writes on its box with it;
  // the others go on.
  function flush() {
    var here = outboxCard();
    if (!here) return;
    if (flushing) {
      flushAgain = true;
      return;
    }
    flushing = true;
    outbox.exclusively(function () { return sendNext(here); }).catch(function () {}).then(function () {
      flushing = false;
      refreshUnsent();
      if (flushAgain) {
        flushAgain = false;
        flush();
      }
    });
  }

  function sendNext(here) {
    return outbox.list(here.user, here.card).then(function (writes) {
      writes = writes.filter(function (write) { return !dropped[write.key]; });
      unsent = withTapped(writes);
      var waiting = {};
      var next = null;
      writes.some(function (write) {
        if (write.conflict || waiting[write.cell]) {
          waiting[write.cell] = true;
          return false;
        }
        next = write;
        return true;
      });
      paintUnsent();
      if (!next) return null;
      return sendOne(next).then(function (goOn) { return goOn ? sendNext(here) : null; });
    });
  }

  function sendOne(write) {
    sending = write;
    startWrite();
    var mine = Object.assign({}, write, {token: token()});
    return outbox.send(mine, shownVersion()).then(function (answer) {
      // An answer: whatever was said of the network is over. (Not before it: without a
      // network, «Sin conexión…» stays put instead of blinking, and the card under the
      // organizer's thumb with it, at every tap.)
      unreachable = false;
      hideError();
      var status = answer.status;
      if (status === 403) {
        // The page's token expired (or the card is no longer this organizer's): kept.
        showError(answer.headers.get("X-Dados-Refusal") === "expired" ? "expired" : "forbidden");
        return false;
      }
      if (status >= 500) {
        showError("failed", status);
        return false;
      }
      if (status === 409 && write.cell) {
        applyAnswer(answer);
        // The box already holds what was typed (this write taken, its answer lost, and the
        // card finalized since, say): nothing is lost.
        var link = document.querySelector("#" + write.cell + " a.cell");
        if (link && link.getAttribute("data-value") === write.shown) {
          write.answered = true;
          return outbox.remove(write.id).then(function () { return true; });
        }
        write.conflict = true;
        return outbox.put(write).then(function () { return true; });
      }
      if (status === 404) {
        // The card is gone (discarded): what was kept for it goes too.
        return Promise.all(unsent.map(function (w) { return outbox.remove(w.id); })).then(function () {
          showError("gone");
          return false;
        });
      }
      // Taken (200), or refused for good (400, 422): the server's answer says which. Its
      // cell shows the server's value from this swap on.
      write.answered = true;
      var index = unsent.indexOf(write);
      if (index !== -1) unsent.splice(index, 1);
      applyAnswer(answer);
      return outbox.remove(write.id).then(function () { return true; });
    }, function () {
      unreachable = true;
      if (navigator.serviceWorker && navigator.serviceWorker.ready) {
        navigator.serviceWorker.ready.then(function (registration) {
          if (registration.sync) return registration.sync.register("dados-outbox");
          return null;
        }).catch(function () {});
      }
      return false;
    }).then(function (goOn) {
      sending = null;
      endWrite();
      if (undoWhenAnswered) {
        undoWhenAnswered = false;
        var undo = document.getElementById("undo-form");
        // Answered: undone on the server, from the version the answer brought. Still
        // kept (no answer): taken back here, as any write kept. A conflict is the
        // organizer's to settle.
        if (undo && write.answered) {
          undoOnServer = true;
          undo.requestSubmit();
        } else if (undo && !write.conflict) {
          undo.requestSubmit();
        }
      }
      return goOn;
    });
  }

  // A write's answer, as htmx would swap it: a patch (X-Dados-Base) onto the page that
  // shows its base; a whole sheet (X-Dados-Version) unless the page is past it.
  function applyAnswer(answer) {
    var sheet = document.getElementById("sheet");
    if (!sheet) return;
    var base = answer.headers.get("X-Dados-Base");
    var version = answer.headers.get("X-Dados-Version");
    if (base !== null) {
      if (shownVersion() === base) {
        htmx.swap(sheet, answer.text, {swapStyle: "none"}, {eventInfo: {target: sheet}});
      } else {
        missed = Infinity;
      }
    } else if (version !== null && Number(version) >= Number(shownVersion())) {
      htmx.swap(sheet, answer.text, {swapStyle: "outerHTML"}, {eventInfo: {target: sheet}});
    }
  }

  // After a swap (each part of a patch swaps and settles on its own: once for them all,
  // before the next frame): the kept writes painted again over what the server sent, and then the
  // sheet kept for a reload without a network.
  var repainting = false;
  function repaint() {
    if (repainting || !outboxCard()) return;
    repainting = true;
    requestAnimationFrame(function () {
      repainting = false;
      paintUnsent();
      setTimeout(keepSheet, 0);
    });
  }
  document.addEventListener("htmx:afterSwap", repaint);
  document.addEventListener("htmx:oobAfterSwap", repaint);
  document.addEventListener("htmx:afterSettle", repaint);

  function keepSheet() {
    var here = outboxCard();
    var sheet = document.getElementById("sheet");
    if (!here || !sheet) return;
    var copy = sheet.cloneNode(true);
    copy.querySelectorAll("td[data-unsent]").forEach(unpaint);
    copy.classList.remove("totals-unsent");
    outbox.keepSheet(here.card, here.user, shownVersion(), copy.outerHTML).catch(function () {});
  }

  document.addEventListener("DOMContentLoaded", function () {
    var here = outboxCard();
    if (!here) return;
    // A reload without a network shows the page last loaded: the newest sheet seen goes
    // over it, then the writes kept.
    outbox.keptSheet(here.card).then(function (kept) {
      var sheet = document.getElementById("sheet");
      if (kept && kept.user === here.user && sheet && kept.version > Number(shownVersion())) {
        htmx.swap(sheet, kept.html, {swapStyle: "outerHTML"}, {eventInfo: {target: sheet}});
      }
    }).catch(function () {}).then(refreshUnsent).then(flush);
  });
  window.addEventListener("online", function () { unreachable = false; flush(); });
  window.addEventListener("offline", paintUnsent);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") flush();
  });
  document.addEventListener("htmx:sseOpen", function () { unreachable = false; flush(); });
  // While writes wait with no answer, ask again now and then.
  setInterval(function () {
    if (unsent.length && unreachable && !flushing) flush();
  }, 10000);
  if (window.BroadcastChannel) {
    new BroadcastChannel("dados-outbox").addEventListener("message", refreshUnsent);
  }

  // «Deshacer» with writes kept takes the newest one out of the outbox: it was never
  // sent. The one on its way is undone on the server once it is answered: sent now, the
  // undo could get there first and undo the change before it.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id !== "undo-form" || !outboxCard()) return;
    if (undoOnServer) {
      undoOnServer = false;
      return;
    }
    var newest = unsent.filter(function (write) { return !write.conflict; }).pop();
    if (!newest) return;
    event.preventDefault();
    event.stopPropagation();
    if (newest === sending || (sending && newest.id === sending.id)) {
      undoWhenAnswered = true;
      return;
    }
    // Never sent from now on; not stored yet (its id comes when it is), it is removed as
    // soon as it is.
    dropped[newest.key] = true;
    var removed = newest.id === undefined ? Promise.resolve() : outbox.remove(newest.id);
    removed.then(function () {
      unsent = unsent.filter(function (write) { return write.key !== newest.key; });
      paintUnsent();
      var box = document.getElementById("outbox");
      var said = document.getElementById("undo-status");
      if (box && said) {
        said.textContent = box.getAttribute("data-removed").replace("{said}", newest.said)
          .replace("{mine}", newest.shown === "" ? box.getAttribute("data-blank") : newest.shown);
      }
    });
  }, true);

  // What needs the server (finalizing, discarding, a rematch, a digital turn's dice)
  // says so without a network, or while writes wait, instead of failing.
  function needsNetwork(event) {
    var control = event.target.closest && event.target.closest("[data-needs-network]");
    if (!control) return;
    if (event.type === "click" && control.tagName === "FORM") return;
    if (!offline() && !unsent.length) return;
    event.preventDefault();
    event.stopPropagation();
    showError("needs-network");
  }
  document.addEventListener("click", needsNetwork, true);
  document.addEventListener("submit", needsNetwork, true);

  // Logging out with writes still kept: they stay on this phone for their user, who is
  // asked first.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var user = document.body.getAttribute("data-user");
    if (form.id !== "logout-form" || !outbox || !user || form.dadosAsked) return;
    event.preventDefault();
    outbox.list(user).then(function (writes) { return writes.length; }, function () { return 0; })
      .then(function (kept) {
        if (kept && !window.confirm(form.getAttribute("data-unsent"))) return;
        form.dadosAsked = true;
        form.requestSubmit();
      });
  }, true);

  // Case and accents aside, as the server's search: «oscar» finds Óscar.
  function fold(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLocaleLowerCase("es");
  }
})();
