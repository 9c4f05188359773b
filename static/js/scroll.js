// The sheet's table where its viewer left it: a live refresh replaces the whole sheet, and
// a player looking at their own column, right of the first ones, stays on it.
let scrolled = null;
function keepScroll(event) {
  const target = event.detail.target;
  if (!target || target.id !== "sheet") return;
  const table = target.querySelector(".sheet-scroll");
  scrolled = table ? {table, left: table.scrollLeft} : null;
}
function restoreScroll() {
  if (scrolled === null) return;
  const table = document.querySelector("#sheet .sheet-scroll");
  // Only when the table was replaced (a write's answer patches cells in place).
  if (table && !scrolled.table.isConnected) table.scrollLeft = scrolled.left;
  scrolled = null;
}

export function start() {
  document.addEventListener("htmx:beforeSwap", keepScroll);
  document.addEventListener("htmx:afterSwap", restoreScroll);
}
