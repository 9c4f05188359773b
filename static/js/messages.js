// The page's one message about the network and the server (#net-error, base.html): its
// words are in the page's data-*, in the person's language. One message at a time; a
// sticky one (a roll that did not go through) stays until the same action is tried again.

let sticky = "";

function box() {
  return document.getElementById("net-error");
}

// Says `kind`'s words (with the status, for "failed"). A message about the card's
// freshness ("offline-poll") only says so: the organizer may be typing a box, whose picker
// must stay open under their thumb; the others close the picker and take the focus.
export function showError(kind, {status = "", keep = false} = {}) {
  const shown = box();
  if (!shown) return;
  if (sticky && kind === "offline-poll") return;
  sticky = keep ? kind : "";
  shown.textContent = (shown.getAttribute("data-" + kind) || "").replace("%(status)s", status);
  shown.hidden = false;
  shown.dataset.kind = kind;
  if (kind === "offline-poll") return;
  const dialog = document.getElementById("picker-dialog");
  if (dialog && dialog.open) dialog.close();
  shown.focus();
  shown.scrollIntoView({block: "center"});
}

// Hides the message; `kind` only that one (the network is back: «Sin conexión» goes, a
// refusal stays); `force` a sticky one too (its action tried again).
export function hideError({kind = "", force = false} = {}) {
  const shown = box();
  if (!shown || shown.hidden) return;
  if (kind && shown.dataset.kind !== kind) return;
  if (sticky && !force) return;
  sticky = "";
  shown.hidden = true;
}
