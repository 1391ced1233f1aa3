/**
 * llama-server on the same trace, in the same virtual time and cost model as the Frontier pool
 * (pool-sim.ts): N servers with `--parallel` = a Frontier worker's sequences, each slot a Frontier
 * sequence's context, and the host prompt cache given a Frontier worker's checkpoint tokens
 * (llama-server-slots.ts says how slots and that cache are modelled).
 *
 * In front of the servers, a router llama-server does not have: a new conversation goes to the next
 * server in turn, its follow-ups to the server that served its parent (sticky; the best a
 * prefix-blind router does). A server takes queued requests in order whenever a slot is idle; past
 * the same bound as a Frontier worker's queue a request is refused, as a proxy in front would, so the
 * served sets compare. Each server's engine serialises prompt processing, host-cache dumps and loads
 * (the restore rate) and decodes on its slots in parallel, as a Frontier worker's does.
 */
import { type CostModel, costMs } from "./cost-model.ts";
import { EventQueue } from "./event-queue.ts";
import { LlamaServerSlots } from "./llama-server-slots.ts";
import { type KvContent, newSimResult, type SimResult } from "./sim-result.ts";
import type { WorkerCapacity } from "./sim-worker.ts";
import { fullBlocks, type SimRequest } from "./trace-sessions.ts";

export interface LlamaServerSimConfig {
  servers: number;
  capacity: WorkerCapacity;
  cost: CostModel;
}

interface Server {
  slots: LlamaServerSlots;
  queue: SimRequest[];
  engineFreeAt: number;
  busyMs: number;
  requests: number;
}

export function simulateLlamaServer(requests: readonly SimRequest[], config: LlamaServerSimConfig): SimResult {
  const { capacity, cost } = config;
  const servers: Server[] = Array.from({ length: config.servers }, () => ({
    slots: new LlamaServerSlots(capacity.sequences, capacity.checkpointTokens),
    queue: [],
    engineFreeAt: 0,
    busyMs: 0,
    requests: 0,
  }));
  const serverOf: number[] = [];
  const events = new EventQueue();
  const result = newSimResult("llama-server", config.servers, requests.length);
  let next = 0;

  const start = (s: Server, r: SimRequest, now: number) => {
    const a = s.slots.assign(r);
    if (a.by === "prefix") result.slotsByPrefix++;
    else result.slotsByLru++;
    if (a.savedTokens > 0) result.hostCacheSaves++;
    if (a.loadedTokens > 0) result.hostCacheLoads++;
    const reused = Math.min(a.reusedBlocks, r.inputLength);
    const reusedOut = Math.min(Math.max(a.reusedWithOutput, reused), r.inputLength);
    const prefill = r.inputLength - reused;
    const engineMs =
      costMs(a.savedTokens + a.loadedTokens, cost.restoreTokensPerSecond) +
      costMs(prefill, cost.prefillTokensPerSecond);
    const begin = Math.max(now, s.engineFreeAt);
    s.engineFreeAt = begin + engineMs;
    s.busyMs += engineMs;
    const firstToken = begin + engineMs;
    result.ttftMs.push(firstToken - r.timestamp);
    result.queueMs.push(now - r.timestamp);
    result.inputTokens += r.inputLength;
    result.reusedTokens += reused;
    result.reusedWithOutput += reusedOut;
    result.prefilledTokens += prefill;
    result.served++;
    s.requests++;
    const end = firstToken + costMs(r.outputLength, cost.decodeTokensPerSecond);
    const kv: KvContent = {
      tokens: r.inputLength + r.outputLength,
      blockKeys: r.prefixKeys.slice(0, fullBlocks(r)),
      inputTokens: r.inputLength,
    };
    events.push(end, () => {
      s.slots.release(a.slot, kv, end);
      dispatch(s, end);
    });
  };

  const dispatch = (s: Server, now: number) => {
    while (s.queue.length > 0 && s.slots.hasIdle()) {
      const r = s.queue.shift();
      if (r) start(s, r, now);
    }
  };

  const arrive = (r: SimRequest, now: number) => {
    const parentServer = r.parent >= 0 ? serverOf[r.parent] : undefined;
    const index = parentServer ?? next++ % servers.length;
    serverOf[r.index] = index;
    const s = servers[index];
    if (!s) throw new Error(`no server ${index}`);
    const waiting = s.slots.hasIdle() ? 0 : s.queue.length;
    if (r.inputLength + r.outputLength > capacity.contextTokens || waiting >= capacity.maxQueue) {
      result.refused++;
      return;
    }
    s.queue.push(r);
    dispatch(s, now);
  };

  for (const r of requests) events.push(r.timestamp, () => arrive(r, r.timestamp));
  events.run();
  result.durationMs = events.now;
  for (const s of servers) {
    result.perWorkerRequests.push(s.requests);
    result.perWorkerBusyMs.push(s.busyMs);
  }
  return result;
}
