/**
 * TenantAuthorityDO: one per tenant (named by the tenant id, which every key of the tenant spells),
 * the single writer of everything a request of that tenant is decided by: its keys (status, expiry,
 * rotation), its policy and its keys' (rates, concurrency, budgets, models), what is in flight and
 * reserved, and its usage ledger. Admission and accounting in one place: limits cannot drift under
 * concurrency, and a revoked key is refused by the very next request in every isolate (no cache sits
 * between this object and the check).
 *
 * Soft state (rate buckets, reservations in flight, keys' last use, refusal counts) is decided in
 * memory and written behind (core/write-behind.ts); a restarted object finds what outlived
 * `SOFT_STATE_WRITE_MS`. Keys, policy and the ledger are written before the call returns.
 */
import { DurableObject } from "cloudflare:workers";
import { clock } from "../../core/clock.ts";
import type { Page, PageRequest } from "../../core/pages.ts";
import type { RateLimitSnapshot } from "../../core/rate-limits.ts";
import { WriteBehind } from "../../core/write-behind.ts";
import { type RegistryBindings, registryStub } from "../registry/registry-do.ts";
import { AdmissionBook, type BookState, type Reservation } from "./admission-book.ts";
import type { AdmitRequest, AuthorityAnswer, Presented, SettleRequest } from "./authority-api.ts";
import { AuthorityGate, type BudgetSpend } from "./authority-gate.ts";
import { type KeySelf, keySelf } from "./key-self.ts";
import { type KeyInfo, type KeyPatch, KeyStore, type NewKey } from "./key-store.ts";
import type { Policy } from "./policy.ts";
import { PriceCache } from "./price-cache.ts";
import { SpendBook } from "./spend.ts";
import { type TenantSettings, TenantSettingsStore } from "./tenant-settings.ts";
import { type TurnRecord, type UsageHour, UsageLedger, type UsageReport } from "./usage-ledger.ts";

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface TenantAuthorityBindings {
  /** One authority per tenant: keys, policy, admission, usage. */
  TENANTS: DurableObjectNamespace<TenantAuthorityDO>;
}

/** What /admin/metrics reads of a tenant: refusals by reason and spend by key. */
export interface AuthorityMetrics {
  refusals: Record<string, number>;
  usage: UsageReport["keys"];
}

export class TenantAuthorityDO extends DurableObject<RegistryBindings> {
  readonly #sql: SqlStorage;
  readonly #settings: TenantSettingsStore;
  readonly #keys: KeyStore;
  readonly #ledger: UsageLedger;
  readonly #book: AdmissionBook;
  readonly #gate: AuthorityGate;
  readonly #prices: PriceCache;
  /** Soft state's delayed write (public so an in-workerd test can flush it; fields are not reachable over RPC). */
  readonly softState = new WriteBehind(() => this.#writeSoftState());
  /** Reservations SQLite holds (a subset of the book's once written). */
  #reservationsWritten = new Set<string>();

  constructor(ctx: DurableObjectState, env: RegistryBindings) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.#sql = sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS soft_buckets (scope TEXT NOT NULL, kind TEXT NOT NULL, level REAL NOT NULL,
      at INTEGER NOT NULL, PRIMARY KEY (scope, kind))`);
    sql.exec("CREATE TABLE IF NOT EXISTS soft_reservations (request_id TEXT PRIMARY KEY, reservation TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS refusals (reason TEXT PRIMARY KEY, count INTEGER NOT NULL)");
    this.#settings = new TenantSettingsStore(sql);
    this.#keys = new KeyStore(sql);
    this.#ledger = new UsageLedger(sql);
    this.#book = new AdmissionBook(this.#readSoftState());
    this.#prices = new PriceCache(() => registryStub(env).prices());
    this.#gate = new AuthorityGate({
      book: this.#book,
      settings: this.#settings,
      keys: this.#keys,
      ledger: this.#ledger,
      spend: new SpendBook(this.#ledger),
      prices: this.#prices,
      transaction: (work) => ctx.storage.transactionSync(work),
      changed: () => this.softState.changed(),
    });
  }

  // Requests

  /** Authenticate and admit one request, its upper bound reserved (the one call a turn waits for). */
  async admit(request: AdmitRequest): Promise<AuthorityAnswer> {
    return this.#gate.admit(request);
  }

  /** Is this key good now (a route that runs no turn); with `preflight`, would a request be admitted? */
  async authenticate(presented: Presented, options: { preflight?: boolean } = {}): Promise<AuthorityAnswer> {
    return this.#gate.authenticate(presented, options);
  }

  /** A request is over: its reservation goes back and what its turn used is charged (once per request id). */
  async settle(request: SettleRequest): Promise<{ counted: boolean }> {
    return this.#gate.settle(request);
  }

  /** What a key reads of itself (GET /v1/key), or why it is refused (as any request of it would be). */
  async keySelf(
    presented: Presented,
  ): Promise<{ ok: true; self: KeySelf; snapshot: RateLimitSnapshot } | Extract<AuthorityAnswer, { ok: false }>> {
    const answer = this.#gate.authenticate(presented);
    if (!answer.ok) return answer;
    const now = clock.now();
    const runtime = presented.credential.kind === "runtime";
    const self = keySelf({
      keyId: presented.keyId,
      key: runtime ? this.#withLastUse(this.#keys.get(presented.keyId, now)) : undefined,
      settings: this.#settings.get(),
      env: presented.env,
      models: answer.models,
      spend: this.#gate.spend(runtime ? presented.keyId : undefined),
      ledger: this.#ledger,
      currency: (await this.#prices.fresh(now)).currency,
      now,
    });
    return { ok: true, self, snapshot: answer.snapshot };
  }

  // The tenant

  async settings(): Promise<TenantSettings> {
    return this.#settings.get();
  }

  async configure(policy: Policy): Promise<TenantSettings> {
    return this.#settings.setPolicy(policy, clock.now());
  }

  async archive(): Promise<TenantSettings> {
    return this.#settings.archive(clock.now());
  }

  // Keys

  async createKey(key: NewKey): Promise<KeyInfo | undefined> {
    return this.#keys.create(key, clock.now());
  }

  async key(id: string): Promise<KeyInfo | undefined> {
    return this.#withLastUse(this.#keys.get(id, clock.now()));
  }

  async keys(request: PageRequest): Promise<Page<KeyInfo> | undefined> {
    const page = this.#keys.page(request, clock.now());
    return page && { ...page, data: page.data.map((k) => this.#withLastUse(k) ?? k) };
  }

  async updateKey(id: string, patch: KeyPatch): Promise<KeyInfo | "revoked" | undefined> {
    return this.#keys.update(id, patch, clock.now());
  }

  async revokeKey(id: string): Promise<KeyInfo | "revoked" | undefined> {
    return this.#keys.revoke(id, clock.now());
  }

  async rotateKey(id: string, next: { digest: string; hint: string }, graceUntil: number) {
    return this.#keys.rotate(id, next, graceUntil, clock.now());
  }

  // Usage

  /** Daily buckets per key in [from, to] (`YYYY-MM-DD`) and all-time totals per key. */
  async usageReport(range: { from?: string; to?: string } = {}): Promise<UsageReport> {
    return this.#ledger.report(range);
  }

  /** Hourly buckets by key and model in [from, to) (epoch ms): what every report sums. */
  async usageHours(from: number, to: number): Promise<UsageHour[]> {
    return this.#ledger.hours(from, to);
  }

  /** The recorded turns in [from, to) (epoch ms), kept 35 days: what hourly buckets sum. */
  async usageTurns(from: number, to: number): Promise<TurnRecord[]> {
    return this.#ledger.turns(from, to);
  }

  /** What the tenant (and, with `keyId`, that key) spent in its budget's current period. */
  async spend(keyId?: string): Promise<{ tenant: BudgetSpend | null; key: BudgetSpend | null }> {
    return this.#gate.spend(keyId);
  }

  async metrics(): Promise<AuthorityMetrics> {
    const stored = this.#sql.exec<{ reason: string; count: number }>("SELECT * FROM refusals").toArray();
    const refusals: Record<string, number> = {};
    for (const row of stored) refusals[row.reason] = row.count;
    for (const [reason, count] of this.#gate.refusals) refusals[reason] = (refusals[reason] ?? 0) + count;
    return { refusals, usage: this.#ledger.report({}).keys };
  }

  #withLastUse(key: KeyInfo | undefined): KeyInfo | undefined {
    const pending = key && this.#gate.lastUsed.get(key.id);
    return key && pending !== undefined ? { ...key, lastUsedAt: Math.max(key.lastUsedAt ?? 0, pending) } : key;
  }

  #readSoftState(): BookState {
    const buckets = this.#sql
      .exec<{ scope: string; kind: "requests" | "tokens"; level: number; at: number }>("SELECT * FROM soft_buckets")
      .toArray();
    const inFlight = this.#sql
      .exec<{ request_id: string; reservation: string }>("SELECT * FROM soft_reservations")
      .toArray()
      .map((row) => {
        this.#reservationsWritten.add(row.request_id);
        return JSON.parse(row.reservation) as Reservation;
      });
    return { buckets, inFlight };
  }

  /** Bring SQLite to the object's soft state: buckets, reservations in flight, keys' last use, refusal counts. */
  #writeSoftState(): void {
    const state = this.#book.state();
    this.ctx.storage.transactionSync(() => {
      this.#sql.exec("DELETE FROM soft_buckets");
      for (const b of state.buckets) {
        this.#sql.exec("INSERT INTO soft_buckets VALUES (?, ?, ?, ?)", b.scope, b.kind, b.level, b.at);
      }
      const live = new Set(state.inFlight.map((r) => r.requestId));
      for (const id of this.#reservationsWritten) {
        if (!live.has(id)) this.#sql.exec("DELETE FROM soft_reservations WHERE request_id = ?", id);
      }
      for (const r of state.inFlight) {
        if (!this.#reservationsWritten.has(r.requestId)) {
          this.#sql.exec("INSERT OR REPLACE INTO soft_reservations VALUES (?, ?)", r.requestId, JSON.stringify(r));
        }
      }
      this.#keys.touch(this.#gate.lastUsed);
      for (const [reason, count] of this.#gate.refusals) {
        this.#sql.exec(
          "INSERT INTO refusals VALUES (?, ?) ON CONFLICT (reason) DO UPDATE SET count = count + excluded.count",
          reason,
          count,
        );
      }
    });
    this.#reservationsWritten = new Set(state.inFlight.map((r) => r.requestId));
    this.#gate.lastUsed.clear();
    this.#gate.refusals.clear();
  }
}
