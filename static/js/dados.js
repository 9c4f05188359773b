// Dados: the little the pages need beyond htmx, as modules with no build step. No inline
// script anywhere (CSP). Each module keeps its own state and starts its own listeners:
//   live.js     the card following its versions (stream, poll), scrolled where it was
//   versions.js which answer about the card applies, and the writes' gate
//   unsent.js   the organizer's writes kept in the outbox (outbox.js, shared with sw.js)
//   picker.js   a box's picker, opened from the page
//   turn.js     a turn said to screen readers; a digital turn on its player's phone
//   page.js     filters, «Copiar», the service worker, log-out and network questions
// (seating.js, the players tapped in their seating order, is order.html's alone.)
//   messages.js the page's one message about the network and the server
//   session.js  its CSRF token; no page from before a log-out shown again by the
//               back/forward cache
import "./session.js";
import {start as startLive} from "./live.js";
import {start as startPage} from "./page.js";
import {start as startPicker} from "./picker.js";
import {start as startTurn} from "./turn.js";
import {sessionEnded, start as startUnsent} from "./unsent.js";

// Module scripts run once the document is parsed, as defer did.
startLive({login: sessionEnded});
startUnsent();
startPicker();
startTurn();
startPage();
