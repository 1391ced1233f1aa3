/**
 * Checkpoints replicated through a real S3-compatible server (s3rver over loopback sockets): two
 * stores with different local directories and one bucket behave like workers on two hosts.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { S3Client } from "../../gpu-worker/checkpoints/replica/s3-client.ts";
import { S3CheckpointReplica } from "../../gpu-worker/checkpoints/replica/s3-replica.ts";
import {
  CheckpointKeyError,
  type CheckpointMeta,
  CorruptCheckpointError,
} from "../../gpu-worker/checkpoints/store/types.ts";
import { S3_CREDENTIALS, startS3, type TestS3 } from "../support/s3-server.ts";
import { syntheticState, tokensOf } from "../support/synthetic-kv-state.ts";
import { testDataKey } from "../support/test-data-key.ts";
import { StoreFixture } from "../unit/checkpoints/fixture.ts";
import { plainHashesIn } from "../unit/checkpoints/plain-text-hashes.ts";

let s3: TestS3;
let client: S3Client;
const fixtures: StoreFixture[] = [];
const PREFIX = "test/";

beforeAll(async () => {
  s3 = await startS3();
  client = new S3Client({ url: s3.url, ...S3_CREDENTIALS });
});
afterAll(async () => {
  await s3?.stop();
});
afterEach(() => {
  for (const fx of fixtures.splice(0)) fx.dispose();
});

/** A store ("a host") with its own directory, replicating to the shared bucket. */
function host(modelIdentity = "model-a"): StoreFixture {
  const replica = new S3CheckpointReplica({ url: s3.url, ...S3_CREDENTIALS, prefix: PREFIX, maxAgeMs: 3_600_000 });
  const fx = new StoreFixture({ replica, modelIdentity });
  fixtures.push(fx);
  return fx;
}

/** Share the written state bytes so `fx.load` can check what another host wrote. */
function knows(reader: StoreFixture, writer: StoreFixture): void {
  for (const [id, state] of writer.states) reader.states.set(id, state);
}

async function until(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const shortHash = (value: string) => createHash("sha256").update(value).digest("hex").slice(0, 32);
const blobKey = (tenant: string, id: string) => `${PREFIX}blob/${shortHash(tenant)}/${id}.state`;
const remoteKeys = async () => (await client.list(PREFIX)).objects.map((o) => o.key);

describe("checkpoints replicated to S3", () => {
  it("a checkpoint one host writes is found after refresh and loaded by another, bytes verified", async () => {
    const a = host();
    const b = host();
    const meta = await a.write({
      sessionId: "s1",
      reason: "tool-frontier",
      toolUseIds: ["t1", "t2"],
      text: "turn one",
    });
    expect(b.store.findBySession("tenant-a", "s1")).toBeUndefined();
    expect(await b.store.refresh("tenant-a", "s1")).toBe(1);
    expect(await b.store.refresh("tenant-a", "s1")).toBe(0);
    expect(b.store.findBySession("tenant-a", "s1")?.id).toBe(meta.id);
    expect(b.store.findByToolUseIds("tenant-a", ["t2", "t1"])?.id).toBe(meta.id);
    expect(existsSync(b.statePath(meta.id))).toBe(false);
    knows(b, a);
    const payload = await b.load(meta);
    expect(payload.text).toBe("turn one");
    expect(existsSync(b.statePath(meta.id))).toBe(true);
    expect((await b.load(meta)).text).toBe("turn one"); // from the local cache now
  });

  it("shared prefixes are found by text on another host; a newer session checkpoint replaces the older everywhere", async () => {
    const a = host();
    const b = host();
    const anchor = await a.write({ reason: "cold-anchor", text: "system prompt|" });
    const first = await a.write({
      sessionId: "s2",
      reason: "tool-frontier",
      toolUseIds: ["x"],
      text: "system prompt|1",
    });
    await b.store.refresh("tenant-a", "s2");
    expect(b.store.findLongestPrefix(testDataKey("tenant-a"), "system prompt|other")?.id).toBe(anchor.id);
    expect(b.store.findBySession("tenant-a", "s2")?.id).toBe(first.id);
    const second = await a.write({
      sessionId: "s2",
      reason: "tool-frontier",
      toolUseIds: ["y"],
      text: "system prompt|12",
    });
    expect(await until(async () => !(await remoteKeys()).some((k) => k.includes(first.id)))).toBe(true);
    await b.store.refresh("tenant-a", "s2");
    expect(b.store.findBySession("tenant-a", "s2")?.id).toBe(second.id);
    expect(b.store.findByToolUseIds("tenant-a", ["x"])).toBeUndefined(); // pruned: gone remotely
  });

  it("another tenant never sees it, and another model identity never matches", async () => {
    const a = host();
    const b = host();
    const other = host("model-b");
    await a.write({ sessionId: "s3", reason: "parked", toolUseIds: ["t"], text: "private text" });
    expect(await b.store.refresh("tenant-b", "s3")).toBe(0);
    expect(b.store.findBySession("tenant-b", "s3")).toBeUndefined();
    expect(b.store.findLongestPrefix(testDataKey("tenant-b"), "private text and more")).toBeUndefined();
    expect(await other.store.refresh("tenant-a", "s3")).toBe(0);
    expect(other.store.findBySession("tenant-a", "s3")).toBeUndefined();
    expect(other.store.findByToolUseIds("tenant-a", ["t"])).toBeUndefined();
  });

  it("a corrupted remote blob is rejected before the engine sees it and removed from the bucket", async () => {
    const a = host();
    const b = host();
    const meta = await a.write({ sessionId: "s4", reason: "tool-frontier", text: "will be damaged" });
    await client.put(blobKey("tenant-a", meta.id), new Uint8Array(randomBytes(256)));
    await b.store.refresh("tenant-a", "s4");
    const found = b.store.findBySession("tenant-a", "s4");
    expect(found?.id).toBe(meta.id);
    let engineRead = false;
    const loading = b.store.load(found!, testDataKey("tenant-a"), async () => {
      engineRead = true;
    });
    await expect(loading).rejects.toMatchObject({ name: CorruptCheckpointError.name, kind: "checksum" });
    expect(engineRead).toBe(false);
    expect(b.store.findBySession("tenant-a", "s4")).toBeUndefined();
    expect(existsSync(b.statePath(meta.id))).toBe(false);
    expect(await until(async () => !(await remoteKeys()).some((k) => k.includes(meta.id)))).toBe(true);
    const c = host();
    await c.store.refresh("tenant-a", "s4");
    expect(c.store.findBySession("tenant-a", "s4")).toBeUndefined();
  });

  it("remove deletes the remote copy; eviction frees local files only", async () => {
    const a = host();
    const gone = await a.write({ sessionId: "s5", reason: "shutdown", text: "forget me" });
    a.store.remove(gone.id);
    expect(await until(async () => !(await remoteKeys()).some((k) => k.includes(gone.id)))).toBe(true);

    const small = new StoreFixture({
      replica: new S3CheckpointReplica({ url: s3.url, ...S3_CREDENTIALS, prefix: PREFIX, maxAgeMs: 3_600_000 }),
      budgetBytes: 600,
    });
    fixtures.push(small);
    const old = await small.write({ sessionId: "s6", reason: "periodic", text: "evicted", stateBytes: 400 });
    await small.write({ sessionId: "s7", reason: "periodic", text: "kept", stateBytes: 400 });
    expect(existsSync(small.statePath(old.id))).toBe(false);
    expect(small.store.findLongestPrefix(testDataKey("tenant-a"), "evicted!")?.id).toBe(old.id);
    expect((await small.load(old)).text).toBe("evicted"); // downloaded again
  });
});

describe("chained checkpoints in S3 (each KV chunk stored once)", () => {
  /** A checkpoint of the first `n` synthetic tokens on `fx`, extending `base`. */
  const chained = (fx: StoreFixture, n: number, base?: CheckpointMeta) =>
    fx.store.write(
      {
        tenant: "tenant-a",
        key: testDataKey("tenant-a"),
        sessionId: base ? "chain-s" : "",
        reason: base ? "tool-frontier" : "cold-anchor",
        toolUseIds: [`c-${n}`],
        payload: { text: "y".repeat(n), tokens: tokensOf(n), extra: null },
        ...(base ? { extends: base.id } : {}),
      },
      async (path) => writeFileSync(path, syntheticState(tokensOf(n))),
    );
  const blobSize = async (tenant: string, id: string) => (await client.get(blobKey(tenant, id)))?.length;

  it("upload only their own chunk, load whole on another host, and keep a chunk while a chain links it", async () => {
    const a = host();
    const b = host();
    const anchor = await chained(a, 400);
    const one = await chained(a, 440, anchor);
    const two = await chained(a, 480, one);
    expect(two.chain.map((l) => l.id)).toEqual([anchor.id, one.id]);
    const anchorBlob = (await blobSize("tenant-a", anchor.id)) ?? 0;
    expect((await blobSize("tenant-a", two.id)) ?? Number.POSITIVE_INFINITY).toBeLessThan(anchorBlob / 4);
    // `one` was replaced by `two`: its metadata goes, its chunk stays (two's chain links it).
    expect(await until(async () => !(await remoteKeys()).some((k) => k.includes(one.id) && k.includes("/meta/")))).toBe(
      true,
    );
    expect(await blobSize("tenant-a", one.id)).toBeGreaterThan(0);

    await b.store.refresh("tenant-a", "chain-s");
    const found = b.store.findBySession("tenant-a", "chain-s");
    expect(found?.id).toBe(two.id);
    let state = Buffer.alloc(0);
    await b.store.load(found ?? two, testDataKey("tenant-a"), async (path) => {
      state = readFileSync(path);
    });
    expect(state.equals(syntheticState(tokensOf(480)))).toBe(true);

    // The session ends: its chunks go remotely once nothing links them; the anchor stays.
    b.store.remove(two.id);
    expect(await until(async () => (await blobSize("tenant-a", one.id)) === undefined)).toBe(true);
    expect(await until(async () => (await blobSize("tenant-a", two.id)) === undefined)).toBe(true);
    expect(await blobSize("tenant-a", anchor.id)).toBe(anchorBlob);
  });
});

describe("checkpoints at rest are sealed under the tenant's data key (local disk and S3)", () => {
  const payloadKey = (tenant: string, id: string) => `${PREFIX}blob/${shortHash(tenant)}/${id}.payload`;
  /** Bytes that would show up in any plaintext copy: the prompt text, the KV state, the token ids. */
  const PROMPT = "SECRET-PROMPT-of-tenant-a: the quarterly numbers are 4242 and 1717. ";

  it("disk and bucket hold ciphertext only; chained restores and replication still work; a wrong key is a clean miss", async () => {
    const a = host();
    const b = host();
    const sealedWrite = (n: number, base?: CheckpointMeta) =>
      a.store.write(
        {
          tenant: "tenant-a",
          key: testDataKey("tenant-a"),
          sessionId: base ? "sealed-s" : "",
          reason: base ? "tool-frontier" : "cold-anchor",
          toolUseIds: [`sealed-${n}`],
          payload: { text: PROMPT.repeat(n / 40), tokens: tokensOf(n), extra: { note: PROMPT } },
          ...(base ? { extends: base.id } : {}),
        },
        async (path) => writeFileSync(path, syntheticState(tokensOf(n))),
      );
    const anchor = await sealedWrite(400);
    const turn = await sealedWrite(480, anchor);
    expect(turn.chain.map((l) => l.id)).toEqual([anchor.id]); // still a chain: only its chunk was written

    // What a plaintext copy would contain: the prompt, the token ids as the engine's i32 array, KV rows.
    const plainState = syntheticState(tokensOf(480));
    const tokenBytes = Buffer.from(new Int32Array(tokensOf(480).slice(400, 440)).buffer);
    const needles = [Buffer.from(PROMPT.slice(0, 24)), tokenBytes, plainState.subarray(4096, 4160)];
    const stored = [
      readFileSync(a.statePath(anchor.id)),
      readFileSync(a.statePath(turn.id)),
      readFileSync(a.payloadPath(anchor.id)),
      readFileSync(a.payloadPath(turn.id)),
    ];
    const remote = await Promise.all([
      client.get(blobKey("tenant-a", anchor.id)),
      client.get(blobKey("tenant-a", turn.id)),
      client.get(payloadKey("tenant-a", anchor.id)),
      client.get(payloadKey("tenant-a", turn.id)),
    ]);
    for (const bytes of [...stored, ...remote.map((r) => Buffer.from(r ?? new Uint8Array()))]) {
      expect(bytes.length).toBeGreaterThan(76);
      for (const needle of needles) expect(bytes.includes(needle)).toBe(false);
    }
    // The replica copies the sealed bytes as written: no key is needed to replicate.
    expect(Buffer.from(remote[1] ?? new Uint8Array()).equals(stored[1] ?? Buffer.alloc(0))).toBe(true);

    await b.store.refresh("tenant-a", "sealed-s");
    const found = b.store.findBySession("tenant-a", "sealed-s");
    expect(found?.id).toBe(turn.id);
    // Another host with a wrong key: a key miss before the engine reads, and nothing is deleted.
    let engineRead = false;
    await expect(
      b.store.load(found ?? turn, testDataKey("tenant-a", "another deployment"), async () => {
        engineRead = true;
      }),
    ).rejects.toBeInstanceOf(CheckpointKeyError);
    expect(engineRead).toBe(false);
    expect(b.store.findBySession("tenant-a", "sealed-s")?.id).toBe(turn.id);
    expect(await client.get(blobKey("tenant-a", turn.id))).toBeDefined();
    // With the tenant's key the chain assembles to exactly the state the engine dumped.
    let state = Buffer.alloc(0);
    const payload = await b.store.load(found ?? turn, testDataKey("tenant-a"), async (path) => {
      state = readFileSync(path);
    });
    expect(state.equals(plainState)).toBe(true);
    expect(payload.extra).toEqual({ note: PROMPT });
  });

  it("neither index nor bucket (names or metadata) holds a plain hash of any prefix of the prompt; only the tenant's key finds it", async () => {
    const a = host();
    const b = host();
    const text = PROMPT.repeat(2);
    const anchor = await a.write({ text: PROMPT, reason: "cold-anchor" });
    const turn = await a.write({ text, reason: "tool-frontier", sessionId: "keyed-s", toolUseIds: ["keyed-t"] });
    await b.store.refresh("tenant-a", "keyed-s");
    expect(b.store.findBySession("tenant-a", "keyed-s")?.id).toBe(turn.id);
    // On the other host the imported rows answer a prefix lookup under the tenant's key only.
    expect(b.store.findLongestPrefix(testDataKey("tenant-a"), `${text}more`)?.id).toBe(turn.id);
    expect(b.store.findLongestPrefix(testDataKey("tenant-a"), `${PROMPT}other`)?.id).toBe(anchor.id);
    const foreign = { tenant: "tenant-a", bytes: testDataKey("tenant-b").bytes };
    expect(b.store.findLongestPrefix(foreign, `${text}more`)).toBeUndefined();
    expect(b.store.findLongestPrefix(testDataKey("tenant-a", "rotated"), `${text}more`)).toBeUndefined();

    const keys = await remoteKeys();
    const metadata = await Promise.all(keys.filter((k) => k.endsWith(".json")).map((k) => client.get(k)));
    expect(metadata.length).toBeGreaterThanOrEqual(2);
    const index = (fx: StoreFixture) =>
      ["index.sqlite", "index.sqlite-wal"]
        .map((f) => `${fx.dir}/${f}`)
        .filter((f) => existsSync(f))
        .map((f) => readFileSync(f));
    const everything = [
      Buffer.from(keys.join("\n")),
      ...metadata.map((m) => Buffer.from(m ?? new Uint8Array())),
      ...index(a),
      ...index(b),
    ];
    for (const bytes of everything) expect(plainHashesIn(bytes, text)).toBe(0);

    // Metadata of the old version (keyed by a plain SHA-256 of the text) is never imported.
    const legacy = { version: 1, ...turn, id: "ab".repeat(16), sessionId: "legacy-s", checksum: "x" };
    const plainHash = createHash("sha256").update(text, "utf16le").digest("hex");
    const legacyKey = `${PREFIX}meta/${shortHash("tenant-a")}/s-${shortHash("legacy-s")}/${legacy.id}.json`;
    await client.put(
      legacyKey,
      Buffer.from(JSON.stringify({ ...legacy, textHash: plainHash })),
      AbortSignal.timeout(5_000),
    );
    const c = host();
    await c.store.refresh("tenant-a", "legacy-s");
    expect(c.store.findLongestPrefix(testDataKey("tenant-a"), `${PROMPT}other`)?.id).toBe(anchor.id); // refreshed
    expect(c.store.findBySession("tenant-a", "legacy-s")).toBeUndefined(); // the legacy row was not imported
    for (const bytes of index(c)) expect(plainHashesIn(bytes, text)).toBe(0);
  });
});
