/**
 * The status page (GET /admin/status): one static HTML document, no framework. Its script reads
 * /admin/status.json (same origin: the browser resends the admin credentials it was asked for) every
 * 5 seconds and fills the tables with textContent only, so nothing a worker reports becomes markup.
 * Below the pool, the console (console/: tenants, keys, usage and cost charts, and the changes an
 * operator makes there; docs/operations/console.md).
 */
import { CHART_SCRIPT } from "./console/chart-script.ts";
import { CONSOLE_HTML, CONSOLE_STYLE } from "./console/console-html.ts";
import { CONSOLE_SCRIPT } from "./console/console-script.ts";

export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Frontier status</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2330; background: #f7f8fa; }
  h1 { font-size: 1.4rem; margin: 0 0 .2rem; } h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
  table { border-collapse: collapse; background: #fff; min-width: 40rem; }
  th, td { border: 1px solid #d8dce3; padding: .3rem .6rem; text-align: left; white-space: nowrap; }
  th { background: #eef1f5; font-weight: 600; }
  .state-up { color: #0a7a33; font-weight: 600; } .state-down { color: #b3261e; font-weight: 600; }
  .state-draining, .state-drained { color: #a15c00; font-weight: 600; }
  .tiles { display: flex; gap: 1rem; flex-wrap: wrap; }
  .tile { background: #fff; border: 1px solid #d8dce3; padding: .6rem 1rem; min-width: 9rem; }
  .tile b { display: block; font-size: 1.3rem; }
  #error { color: #b3261e; }
  .muted { color: #6b7280; }
${CONSOLE_STYLE}</style>
</head>
<body>
<h1>Frontier status</h1>
<div class="muted">updated <span id="updated">never</span> <span id="error"></span></div>

<div class="tiles">
  <div class="tile">resident sessions<b id="sessions-resident">–</b></div>
  <div class="tile">parked sessions<b id="sessions-parked">–</b></div>
  <div class="tile">prompt tokens reused<b id="hit-rate">–</b></div>
  <div class="tile">turns<b id="turns">–</b></div>
  <div class="tile">checkpoints<b id="checkpoints">–</b></div>
</div>

<h2>Pools and workers</h2>
<table id="workers"><thead><tr>
  <th>region</th><th>worker</th><th>state</th><th>ready</th><th>model</th><th>sequences free / total</th>
  <th>active</th><th>queued</th><th>resident</th><th>parked</th><th>checkpoints</th><th>checkpoint bytes</th>
  <th>heartbeat</th><th>build</th>
</tr></thead><tbody></tbody></table>

<h2>Cache decisions</h2>
<table id="decisions"><thead><tr><th>decision</th><th>turns</th></tr></thead><tbody></tbody></table>

<h2>Latest misses</h2>
<table id="misses"><thead><tr>
  <th>when</th><th>protocol</th><th>session</th><th>decision</th><th>miss reason</th><th>cached / prompt</th>
</tr></thead><tbody></tbody></table>

<h2>Usage today (UTC)</h2>
<table id="usage"><thead><tr>
  <th>tenant</th><th>turns</th><th>input tokens</th><th>cached tokens</th><th>output tokens</th>
</tr></thead><tbody></tbody></table>
${CONSOLE_HTML}
<script>
"use strict";
const $ = (id) => document.getElementById(id);
function row(table, cells) {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = document.createElement("td");
    if (cell && typeof cell === "object" && cell.node) td.appendChild(cell.node);
    else if (cell && typeof cell === "object") { td.textContent = cell.text; td.className = cell.className; }
    else td.textContent = cell === null || cell === undefined ? "–" : String(cell);
    tr.appendChild(td);
  }
  $(table).tBodies[0].appendChild(tr);
}
function clear(table) { $(table).tBodies[0].replaceChildren(); }
function bytes(n) {
  const units = ["B", "KB", "MB", "GB", "TB"]; let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}
function render(s) {
  $("sessions-resident").textContent = s.sessions.resident;
  $("sessions-parked").textContent = s.sessions.parked;
  $("hit-rate").textContent = s.cache.hitRate === null ? "–" : (100 * s.cache.hitRate).toFixed(1) + "%";
  $("turns").textContent = s.cache.turns;
  $("checkpoints").textContent = s.checkpoints.count + " (" + bytes(s.checkpoints.bytes) + ")";
  clear("workers");
  for (const pool of s.pools) for (const w of pool.workers) {
    const self = w.self.reachable ? w.self : null;
    row("workers", [
      pool.region + (pool.home ? " (home)" : ""), w.id, { text: w.state, className: "state-" + w.state },
      self ? (self.ready ? "yes" : "no") : w.self.error, self ? self.model : w.modelIdentity.slice(0, 16),
      self ? self.sequencesFree + " / " + self.sequencesTotal : w.sequencesFree + " / " + w.sequencesTotal, self ? self.activeRequests : w.activeRequests,
      self ? self.queuedRequests : w.queueDepth, self ? self.liveSessions : w.residentSessions,
      self ? self.parkedSessions : null, self ? self.checkpoints : null, self ? bytes(self.checkpointBytes) : null,
      w.heartbeatAgeMs === null ? (w.static ? "static" : "–") : (w.heartbeatAgeMs / 1000).toFixed(1) + " s ago",
      self ? self.build : null,
    ]);
  }
  clear("decisions");
  for (const [decision, turns] of Object.entries(s.cache.decisions)) row("decisions", [decision, turns]);
  clear("misses");
  for (const t of s.cache.latestMisses) {
    row("misses", [new Date(t.at).toLocaleTimeString(), t.protocol, t.session, t.decision, t.miss, t.cached + " / " + t.prompt]);
  }
  clear("usage");
  for (const u of s.usageToday) row("usage", [u.tenant, u.turns, u.inputTokens, u.cachedTokens, u.outputTokens]);
  $("updated").textContent = new Date(s.generatedAt).toLocaleTimeString();
  document.body.dataset.loaded = "true";
}
${CHART_SCRIPT}${CONSOLE_SCRIPT}
/** Each refresh renders only if no later one started (a slow answer never overwrites a newer one). */
let refreshSeq = 0;
async function refresh() {
  const seq = ++refreshSeq;
  try {
    const response = await fetch("status.json", { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) throw new Error("status.json answered " + response.status);
    const status = await response.json();
    if (seq !== refreshSeq) return;
    render(status);
    $("error").textContent = "";
    await refreshConsole(status, seq);
  } catch (error) {
    if (seq === refreshSeq) $("error").textContent = String(error);
  }
}
refresh();
setInterval(refresh, 5000);
</script>
</body>
</html>
`;
