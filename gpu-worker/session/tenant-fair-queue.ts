/**
 * The turns waiting for a sequence, fair between tenants. Each tenant has its own FIFO of waiting
 * turns; a freed sequence goes to the oldest waiter of the next tenant in round-robin order whose
 * running turns are under its cap, so one tenant's burst queues behind itself, never in front of
 * everyone else. The queue holds at most `total` waiting turns. While tenants share the worker, each
 * is guaranteed `perTenant` places (its share): a tenant past its share may still wait while the queue
 * has room (borrowing room nobody uses), and when the queue is full and a tenant within its share
 * arrives, the newest waiter of the tenant furthest past its share gives its place back (refused, as
 * it would have been on arrival). So a burst can't keep others out, and no place sits empty while a
 * turn is refused. A refused caller gets OVERLOADED (the edge retries elsewhere or returns 529).
 *
 * It only orders and bounds: who is served, and when, is the dispatcher's (sequence-dispatcher.ts).
 * A waiter can leave at any time (`remove`: its call was cancelled); the counts never drift because
 * every entry is in exactly one tenant's list and `size` is their total.
 */

export interface FairQueueLimits {
  /** Turns that may wait, all tenants together. */
  total: number;
  /** Turns one tenant may have waiting. */
  perTenant: number;
}

/** Why a turn may not wait: the queue is full, or its tenant's share of it is. */
export type QueueRefusal = "total" | "tenant";

/**
 * May a turn of this tenant wait? Yes; yes in the place of `victim` (the newest waiter of the tenant
 * furthest past its share, to be refused); or no, and which bound refused it.
 */
export type QueueAdmission<W> =
  | { kind: "admit" }
  | { kind: "displace"; victim: W }
  | { kind: "refuse"; bound: QueueRefusal };

export class TenantFairQueue<W extends { readonly tenant: string }> {
  readonly #limits: FairQueueLimits;
  /** Tenant → its waiters, oldest first. Map order is the round-robin order: a served tenant moves last. */
  readonly #queues = new Map<string, W[]>();
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

  /** Each tenant that has waiters, with them (oldest first), in round-robin order. */
  tenants(): IterableIterator<[string, readonly W[]]> {
    return this.#queues.entries();
  }

  /**
   * Whether a turn of `tenant` may wait now. `shared`: other tenants use this worker, so the shares
   * apply (a tenant alone may fill the queue). With room, anyone waits. Full: a tenant within its
   * share takes the place of the newest waiter of the tenant furthest past its share, if any; else it
   * is refused, by its share when it is past it, else by the total.
   */
  admission(tenant: string, shared = true): QueueAdmission<W> {
    if (this.#size < this.#limits.total) return { kind: "admit" };
    const mine = this.waiting(tenant);
    if (!shared) return { kind: "refuse", bound: "total" };
    if (mine >= this.#limits.perTenant) return { kind: "refuse", bound: "tenant" };
    let over: W[] | undefined;
    for (const [other, queue] of this.#queues) {
      if (other !== tenant && queue.length > this.#limits.perTenant && queue.length > (over?.length ?? 0)) over = queue;
    }
    const victim = over?.[over.length - 1];
    return victim === undefined ? { kind: "refuse", bound: "total" } : { kind: "displace", victim };
  }

  /** Queue a turn behind its tenant's earlier ones. */
  push(waiter: W): void {
    const queue = this.#queues.get(waiter.tenant);
    if (queue) queue.push(waiter);
    else this.#queues.set(waiter.tenant, [waiter]);
    this.#size++;
  }

  /** Whether the turn is still waiting here. */
  has(waiter: W): boolean {
    return this.#queues.get(waiter.tenant)?.includes(waiter) ?? false;
  }

  /** Take a turn out without serving it (its call was cancelled); false when it was not waiting. */
  remove(waiter: W): boolean {
    const queue = this.#queues.get(waiter.tenant);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.#queues.delete(waiter.tenant);
    this.#size--;
    return true;
  }

  /**
   * Take the turn the next free sequence goes to: the oldest waiter of the first tenant in
   * round-robin order that `eligible` allows (under its cap); that tenant then moves to the back.
   * Undefined when no eligible tenant waits.
   */
  takeNext(eligible: (tenant: string) => boolean): W | undefined {
    for (const [tenant, queue] of this.#queues) {
      if (!eligible(tenant)) continue;
      const waiter = queue.shift();
      this.#queues.delete(tenant);
      if (queue.length > 0) this.#queues.set(tenant, queue);
      if (waiter === undefined) continue;
      this.#size--;
      return waiter;
    }
    return undefined;
  }
}
