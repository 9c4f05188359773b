// Dados: the little the pages need beyond htmx. No inline script anywhere (CSP).
(function () {
  "use strict";
  var opener = null;
  var fromPicker = false;
  var userSwap = false;

  function dialog() { return document.getElementById("picker-dialog"); }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail.elt;
    if (!source || source.classList.contains("poll")) return;
    if (source.getAttribute("hx-target") === "#picker" && !source.closest("#picker")) {
      opener = source;
    }
    fromPicker = !!source.closest("#picker-dialog");
    userSwap = source.getAttribute("hx-target") === "#sheet";
    hideError();
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    var d = dialog();
    if (!d) return;
    if (target.id === "picker") {
      if (!d.open) d.showModal();
      var first = target.querySelector("[aria-pressed='true'], button, a");
      if (first) first.focus();
    }
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.target;
    // A live poll refreshes the card under an open picker; only the picker's own
    // answer closes it.
    if (!target || target.id !== "sheet" || !userSwap) return;
    userSwap = false;
    var d = dialog();
    if (fromPicker && d && d.open) d.close();
    // A refused write says why at the top of the card: bring it into view.
    var alert = document.querySelector("#sheet-alert > .alert-error");
    if (alert) {
      alert.setAttribute("tabindex", "-1");
      alert.focus();
      alert.scrollIntoView({block: "center"});
    }
  });

  document.addEventListener("close", function (event) {
    if (event.target.id !== "picker-dialog") return;
    document.getElementById("picker").innerHTML = "";
    if (opener && document.body.contains(opener)) opener.focus();
    opener = null;
  }, true);

  document.addEventListener("click", function (event) {
    var link = event.target.closest(".close-picker");
    var d = dialog();
    if (link && d && d.open) {
      event.preventDefault();
      d.close();
    }
  });

  function showError(text) {
    var box = document.getElementById("net-error");
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
  }
  function hideError() {
    var box = document.getElementById("net-error");
    if (box) box.hidden = true;
  }

  document.addEventListener("htmx:sendError", function (event) {
    var poll = event.detail.elt && event.detail.elt.classList.contains("poll");
    showError(poll
      ? "Sin conexión: la tarjeta puede no estar al día."
      : "Sin conexión: no se ha guardado nada. Comprueba la red y vuelve a intentarlo.");
  });
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    showError(status === 403 || status === 404
      ? "No tienes permiso para cambiar esta tarjeta."
      : "El servidor no ha guardado el cambio (error " + status + "). Vuelve a intentarlo.");
  });

  document.addEventListener("input", function (event) {
    var input = event.target;
    var selector = input.getAttribute && input.getAttribute("data-filter");
    if (!selector) return;
    var needle = input.value.trim().toLocaleLowerCase("es");
    document.querySelectorAll(selector + " li").forEach(function (item) {
      var checked = item.querySelector("input:checked");
      item.hidden = !!needle && !checked && item.textContent.toLocaleLowerCase("es").indexOf(needle) === -1;
    });
  });
})();
