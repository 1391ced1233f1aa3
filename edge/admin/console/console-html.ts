/**
 * The console's part of the status page (docs/operations/console.md): usage and cost charts per day,
 * the tenants, the selected tenant's keys, and the forms that create a tenant, issue a key and revoke
 * one. Static markup; console-script.ts fills it. Changes are sent with the token typed into
 * `#admin-token` as a Bearer header (admin routes take no Basic credentials for a change), kept in
 * the page's memory only.
 */
export const CONSOLE_STYLE = `
  #console { width: max-content; min-width: 100%; }
  #console form { display: flex; gap: .5rem; flex-wrap: wrap; align-items: end; margin: .5rem 0; }
  #console label { display: flex; flex-direction: column; font-size: .8rem; color: #4b5563; }
  #console input, #console select { font: inherit; padding: .2rem .4rem; }
  #console input[type=number] { width: 7rem; }
  button { font: inherit; padding: .2rem .7rem; cursor: pointer; }
  .chart { background: #fff; border: 1px solid #d8dce3; padding: .4rem; width: 680px; }
  .chart svg { width: 680px; height: 190px; display: block; }
  .legend span { margin-right: 1rem; font-size: .8rem; } .legend i { display: inline-block; width: .8rem;
    height: .8rem; margin-right: .3rem; vertical-align: -1px; }
  .charts { display: flex; gap: 1rem; flex-wrap: wrap; }
  .status-active { color: #0a7a33; font-weight: 600; } .status-revoked, .status-archived { color: #b3261e; font-weight: 600; }
  .status-inactive, .status-expired { color: #a15c00; font-weight: 600; }
  tr.selected td { background: #eef4ff; }
  #new-secret { background: #fff8e1; border: 1px solid #e0b400; padding: .6rem 1rem; margin: .6rem 0; max-width: 60rem; }
  #new-secret code { display: block; font-size: 1rem; margin: .4rem 0; word-break: break-all; user-select: all; }
  #console-error { color: #b3261e; } #console-note { color: #0a7a33; }
`;

export const CONSOLE_HTML = `
<section id="console">
<h2>Console</h2>
<form id="token-form" autocomplete="off">
  <label>admin token or admin key (for changes; kept in this page only)
    <input id="admin-token" type="password" size="40" autocomplete="off" spellcheck="false"></label>
  <button id="refresh-now" type="button">refresh now</button>
  <span id="console-note"></span> <span id="console-error"></span>
</form>

<h2>Usage and cost per day (UTC, last 14 days)</h2>
<form id="chart-form"><label>tenant <select id="chart-tenant"><option value="">all tenants</option></select></label></form>
<div class="charts">
  <div class="chart"><b>tokens</b> <span class="legend" id="tokens-legend"></span><svg id="tokens-chart" role="img" aria-label="tokens per day"></svg></div>
  <div class="chart"><b>cost</b> <span class="muted" id="cost-currency"></span> <span class="legend" id="cost-legend"></span><svg id="cost-chart" role="img" aria-label="cost per day"></svg></div>
</div>

<h2>Tenants</h2>
<table id="tenants"><thead><tr>
  <th>id</th><th>name</th><th>status</th><th>source</th><th>created</th><th>turns (14 days)</th><th>cost (14 days)</th><th></th>
</tr></thead><tbody></tbody></table>
<form id="create-tenant">
  <label>id (optional) <input name="id" placeholder="acme"></label>
  <label>name <input name="name" required placeholder="Acme Inc."></label>
  <button type="submit">create tenant</button>
</form>

<h2>Keys of <span id="keys-tenant">(select a tenant)</span></h2>
<div class="muted" id="tenant-policy"></div>
<div id="new-secret" hidden>
  <b>New key <span id="new-secret-name"></span>: copy it now, it is not shown again.</b>
  <code id="new-secret-value"></code>
  <button id="new-secret-done" type="button">I have copied it</button>
</div>
<table id="keys"><thead><tr>
  <th>name</th><th>id</th><th>key</th><th>status</th><th>created</th><th>last used</th><th>expires</th>
  <th>limits</th><th>budget</th><th>models</th><th>turns</th><th>tokens in / out</th><th>cost</th><th></th>
</tr></thead><tbody></tbody></table>
<form id="issue-key">
  <label>name <input name="name" required placeholder="ci"></label>
  <label>requests / min <input name="requests_per_minute" type="number" min="0" step="1"></label>
  <label>tokens / min <input name="tokens_per_minute" type="number" min="0" step="1"></label>
  <label>concurrent <input name="concurrent_requests" type="number" min="0" step="1"></label>
  <label>expires <input name="expires_at" type="datetime-local"></label>
  <button type="submit">issue key</button>
</form>
</section>
`;
