/**
 * Draining a worker: stop taking turns, let the turns in flight finish (their tool-frontier writes
 * included), then checkpoint every resident session to the store — shared with the other workers —
 * and forget it here. The edge moves each handed-over session to another worker (epoch + 1), whose
 * next turn restores the checkpoint. Idempotent: a second call waits for the first.
 */
import { log } from "../log.ts";
import type { SessionTable } from "../session/session-table.ts";

export interface HandedOver {
  tenantId: string;
  sessionId: string;
  /** A checkpoint of its live state was written (false: it had no completed turn to save). */
  checkpointed: boolean;
}

export interface DrainResult {
  sessions: HandedOver[];
  /** Sessions still resident afterwards (0 when nothing raced the drain). */
  residentSessions: number;
}

export class DrainState {
  #run: Promise<DrainResult> | undefined;

  get draining(): boolean {
    return this.#run !== undefined;
  }

  drain(sessions: SessionTable): Promise<DrainResult> {
    this.#run ??= drainAll(sessions);
    return this.#run;
  }
}

async function drainAll(sessions: SessionTable): Promise<DrainResult> {
  log("worker draining", { resident: sessions.stats().resident });
  await sessions.idle();
  const handed: HandedOver[] = [];
  for (const { tenant, sessionId } of sessions.residents()) {
    const saved = await sessions.handOver(tenant, sessionId);
    if (saved !== undefined) handed.push({ tenantId: tenant, sessionId, checkpointed: saved });
  }
  const residentSessions = sessions.stats().resident;
  log("worker drained", {
    handedOver: handed.length,
    checkpointed: handed.filter((s) => s.checkpointed).length,
    resident: residentSessions,
  });
  return { sessions: handed, residentSessions };
}
