/**
 * The pool simulation: a discrete-event run of a trace over N simulated workers (sim-worker.ts) in
 * virtual time. New sessions are placed by a policy: `frontier` is the edge's own placement
 * (`placeSession` on heartbeat views plus `notePlacement` between heartbeats, by the request's prefix
 * chain as the workers advertise what they hold) with session stickiness
 * (a follow-up claims its session's worker, waits behind its parent's running turn, or branches next to
 * it, as `hintDecision` says);
 * `round-robin` and `least-loaded` (the same load measure without prefix or stickiness) route every
 * request. Each worker serialises prefill, restore, prefix copies and parking dumps on one engine and
 * decodes on its sequences in parallel (cost-model.ts). Its ladder: the session's own KV (live or
 * restored), the shared-prefix rung (shared-prefix-rung.ts), the stored cold anchor. llama-server is
 * simulated apart (llama-server-sim.ts).
 */
import { notePlacement, type PoolWorker, placeSession } from "../../edge/pool/placement.ts";
import { hintDecision } from "../../edge/session/routing.ts";
import { BLOCK_TOKENS } from "../trace/trace-file.ts";
import { type CostModel, costMs } from "./cost-model.ts";
import { EventQueue } from "./event-queue.ts";
import { runningTurnOf, type SessionTurn } from "./running-turn.ts";
import { SHARED_MIN_TOKENS, sharedPrefixCopy } from "./shared-prefix-rung.ts";
import { type KvContent, liveReuse, newSimResult, type SimPolicy, type SimResult } from "./sim-result.ts";
import { SIM_TENANT, SimWorker, simFrontier, type WorkerCapacity } from "./sim-worker.ts";
import { fullBlocks, requestChain, type SimRequest } from "./trace-sessions.ts";

export interface SimConfig {
  workers: number;
  policy: Exclude<SimPolicy, "llama-server">;
  capacity: WorkerCapacity;
  cost: CostModel;
  heartbeatMs: number;
}

interface SessionInfo {
  worker: number;
  busy: boolean;
  turns: number;
  /** The turn holding the session while busy. */
  running: SessionTurn | undefined;
  /** Follow-ups queued behind the running turn (hintDecision: wait); they arrive again when it ends. */
  followers: SimRequest[];
}

export function simulate(requests: readonly SimRequest[], config: SimConfig): SimResult {
  const { capacity, cost } = config;
  const workers = Array.from({ length: config.workers }, (_, i) => new SimWorker(`w${i}`, capacity));
  const sessions = new Map<string, SessionInfo>();
  const sessionOf: string[] = [];
  const events = new EventQueue();
  const result = newSimResult(config.policy, config.workers, requests.length);
  let lastHeartbeat = Number.NEGATIVE_INFINITY;
  let roundRobin = 0;
  let newSessions = 0;

  const views = (now: number): PoolWorker[] => {
    if (now - lastHeartbeat >= config.heartbeatMs) {
      // A heartbeat replaces the report's fields; the pool's own bookkeeping (when it last placed
      // a session there) stays, as the PoolDO's row keeps it.
      for (const w of workers) w.view = { ...w.report(), lastPlacedAt: w.view.lastPlacedAt ?? 0 };
      lastHeartbeat = now;
    }
    return workers.map((w) => w.view);
  };
  const byView = (view: PoolWorker | undefined): number => workers.findIndex((w) => w.view === view);

  const place = (r: SimRequest, now: number): number => {
    if (config.policy === "round-robin") return roundRobin++ % workers.length;
    const chain = config.policy === "frontier" ? requestChain(r) : undefined;
    const prefix = chain?.[0];
    const placement = placeSession(views(now), { prefix, chain });
    if (!placement) throw new Error("no worker up");
    notePlacement(placement.worker, prefix, chain, now);
    if (placement.reason === "prefix") result.placedByPrefix++;
    else result.placedByLoad++;
    return byView(placement.worker);
  };

  const route = (r: SimRequest, now: number): { worker: number; sessionId: string } | "wait" => {
    const parentSession = r.parent >= 0 ? sessionOf[r.parent] : undefined;
    const parent = parentSession === undefined ? undefined : sessions.get(parentSession);
    if (config.policy === "frontier" && parentSession !== undefined && parent) {
      const state = { exists: true, busy: parent.busy, pendingToolUseIds: 0, turns: parent.turns };
      const engineFreeAt = workers[parent.worker]?.engineFreeAt ?? now;
      const running =
        parent.busy && parent.running ? runningTurnOf(r, parent.running, engineFreeAt, now, cost) : undefined;
      const decision = hintDecision(state, false, running);
      if (decision === "claim") return { worker: parent.worker, sessionId: parentSession };
      if (decision === "wait") {
        result.waits++;
        parent.followers.push(r);
        return "wait";
      }
      result.branches++;
      return { worker: parent.worker, sessionId: `s${newSessions++}` };
    }
    const sessionId = parentSession ?? `s${newSessions++}`;
    return { worker: place(r, now), sessionId };
  };

  const serve = (
    w: SimWorker,
    r: SimRequest,
    sessionId: string,
    arrival: number,
    ready: number,
    parkTokens: number,
  ) => {
    const session = w.session(sessionId, ready);
    let live = w.content.get(sessionId);
    let restoreTokens = parkTokens;
    if (!live) {
      const stored = w.sessionCheckpoint(sessionId, ready);
      if (stored) {
        live = stored;
        restoreTokens += stored.tokens;
        result.restores++;
      }
    } else {
      result.liveHits++;
    }
    const { blocks, withOutput } = liveReuse(live, r);
    let reused = blocks;
    let reusedOut = withOutput;
    // The disk rung's offer (a stored cold anchor) counts against the shared prefix, as in the real ladder.
    const stored = reused === 0 ? w.storedPrefix(r.prefixKeys, BLOCK_TOKENS, r.inputLength) : undefined;
    const copy = sharedPrefixCopy(w, r, sessionId, Math.max(reused, stored?.tokens ?? 0) + SHARED_MIN_TOKENS, ready);
    let copyMs = 0;
    if (copy) {
      if (copy.from === "live") {
        result.sharedFromLive++;
        copyMs = costMs(copy.movedTokens, cost.copyTokensPerSecond);
      } else {
        result.sharedFromCheckpoint++;
        restoreTokens += copy.movedTokens;
      }
      result.sharedTokens += copy.tokens;
      reused = copy.tokens;
      reusedOut = copy.tokens;
    } else if (stored) {
      w.touchCheckpoint(stored.id, ready);
      result.storedPrefixHits++;
      restoreTokens += stored.tokens;
      reused = stored.tokens;
      reusedOut = stored.tokens;
    }
    reused = Math.min(reused, r.inputLength);
    reusedOut = Math.min(Math.max(reusedOut, reused), r.inputLength);
    const prefill = r.inputLength - reused;
    const engineMs =
      costMs(restoreTokens, cost.restoreTokensPerSecond) + copyMs + costMs(prefill, cost.prefillTokensPerSecond);
    const begin = Math.max(ready, w.engineFreeAt);
    w.engineFreeAt = begin + engineMs;
    w.engineBusyMs += engineMs;
    const firstToken = begin + engineMs;
    result.ttftMs.push(firstToken - arrival);
    result.queueMs.push(ready - arrival);
    result.inputTokens += r.inputLength;
    result.reusedTokens += reused;
    result.reusedWithOutput += reusedOut;
    result.prefilledTokens += prefill;
    result.served++;
    w.requests++;
    w.advert.holdSession(SIM_TENANT, sessionId, requestChain(r));
    // A cold prefill of a long enough system prefix leaves an anchor at its end (one per worker).
    const anchorKey = r.prefixKeys[0];
    if (reused < BLOCK_TOKENS && anchorKey && BLOCK_TOKENS >= capacity.anchorMinTokens) {
      if (r.inputLength >= BLOCK_TOKENS && !w.hasStoredPrefix(anchorKey, BLOCK_TOKENS)) {
        const anchor = { tokens: BLOCK_TOKENS, blockKeys: [anchorKey], inputTokens: BLOCK_TOKENS };
        w.store("cold-anchor", "", `blocks:${anchorKey}`, anchor, ready, sessionId);
      }
    }
    const end = firstToken + costMs(r.outputLength, cost.decodeTokensPerSecond);
    const running = sessions.get(sessionId)?.running;
    if (running) running.endsAt = end;
    const kv: KvContent = {
      tokens: r.inputLength + r.outputLength,
      blockKeys: r.prefixKeys.slice(0, fullBlocks(r)),
      inputTokens: r.inputLength,
    };
    events.push(end, () => finish(w, session.sessionId, kv, end));
  };

  const finish = (w: SimWorker, sessionId: string, kv: KvContent, now: number) => {
    const session = w.sessions.get(sessionId);
    const info = sessions.get(sessionId);
    if (info) {
      info.busy = false;
      info.running = undefined;
      info.turns++;
    }
    if (session) {
      session.busy = false;
      session.lastUsed = now;
      session.frontier = simFrontier(kv.tokens);
      w.holdLive(sessionId, kv);
    }
    // Follow-ups queued behind this turn come first: the session keeps its sequence for them.
    for (const follower of info?.followers.splice(0) ?? []) arrive(follower, now);
    const waiter = w.waiters[0];
    if (waiter) {
      const parkTokens = w.tryAcquire(waiter.session, now);
      if (parkTokens !== undefined) {
        w.waiters.shift();
        waiter.start(parkTokens);
      }
    }
  };

  const arrive = (r: SimRequest, now: number) => {
    const routed = route(r, now);
    if (routed === "wait") return;
    const { worker, sessionId } = routed;
    sessionOf[r.index] = sessionId;
    const w = workers[worker];
    if (!w) throw new Error(`no worker ${worker}`);
    if (r.inputLength + r.outputLength > capacity.contextTokens) {
      result.refused++;
      return;
    }
    const session = w.session(sessionId, now);
    if (session.busy) {
      result.refused++;
      return;
    }
    session.busy = true;
    session.lastUsed = now;
    const known = sessions.get(sessionId);
    const running = { request: r, endsAt: undefined };
    sessions.set(sessionId, {
      worker,
      busy: true,
      turns: known?.turns ?? 0,
      running,
      followers: known?.followers ?? [],
    });
    // A follow-up that waited for its parent still counts its time from its own arrival.
    const start = (at: number) => (parkTokens: number) => serve(w, r, sessionId, r.timestamp, at, parkTokens);
    const parkTokens = w.tryAcquire(session, now);
    if (parkTokens !== undefined) return start(now)(parkTokens);
    if (w.waiters.length >= capacity.maxQueue) {
      session.busy = false;
      const info = sessions.get(sessionId);
      if (info) info.busy = false;
      if (!session.sequence) w.sessions.delete(sessionId);
      result.refused++;
      return;
    }
    w.waiters.push({ session, start: (parkTokens) => start(events.now)(parkTokens) });
  };

  for (const r of requests) events.push(r.timestamp, () => arrive(r, r.timestamp));
  events.run();
  result.durationMs = events.now;
  for (const w of workers) {
    result.perWorkerRequests.push(w.requests);
    result.perWorkerBusyMs.push(w.engineBusyMs);
    result.parks += w.parks;
    result.evictions += w.evictions;
    w.close();
  }
  return result;
}
