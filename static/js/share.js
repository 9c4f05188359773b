// «Compartir»'s own module (card.html loads it on a finished game, for its players and
// organizer; no other page needs it, so it is not one of dados.js's). The button names the
// link's field, as «Copiar» does (page.js copies it): where the browser has the Web Share
// API (a phone), the phone's share sheet gets the link instead.
function share(event) {
  const button = event.target.closest && event.target.closest("button[data-share]");
  const field = button && document.getElementById(button.getAttribute("data-copy"));
  if (!field || typeof navigator.share !== "function") return;
  const data = {title: button.getAttribute("data-share"), url: field.value};
  if (navigator.canShare && !navigator.canShare(data)) return;
  // Before page.js's «Copiar», which this click does not reach.
  event.stopImmediatePropagation();
  navigator.share(data).catch(() => {});
}

document.addEventListener("click", share, true);
