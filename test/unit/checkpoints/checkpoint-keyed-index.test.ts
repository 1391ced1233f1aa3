/**
 * The checkpoint index is keyed per tenant (issue 30): its file holds no plain hash of any prefix of
 * a prompt, another key finds nothing for the same text, an index of the old (unkeyed) schema is
 * dropped on open, and without a key nothing is looked up or written.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RenderedPrompt } from "../../../gpu-worker/chat/types.ts";
import type { ResidentSession } from "../../../gpu-worker/checkpoints/checkpointed-session.ts";
import { SessionCheckpoints } from "../../../gpu-worker/checkpoints/session-checkpoints.ts";
import type { Frontier } from "../../../gpu-worker/continuation/frontier.ts";
import { WorkerMetrics } from "../../../gpu-worker/metrics/worker-metrics.ts";
import type { EngineSequence } from "../../../native/engine-types.ts";
import { testDataKey } from "../../support/test-data-key.ts";
import { StoreFixture } from "./fixture.ts";
import { plainHashesIn, plainPrefixHashes } from "./plain-text-hashes.ts";

const SYSTEM = "<sys>You are tenant A's agent. Internal codename: BLUE-HERON-7.</sys>";
const PROMPT = `${SYSTEM}<u>does my prompt start with this? quarterly numbers 4242</u>`;

let fx: StoreFixture;
beforeEach(() => {
  fx = new StoreFixture();
});
afterEach(() => fx.dispose());

/** The index database as a thief would copy it: the main file and its write-ahead log. */
function indexBytes(dir: string): Buffer {
  const files = ["index.sqlite", "index.sqlite-wal"].map((f) => join(dir, f)).filter((f) => existsSync(f));
  return Buffer.concat(files.map((f) => readFileSync(f)));
}

describe("keyed checkpoint index", () => {
  it("the index file holds no plain SHA-256 of any prefix of the prompt", async () => {
    await fx.write({ text: SYSTEM, reason: "cold-anchor" });
    await fx.write({ text: PROMPT, reason: "tool-frontier", sessionId: "s1", toolUseIds: ["toolu_1"] });
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), `${PROMPT}<a>`)?.textLength).toBe(PROMPT.length);
    expect(plainHashesIn(indexBytes(fx.dir), PROMPT)).toBe(0);
    fx.reopen();
    expect(plainHashesIn(indexBytes(fx.dir), PROMPT)).toBe(0);
  });

  it("another tenant's key, or a rotated key, finds nothing for the same text", async () => {
    const mine = await fx.write({ text: PROMPT, reason: "cold-anchor" });
    const request = `${PROMPT}<a>answer</a>`;
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), request)?.id).toBe(mine.id);
    // Tenant B's key bytes presented for tenant A's rows: the keyed hashes differ, nothing matches.
    const foreign = { tenant: "tenant-a", bytes: testDataKey("tenant-b").bytes };
    expect(fx.store.findLongestPrefix(foreign, request)).toBeUndefined();
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a", "rotated"), request)).toBeUndefined();
    expect(fx.store.findLongestPrefix(testDataKey("tenant-b"), request)).toBeUndefined();
    // The checkpoint is still there for its own key.
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), request)?.id).toBe(mine.id);
  });

  it("an index of the old schema (plain text hashes) is dropped on open, its pages and files gone", async () => {
    const old = await fx.write({ text: PROMPT, reason: "tool-frontier", sessionId: "s1", toolUseIds: ["t"] });
    fx.store.close();
    // Rewrite it as schema 3 wrote it: the row keyed by the plain SHA-256 of its text.
    const plain = plainPrefixHashes(PROMPT);
    const plainHex = plain[plain.length - 5]?.toString() ?? "";
    const db = new Database(join(fx.dir, "index.sqlite"));
    db.prepare("UPDATE checkpoints SET text_hash = ? WHERE id = ?").run(plainHex, old.id);
    db.pragma("user_version = 3");
    db.close();
    expect(plainHashesIn(indexBytes(fx.dir), PROMPT)).toBeGreaterThan(0);

    fx.open();
    expect(fx.store.stats().count).toBe(0);
    expect(fx.store.findBySession("tenant-a", "s1")).toBeUndefined();
    expect(existsSync(fx.statePath(old.id))).toBe(false);
    expect(existsSync(fx.payloadPath(old.id))).toBe(false);
    expect(plainHashesIn(indexBytes(fx.dir), PROMPT)).toBe(0);
    // The store works on: a new checkpoint of the same text is keyed and found.
    const fresh = await fx.write({ text: PROMPT, reason: "cold-anchor" });
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), `${PROMPT}!`)?.id).toBe(fresh.id);
  });
});

describe("without the tenant's key", () => {
  const rendered = (text: string): RenderedPrompt =>
    ({
      segments: [{ text, special: false }],
      text,
      messageOffsets: [SYSTEM.length],
      generationPrefixStart: text.length,
      generationPrefill: "",
      thinkingOpen: false,
    }) as RenderedPrompt;

  /** A sequence that records what the checkpoint code asked of it. */
  function recordingSequence(): EngineSequence & { calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      tokens: [1, 2, 3],
      loadState: async () => void calls.push("loadState"),
      saveState: async () => void calls.push("saveState"),
      truncate: async () => void calls.push("truncate"),
    } as unknown as EngineSequence & { calls: string[] };
  }

  it("a prefix lookup is a clean checkpoint-key miss: nothing is loaded, the sequence untouched", async () => {
    await fx.write({ text: SYSTEM, reason: "cold-anchor" });
    const checkpoints = new SessionCheckpoints(fx.store, { anchorMinTokens: 1 }, () => {});
    const sequence = recordingSequence();
    const tokenize = async () => [7];
    const owner = { tenant: "tenant-a", dataKey: undefined };
    expect(await checkpoints.restorePrefix(owner, rendered(PROMPT), sequence, 0, tokenize)).toBe("wrong-key");
    expect(sequence.calls).toEqual([]);
    expect(await checkpoints.anchors.anchorFor(owner, rendered(PROMPT), tokenize)).toBeUndefined();
    // With the key the same lookup restores the anchor.
    const keyed = { tenant: "tenant-a", dataKey: testDataKey("tenant-a") };
    const restored = await checkpoints.restorePrefix(keyed, rendered(PROMPT), sequence, 0, tokenize);
    expect(restored).toMatchObject({ keep: SYSTEM.length, tokenCount: SYSTEM.length });
    expect(sequence.calls).toEqual(["loadState"]);
  });

  it("a session checkpoint (parking, shutdown, tool frontier) is skipped and counted, never written", async () => {
    const checkpoints = new SessionCheckpoints(fx.store, { anchorMinTokens: 1 }, () => {});
    const sequence = recordingSequence();
    const session: ResidentSession = {
      tenant: "tenant-a",
      sessionId: "s-keyless",
      dataKey: undefined,
      sequence,
      busy: false,
      frontier: { text: PROMPT, toolUseIds: ["toolu_1"], messages: [] } as unknown as Frontier,
      saving: undefined,
    };
    let released = 0;
    expect(await checkpoints.save(session, "parked", () => released++)).toBeUndefined();
    expect(await checkpoints.save(session, "shutdown")).toBeUndefined();
    expect(await checkpoints.save(session, "tool-frontier")).toBeUndefined();
    expect(released).toBe(1);
    expect(sequence.calls).toEqual([]);
    expect(checkpoints.skippedWithoutKey()).toEqual({ parked: 1, shutdown: 1, "tool-frontier": 1 });
    expect(fx.store.stats().count).toBe(0);
    const metrics = new WorkerMetrics({ modelName: "m", contextSize: 4096 }, () => ({
      running: 0,
      waiting: 0,
      residentSessions: 0,
      parkedSessions: 0,
      kvTokens: 0,
      kvCapacity: 1,
      checkpoints: fx.store.stats(),
      checkpointsSkippedWithoutKey: checkpoints.skippedWithoutKey(),
    }));
    const { body } = await metrics.scrape();
    expect(body).toMatch(/^frontier:checkpoint_skipped_total\{reason="parked"[^}]*\} 1$/m);
    expect(plainHashesIn(indexBytes(fx.dir), PROMPT)).toBe(0);
  });
});
