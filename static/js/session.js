// The session's CSRF token, as the page gives it to htmx (base.html's hx-headers), for the
// requests sent without htmx (the outbox's).
export function token() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
  } catch (error) {
    return "";
  }
}

// Whose pages these are, for the browser's back/forward cache: a page kept there from
// before a log-out (or a log-in as someone else) is not shown again, but asked for anew,
// which sends a logged-out visitor to the log-in page. Every page says its user
// (<meta name="dados-user">, "0" logged out), the app's and the admin's alike, and the
// newest one says it for the browser (localStorage).
const KEY = "dados-user";

function me() {
  const meta = document.querySelector("meta[name=dados-user]");
  return meta ? meta.getAttribute("content") || "0" : "0";
}

function remember() {
  try {
    localStorage.setItem(KEY, me());
  } catch (error) {
    // No storage (a private window's quota): the pages are not kept either.
  }
}

function stale() {
  try {
    const newest = localStorage.getItem(KEY);
    return newest !== null && newest !== me();
  } catch (error) {
    return false;
  }
}

remember();
window.addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  if (stale()) {
    document.documentElement.hidden = true;
    window.location.reload();
  } else {
    remember();
  }
});
