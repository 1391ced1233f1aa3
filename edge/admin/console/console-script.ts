/**
 * The console's browser script (inlined into the status page after chart-script.ts): reads
 * /admin/status.json's usage (handed in by the status script on each refresh) and the admin API
 * (`tenants`, a tenant and its `keys`, all pages), and sends the console's changes to the admin API
 * with the typed token as a Bearer header. Text goes into the page with textContent only. A new key's
 * secret is written into `#new-secret` once, from the answer that issued it, and erased when the
 * operator dismisses it; it is never stored (no storage, no URL) and no read of the API returns it.
 */
export const CONSOLE_SCRIPT = `
const consoleState = { token: "", tenant: null, tenants: [], status: null, renders: 0 };
const TOKEN_SERIES = [
  { name: "prefilled", label: "input (prefilled)", color: "#3b6fd8" },
  { name: "cached", label: "cached input", color: "#9db8ef" },
  { name: "output", label: "output", color: "#e08a2c" },
];
const COST_SERIES = [{ name: "cost", label: "cost", color: "#0a7a33" }];
function consoleMessage(note, error) {
  $("console-note").textContent = note || "";
  $("console-error").textContent = error || "";
}
async function adminApi(method, path, body) {
  const headers = { accept: "application/json" };
  if (method !== "GET") {
    if (consoleState.token === "") throw new Error("Type the admin token (or an admin key with the keys scope) above to make changes");
    headers.authorization = "Bearer " + consoleState.token;
    if (body !== undefined) headers["content-type"] = "application/json";
  }
  const init = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  try { json = text === "" ? null : JSON.parse(text); } catch { json = null; }
  if (!response.ok) {
    const message = json && json.error && json.error.message ? json.error.message : text.slice(0, 200);
    throw new Error(method + " " + path + " answered " + response.status + ": " + message);
  }
  return json;
}
/** Every item of an admin list, page by page. */
async function listAll(path) {
  const items = [];
  let after = null;
  for (let page = 0; page < 100; page++) {
    const query = (path.includes("?") ? "&" : "?") + "limit=100" + (after ? "&after_id=" + encodeURIComponent(after) : "");
    const list = await adminApi("GET", path + query);
    items.push(...list.data);
    if (!list.has_more || !list.last_id) break;
    after = list.last_id;
  }
  return items;
}
const tenantPath = (id) => "tenants/" + encodeURIComponent(id);
const when = (iso, none) => (iso === null || iso === undefined ? none : iso.slice(0, 16).replace("T", " ") + " UTC");
const limit = (n) => (n === null ? "–" : n === 0 ? "unlimited" : String(n));
/** A policy's limits in one cell ("–": none of its own). */
function limits(l) {
  const parts = [[l.requests_per_minute, "requests / min"], [l.tokens_per_minute, "tokens / min"], [l.concurrent_requests, "concurrent"]]
    .filter(([n]) => n !== null).map(([n, what]) => limit(n) + " " + what);
  return parts.length === 0 ? "–" : parts.join(", ");
}
const budget = (b) => (b === null ? "–" : money(b.amount) + " / " + b.period);
function money(n) { return n === 0 ? "0" : n < 0.01 ? n.toPrecision(2) : n.toFixed(2); }
function count(n) { return n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e4 ? (n / 1e3).toFixed(1) + "k" : String(n); }
function usageRows(tenant) {
  const rows = consoleState.status ? consoleState.status.usageDays.rows : [];
  return tenant ? rows.filter((r) => r.tenant === tenant) : rows;
}
function renderCharts() {
  const s = consoleState.status;
  if (!s) return;
  const days = daysBetween(s.usageDays.from, s.usageDays.to);
  const tokens = {}, cost = {};
  for (const r of usageRows($("chart-tenant").value)) {
    const t = (tokens[r.day] ??= { prefilled: 0, cached: 0, output: 0 });
    t.prefilled += r.inputTokens - r.cachedTokens; t.cached += r.cachedTokens; t.output += r.outputTokens;
    cost[r.day] = { cost: ((cost[r.day] || {}).cost || 0) + r.cost };
  }
  barChart("tokens-chart", days, tokens, TOKEN_SERIES, count);
  barChart("cost-chart", days, cost, COST_SERIES, money);
  legend("tokens-legend", TOKEN_SERIES);
  $("cost-currency").textContent = "(" + s.usageDays.currency + ")";
}
function renderTenants() {
  clear("tenants");
  const select = $("chart-tenant"), chosen = select.value;
  select.replaceChildren(new Option("all tenants", ""));
  for (const t of consoleState.tenants) {
    const rows = usageRows(t.id);
    const turns = rows.reduce((a, r) => a + r.turns, 0), spent = rows.reduce((a, r) => a + r.cost, 0);
    const button = document.createElement("button");
    button.type = "button"; button.textContent = "keys"; button.dataset.tenant = t.id;
    button.addEventListener("click", () => selectTenant(t.id));
    row("tenants", [t.id, t.name, { text: t.status, className: "status-" + t.status }, t.source, when(t.created_at, "–"), turns, money(spent), { node: button }]);
    if (t.id === consoleState.tenant) $("tenants").tBodies[0].lastChild.className = "selected";
    select.appendChild(new Option(t.id, t.id, false, t.id === chosen));
  }
}
function renderKeys(tenant, keys) {
  $("keys-tenant").textContent = tenant.name + " (" + tenant.id + ")";
  const spend = tenant.spend ? " (spent " + money(tenant.spend.amount) + ", remaining " + money(tenant.spend.remaining) + ")" : "";
  const own = limits(tenant.limits);
  $("tenant-policy").textContent = "tenant limits: " + (own === "–" ? "the deployment's defaults" : own) + " · budget " +
    budget(tenant.budget) + spend + " · models " + (tenant.models === null ? "any" : tenant.models.join(", "));
  clear("keys");
  const totals = consoleState.status ? consoleState.status.keyTotals : [];
  for (const k of keys) {
    const used = totals.find((u) => u.tenant === tenant.id && u.keyId === k.id);
    let action = "";
    if (!k.read_only && k.status !== "revoked") {
      const button = document.createElement("button");
      button.type = "button"; button.textContent = "revoke"; button.dataset.key = k.id;
      button.addEventListener("click", () => revokeKey(tenant.id, k));
      action = { node: button };
    }
    row("keys", [k.name, k.id, k.partial_key_hint || (k.read_only ? "API_KEYS" : "–"), { text: k.status, className: "status-" + k.status },
      when(k.created_at, "–"), when(k.last_used_at, "never"), when(k.expires_at, "never"), limits(k.limits),
      budget(k.budget), k.models === null ? "any" : k.models.join(", "),
      used ? used.turns : 0, used ? count(used.inputTokens) + " / " + count(used.outputTokens) : "0 / 0", used ? money(used.cost) : "0", action]);
    $("keys").tBodies[0].lastChild.dataset.key = k.id;
  }
}
async function loadKeys(seq) {
  const id = consoleState.tenant;
  if (id === null) return;
  const [tenant, keys] = await Promise.all([adminApi("GET", tenantPath(id)), listAll(tenantPath(id) + "/keys")]);
  if (seq === refreshSeq && id === consoleState.tenant) renderKeys(tenant, keys);
}
/** Called by the status script after each status.json it renders. */
async function refreshConsole(status, seq) {
  try {
    const tenants = await listAll("tenants?include_archived=true");
    if (seq !== refreshSeq) return;
    consoleState.status = status; consoleState.tenants = tenants;
    renderTenants(); renderCharts();
    await loadKeys(seq);
    if (seq !== refreshSeq) return;
    document.body.dataset.console = String(++consoleState.renders);
  } catch (error) {
    if (seq === refreshSeq) consoleMessage("", String(error));
  }
}
function selectTenant(id) {
  consoleState.tenant = id;
  consoleMessage("", "");
  refresh();
}
/** Run a change; show its outcome; refresh what it touched. */
async function change(action) {
  try { consoleMessage(await action(), ""); } catch (error) { consoleMessage("", String(error.message || error)); }
  refresh();
}
function showSecret(name, value) {
  $("new-secret-name").textContent = name;
  $("new-secret-value").textContent = value;
  $("new-secret").hidden = false;
}
function forgetSecret() {
  $("new-secret-value").textContent = "";
  $("new-secret-name").textContent = "";
  $("new-secret").hidden = true;
}
function revokeKey(tenant, key) {
  if (!confirm("Revoke key " + key.name + " (" + key.id + ")? Its next request is refused, everywhere.")) return;
  change(async () => {
    await adminApi("DELETE", tenantPath(tenant) + "/keys/" + encodeURIComponent(key.id));
    return "Key " + key.name + " revoked";
  });
}
$("admin-token").addEventListener("input", (e) => { consoleState.token = e.target.value.trim(); });
$("token-form").addEventListener("submit", (e) => e.preventDefault());
$("refresh-now").addEventListener("click", () => refresh());
$("chart-tenant").addEventListener("change", renderCharts);
$("new-secret-done").addEventListener("click", forgetSecret);
$("create-tenant").addEventListener("submit", (e) => {
  e.preventDefault();
  const form = e.target, id = form.elements.id.value.trim(), body = { name: form.elements.name.value.trim() };
  if (id !== "") body.id = id;
  change(async () => {
    const tenant = await adminApi("POST", "tenants", body);
    form.reset();
    consoleState.tenant = tenant.id;
    return "Tenant " + tenant.id + " created";
  });
});
$("issue-key").addEventListener("submit", (e) => {
  e.preventDefault();
  const form = e.target, tenant = consoleState.tenant;
  if (tenant === null) return consoleMessage("", "Select a tenant first (its keys button)");
  const body = { name: form.elements.name.value.trim() }, limits = {};
  for (const name of ["requests_per_minute", "tokens_per_minute", "concurrent_requests"]) {
    if (form.elements[name].value !== "") limits[name] = Number(form.elements[name].value);
  }
  if (Object.keys(limits).length > 0) body.limits = limits;
  if (form.elements.expires_at.value !== "") body.expires_at = new Date(form.elements.expires_at.value).toISOString();
  change(async () => {
    forgetSecret();
    const key = await adminApi("POST", tenantPath(tenant) + "/keys", body);
    form.reset();
    showSecret(key.name + " (" + key.id + ")", key.value);
    return "Key " + key.name + " issued for " + tenant;
  });
});
`;
