/**
 * RegistryDO: one per deployment (named `global`), the admin plane's single writer: the tenant
 * directory, the price table's versions, the scoped admin keys and the hash-chained audit trail. No
 * model request waits for it: a request finds its tenant's authority from its key, and each authority
 * keeps the price table for `PRICE_CACHE_MS` (authority/price-cache.ts). Every write goes through one
 * queue, and a change made here is written in the same transaction as its audit record.
 */
import { DurableObject } from "cloudflare:workers";
import { clock } from "../../core/clock.ts";
import type { Page, PageRequest } from "../../core/pages.ts";
import type { PriceTable } from "../pricing.ts";
import { type AdminKeyInfo, AdminKeyStore } from "./admin-keys.ts";
import {
  type AuditActor,
  type AuditEntry,
  type AuditFilter,
  AuditLog,
  type AuditRecord,
  type AuditVerification,
  auditDiff,
} from "./audit-log.ts";
import { PriceBook, type PriceChange, type PriceVersion } from "./price-book.ts";
import { type DirectoryTenant, TenantDirectory } from "./tenant-directory.ts";

/** Who made a change and from where: every audited call carries it. */
export interface AuditContext {
  actor: AuditActor;
  requestId: string;
  source: string | null;
}

/** The binding this object is reached through (wrangler.toml). */
export interface RegistryBindings {
  /** The deployment's tenant directory, prices, admin keys and audit trail: one object. */
  REGISTRY: DurableObjectNamespace<RegistryDO>;
}

export function registryStub(env: RegistryBindings): DurableObjectStub<RegistryDO> {
  return env.REGISTRY.getByName("global");
}

export class RegistryDO extends DurableObject<unknown> {
  readonly #tenants: TenantDirectory;
  readonly #prices: PriceBook;
  readonly #admins: AdminKeyStore;
  readonly #audit: AuditLog;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.#tenants = new TenantDirectory(sql);
    this.#prices = new PriceBook(sql);
    this.#admins = new AdminKeyStore(sql);
    this.#audit = new AuditLog(sql);
  }

  // Tenants

  /** List the API_KEYS tenants (source `env`) the directory does not have yet. */
  async addEnvTenants(ids: string[]): Promise<void> {
    const missing = ids.filter((id) => !this.#tenants.get(id));
    if (missing.length > 0) await this.#serially(async () => this.#tenants.addEnvTenants(missing, clock.now()));
  }

  async createTenant(tenant: { id: string; name: string }, context: AuditContext) {
    return this.#serially(async () => {
      if (this.#tenants.get(tenant.id)) return undefined;
      const after = { id: tenant.id, name: tenant.name };
      return this.#change(context, entry("tenant.created", tenant.id, null, after), () =>
        this.#tenants.create({ ...tenant, createdBy: actorName(context.actor) }, clock.now()),
      );
    });
  }

  async tenant(id: string): Promise<DirectoryTenant | undefined> {
    return this.#tenants.get(id);
  }

  async tenants(request: PageRequest, options: { includeArchived: boolean; only?: string | undefined }) {
    return this.#tenants.page(request, options);
  }

  async tenantIds(): Promise<string[]> {
    return this.#tenants.ids();
  }

  async renameTenant(id: string, name: string, context: AuditContext) {
    return this.#serially(async () => {
      const before = this.#tenants.get(id);
      if (!before || before.name === name) return before;
      return this.#change(context, entry("tenant.updated", id, { name: before.name }, { name }), () => {
        this.#tenants.rename(id, name);
        return this.#tenants.get(id);
      });
    });
  }

  async archiveTenant(id: string, context: AuditContext) {
    return this.#serially(async () => {
      const before = this.#tenants.get(id);
      if (!before || before.archivedAt !== null) return before;
      return this.#change(context, entry("tenant.archived", id, { archived: false }, { archived: true }), () => {
        this.#tenants.archive(id, clock.now());
        return this.#tenants.get(id);
      });
    });
  }

  // Prices

  async prices(): Promise<PriceTable> {
    return this.#prices.current();
  }

  async setPrices(change: PriceChange, context: AuditContext): Promise<PriceTable> {
    return this.#serially(async () => {
      const before = this.#prices.current();
      const next = this.#prices.next(change);
      const diff = auditDiff(
        { version: before.version, ...pricesDiff(before, next, "before") },
        { version: next.version, ...pricesDiff(before, next, "after") },
      );
      const changed = {
        action: "prices.updated",
        tenant: null,
        target: { type: "prices", id: `prices_${next.version}` },
        diff,
      };
      return this.#change(context, changed, () => {
        this.#prices.write(next, actorName(context.actor), clock.now());
        return next;
      });
    });
  }

  async priceVersions(request: PageRequest): Promise<Page<PriceVersion> | undefined> {
    return this.#prices.page(request);
  }

  // Admin keys

  async createAdminKey(
    key: Omit<AdminKeyInfo, "createdAt" | "revokedAt" | "createdBy"> & { digest: string },
    context: AuditContext,
  ) {
    return this.#serially(async () => {
      const after = { name: key.name, scopes: key.scopes, tenant: key.tenant };
      const change = {
        action: "admin_key.created",
        tenant: key.tenant,
        target: { type: "admin_key", id: key.id },
        diff: auditDiff(null, after),
      };
      return this.#change(context, change, () =>
        this.#admins.create({ ...key, createdBy: actorName(context.actor) }, clock.now()),
      );
    });
  }

  async adminKeys(request: PageRequest): Promise<Page<AdminKeyInfo> | undefined> {
    return this.#admins.page(request);
  }

  async revokeAdminKey(id: string, context: AuditContext) {
    return this.#serially(async () => {
      const key = this.#admins.get(id);
      if (!key || key.revokedAt !== null) return key === undefined ? undefined : ("revoked" as const);
      const change = {
        action: "admin_key.revoked",
        tenant: key.tenant,
        target: { type: "admin_key", id },
        diff: auditDiff({ revoked: false }, { revoked: true }),
      };
      return this.#change(context, change, () => this.#admins.revoke(id, clock.now()));
    });
  }

  /** The live admin key with this id and digest: checked on every admin request, never cached. */
  async authenticateAdmin(id: string, digest: string): Promise<AdminKeyInfo | undefined> {
    return this.#admins.authenticate(id, digest);
  }

  // Audit

  /** Record a change made elsewhere (a tenant's authority, a pool), after it was made. */
  async appendAudit(change: Omit<AuditEntry, keyof AuditContext>, context: AuditContext): Promise<AuditRecord> {
    return this.#serially(async () => {
      const record = await this.#audit.prepare({ ...change, ...context }, clock.now());
      this.#audit.insert(record);
      return record;
    });
  }

  async audit(filter: AuditFilter, request: PageRequest): Promise<Page<AuditRecord> | undefined> {
    return this.#audit.page(filter, request);
  }

  async verifyAudit(): Promise<AuditVerification> {
    return this.#audit.verify();
  }

  /** Apply a change made here and write its audit record in one transaction. */
  async #change<T>(context: AuditContext, change: Omit<AuditEntry, keyof AuditContext>, apply: () => T): Promise<T> {
    const record = await this.#audit.prepare({ ...change, ...context }, clock.now());
    return this.ctx.storage.transactionSync(() => {
      const result = apply();
      this.#audit.insert(record);
      return result;
    });
  }

  /** Run writes one after another (an audit record is chained to the head it read). */
  #serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}

function entry(action: string, tenant: string, before: unknown, after: unknown): Omit<AuditEntry, keyof AuditContext> {
  return { action, tenant, target: { type: "tenant", id: tenant }, diff: auditDiff(before, after) };
}

function actorName(actor: AuditActor): string {
  return actor.type === "root" ? "root" : `admin_key:${actor.id}`;
}

/** The rows that differ between two tables, on one side. */
function pricesDiff(before: PriceTable, after: PriceTable, side: "before" | "after") {
  const table = side === "before" ? before : after;
  const other = side === "before" ? after : before;
  const prices: Record<string, unknown> = {};
  for (const model of new Set([...Object.keys(before.prices), ...Object.keys(after.prices)])) {
    if (JSON.stringify(table.prices[model]) !== JSON.stringify(other.prices[model]))
      prices[model] = table.prices[model] ?? null;
  }
  return table.currency !== other.currency ? { currency: table.currency, prices } : { prices };
}
