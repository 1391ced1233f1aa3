/**
 * The wait for a sequence, fair between tenants. Each tenant has its own FIFO of waiting turns;
 * a freed sequence goes to the next tenant in round-robin order whose running turns are under
 * its cap, so one tenant's burst queues behind itself, never in front of everyone else.
 * While tenants share the worker a tenant may hold at most `perTenant` waiting turns, and the queue
 * `total`; past either the caller is refused (the worker answers OVERLOADED, which the edge retries elsewhere or returns
 * as 529), so a burst can't fill the queue for others.
 */

export interface FairQueueLimits {
  /** Turns that may wait, all tenants together. */
  total: number;
  /** Turns one tenant may have waiting. */
  perTenant: number;
}

type Wake = () => void;

export class TenantFairQueue {
  readonly #limits: FairQueueLimits;
  /** Tenant → its waiters, oldest first. Map order is the round-robin order: a served tenant moves last. */
  readonly #queues = new Map<string, Wake[]>();
  #size = 0;

  constructor(limits: FairQueueLimits) {
    this.#limits = { total: Math.max(0, limits.total), perTenant: Math.max(0, limits.perTenant) };
  }

  get size(): number {
    return this.#size;
  }

  /** Waiting turns of one tenant. */
  waiting(tenant: string): number {
    return this.#queues.get(tenant)?.length ?? 0;
  }

  /**
   * Why `tenant` can't wait now ("total" or "tenant"), or undefined when it can. `shared`: other
   * tenants use this worker, so the per-tenant share applies (a tenant alone may fill the queue).
   */
  refusal(tenant: string, shared = true): "total" | "tenant" | undefined {
    if (this.#size >= this.#limits.total) return "total";
    if (shared && this.waiting(tenant) >= this.#limits.perTenant) return "tenant";
    return undefined;
  }

  /**
   * Wait until woken. `again`: a woken turn that found no sequence after all waits at the head of
   * its tenant's queue, keeping its place (and is not counted against the limits twice).
   */
  wait(tenant: string, again = false): Promise<void> {
    return new Promise<void>((resolve) => {
      const queue = this.#queues.get(tenant) ?? [];
      if (!this.#queues.has(tenant)) this.#queues.set(tenant, queue);
      if (again) queue.unshift(resolve);
      else queue.push(resolve);
      this.#size++;
    });
  }

  /**
   * Wake the oldest waiter of the first tenant in round-robin order that `eligible` allows (under
   * its cap); that tenant then moves to the back. False when no eligible tenant waits.
   */
  wakeNext(eligible: (tenant: string) => boolean): boolean {
    for (const [tenant, queue] of this.#queues) {
      if (!eligible(tenant)) continue;
      const wake = queue.shift();
      this.#queues.delete(tenant);
      if (queue.length > 0) this.#queues.set(tenant, queue);
      if (wake === undefined) continue;
      this.#size--;
      wake();
      return true;
    }
    return false;
  }
}
