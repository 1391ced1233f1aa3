/**
 * Whether tenants share this worker: the caps meant for sharing (a tenant's running turns under
 * `tenantMaxSequences`, its share of the queue, a spare sequence kept free) bind only while another
 * tenant has leased a session within the last `windowMs`. A tenant alone is never held by them,
 * and `sharedUntil` says when a tenant's sharing ends, so a turn held by a cap is looked at again
 * the moment it no longer is (the dispatcher arms a timer for it).
 */

/** A tenant counts as "another tenant" for the caps this long after its last lease. */
export const FAIR_SHARE_WINDOW_MS = 60_000;

export class TenantShare {
  /** The two tenants that leased a session most recently, newest first, and when. */
  #recent: { tenant: string; at: number }[] = [];
  readonly #windowMs: number;

  constructor(windowMs = FAIR_SHARE_WINDOW_MS) {
    this.#windowMs = windowMs;
  }

  /** `tenant` leased a session now. */
  leased(tenant: string): void {
    this.#recent = [{ tenant, at: Date.now() }, ...this.#recent.filter((r) => r.tenant !== tenant).slice(0, 1)];
  }

  /** Whether another tenant than `tenant` (any two tenants, when undefined) leased a session recently. */
  shared(tenant?: string): boolean {
    return this.sharedUntil(tenant) > Date.now();
  }

  /**
   * Until when (ms since the epoch) `tenant` shares the worker with another tenant (any two tenants,
   * when undefined): the newest other tenant's lease plus the window; 0 when none was seen.
   */
  sharedUntil(tenant?: string): number {
    const others = this.#recent.filter((r) => r.tenant !== tenant);
    if (tenant === undefined) return others.length > 1 ? Math.min(...others.map((r) => r.at)) + this.#windowMs : 0;
    return others.length > 0 ? Math.max(...others.map((r) => r.at)) + this.#windowMs : 0;
  }
}
