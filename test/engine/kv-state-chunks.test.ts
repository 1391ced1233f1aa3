/**
 * The KV state chunker against real llama.cpp state files (tiny model, V transposed and not):
 * a state cut into chunks at earlier token counts and assembled again is byte for byte the state the
 * engine dumps at the end, loads into a sequence, and continues exactly like the live one; only the
 * added cells are in a chunk; a damaged chunk is detected while assembling.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { assembleState, ChunkChecksumError, sliceState } from "../../gpu-worker/checkpoints/state/kv-state-chunks.ts";
import { createEngine } from "../../native/engine.ts";
import { type Engine, type EngineSequence, GREEDY } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";

const dir = mkdtempSync(join(tmpdir(), "frontier-kv-chunks-"));
const engines: Engine[] = [];
afterAll(async () => {
  for (const e of engines) await e.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function greedy(sequence: EngineSequence, n: number): Promise<number[]> {
  const out: number[] = [];
  for await (const token of sequence.generate({ ...GREEDY, maxTokens: n })) out.push(token);
  return out;
}

const check = (path: string) => {
  const bytes = readFileSync(path);
  return { crc: crc32(bytes), bytes: bytes.length };
};

describe.each([false, true])("KV state chunks (flash attention %s)", (flashAttention) => {
  it("assemble into the state the engine dumps, which continues exactly like the live sequence", async () => {
    const engine = await createEngine({
      modelPath: await ensureTestModel("tiny"),
      contextSize: 1024,
      sequences: 2,
      threads: 1,
      gpu: false,
      flashAttention,
      batchSize: 128,
    });
    engines.push(engine);
    const tag = `fa-${flashAttention}`;
    const live = await engine.acquireSequence();
    const cuts = [0, 150, 220, 301];
    const prompt = Array.from({ length: 301 }, (_, i) => (i * 37 + 11) % 400);
    const fulls: string[] = [];
    for (let c = 1; c < cuts.length; c++) {
      await live.append(prompt.slice(cuts[c - 1], cuts[c]));
      const path = join(dir, `${tag}-full-${c}.state`);
      await live.saveState(path);
      fulls.push(path);
    }
    const chunks: string[] = [];
    for (let c = 1; c < cuts.length; c++) {
      const path = join(dir, `${tag}-chunk-${c}.state`);
      const sliced = await sliceState(fulls[c - 1] ?? "", cuts[c - 1] ?? 0, path);
      expect(sliced.cells).toBe((cuts[c] ?? 0) - (cuts[c - 1] ?? 0));
      chunks.push(path);
    }
    // A chunk of 81 cells is about 81/301 of the whole state: only the added cells are in it.
    const last = statSync(chunks[2] ?? "").size / statSync(fulls[2] ?? "").size;
    expect(last).toBeGreaterThan(0.2);
    expect(last).toBeLessThan(0.35);
    const assembled = join(dir, `${tag}-assembled.state`);
    await assembleState(chunks, chunks.map(check), assembled);
    expect(readFileSync(assembled).equals(readFileSync(fulls[2] ?? ""))).toBe(true);

    const restored = await engine.acquireSequence();
    await restored.loadState(assembled, prompt);
    expect(await greedy(restored, 12)).toEqual(await greedy(live, 12));
    live.dispose();
    restored.dispose();
  });

  it("reject a chunk that fails its checksum", async () => {
    const tag = `fa-${flashAttention}`;
    const chunks = [1, 2, 3].map((c) => join(dir, `${tag}-chunk-${c}.state`));
    const checks = chunks.map(check);
    const damaged = readFileSync(chunks[1] ?? "");
    const at = damaged.length >> 1;
    damaged[at] = (damaged[at] ?? 0) ^ 0xff;
    writeFileSync(chunks[1] ?? "", damaged);
    await expect(assembleState(chunks, checks, join(dir, `${tag}-bad.state`))).rejects.toBeInstanceOf(
      ChunkChecksumError,
    );
  });
});
