/** The checkpoint envelope: AES-256-GCM per-file keys wrapped by the tenant's data key. */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  openBuffer,
  openFile,
  SealedFileDamagedError,
  sealBuffer,
  sealedSize,
  sealFile,
  WrongDataKeyError,
} from "../../../gpu-worker/checkpoints/state/sealed-file.ts";
import { testDataKey } from "../../support/test-data-key.ts";

const key = testDataKey("tenant-a");
const state = { checkpointId: "a".repeat(32), role: "state" } as const;
const MiB = 1 << 20;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), "frontier-sealed-"));
  dirs.push(dir);
  return dir;
}

async function sealed(plain: Buffer): Promise<{ dir: string; path: string }> {
  const dir = temp();
  writeFileSync(join(dir, "plain"), plain);
  const written = await sealFile(key, state, join(dir, "plain"), join(dir, "sealed"));
  expect(written.bytes).toBe(sealedSize(plain.length));
  return { dir, path: join(dir, "sealed") };
}

async function opened(path: string, with_ = key, context = state): Promise<Buffer> {
  const out = join(temp(), "out");
  await openFile(with_, context, path, out);
  return readFileSync(out);
}

describe("sealed checkpoint files", () => {
  it("round trip: files of 0 bytes, one segment boundary and several 8-segment blocks; buffers too", async () => {
    for (const size of [0, 1, MiB, MiB + 1, 8 * MiB, 17 * MiB + 5]) {
      const plain = randomBytes(size);
      const { path } = await sealed(plain);
      expect((await opened(path)).equals(plain)).toBe(true);
      const buffer = sealBuffer(key, { ...state, role: "payload" }, plain);
      expect(buffer.equals(readFileSync(path))).toBe(false); // a fresh DEK and nonce every time
      expect(openBuffer(key, { ...state, role: "payload" }, buffer).equals(plain)).toBe(true);
    }
  });

  it("holds no plaintext: a recognisable plain pattern is not in the sealed bytes", async () => {
    const marker = Buffer.from("frontier-plain-kv-marker:");
    const plain = Buffer.concat(Array.from({ length: 40_000 }, () => marker));
    const bytes = readFileSync((await sealed(plain)).path);
    expect(bytes.includes(marker)).toBe(false);
    expect(bytes.includes(marker.subarray(0, 12))).toBe(false);
  });

  it("a wrong key, another tenant, checkpoint or role is a WrongDataKeyError and writes nothing", async () => {
    const { path } = await sealed(randomBytes(3 * MiB));
    const attempts = [
      [testDataKey("tenant-a", "rotated"), state],
      [{ tenant: "tenant-b", bytes: key.bytes }, state],
      [key, { ...state, checkpointId: "b".repeat(32) }],
      [key, { ...state, role: "payload" as const }],
    ] as const;
    for (const [k, context] of attempts) {
      const out = join(temp(), "out");
      await expect(openFile(k, context, path, out)).rejects.toBeInstanceOf(WrongDataKeyError);
      expect(() => readFileSync(out)).toThrow(/ENOENT/);
    }
    expect(() => openBuffer(testDataKey("x"), state, sealBuffer(key, state, Buffer.from("hi")))).toThrow(
      WrongDataKeyError,
    );
  });

  it("tampered, truncated, extended or reordered bodies are SealedFileDamagedError", async () => {
    const plain = randomBytes(3 * MiB);
    const { path } = await sealed(plain);
    const good = readFileSync(path);
    const segment = MiB + 16;
    const header = good.length - 3 * segment;
    const flipped = Buffer.from(good);
    flipped[header + MiB + 100] = flipped[header + MiB + 100]! ^ 1;
    const swapped = Buffer.concat([
      good.subarray(0, header),
      good.subarray(header + segment, header + 2 * segment),
      good.subarray(header, header + segment),
      good.subarray(header + 2 * segment),
    ]);
    const variants = [
      flipped,
      good.subarray(0, good.length - segment), // a whole segment cut
      good.subarray(0, good.length - 1), // one byte cut
      good.subarray(0, 40), // inside the header
      Buffer.concat([good, Buffer.alloc(16)]),
      swapped,
    ];
    for (const bytes of variants) {
      writeFileSync(path, bytes);
      await expect(opened(path)).rejects.toBeInstanceOf(SealedFileDamagedError);
      expect(() => openBuffer(key, state, bytes)).toThrow(SealedFileDamagedError);
    }
  });

  it("an altered header (its plain length) does not open: it reads as a wrong key", async () => {
    const { path } = await sealed(randomBytes(1000));
    const bytes = readFileSync(path);
    bytes.writeUInt32LE(999, 8);
    writeFileSync(path, bytes);
    await expect(opened(path)).rejects.toBeInstanceOf(WrongDataKeyError);
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => sealBuffer({ tenant: "t", bytes: Buffer.alloc(16) }, state, Buffer.from("x"))).toThrow(
      WrongDataKeyError,
    );
  });
});
