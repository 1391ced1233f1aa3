/**
 * The victim of the checkpoint crash tests: a process that writes tool-frontier checkpoints of one
 * session into a store until it is killed. `pause` stops for good halfway through the fourth state
 * file (so a SIGKILL lands mid-write); `loop` writes without pausing (the kill lands anywhere).
 * Prints `committed <i>` after each write resolved and `mid-state` when it pauses.
 * `chain-pause` / `chain-loop` do the same with chained checkpoints: an anchor of 256 tokens, then
 * turn i holds 256 + 64(i+1) tokens, extends the previous one and stores only its chunk (the whole
 * state is dumped into `<scratch>`, the pause lands halfway through that dump).
 * Usage: node --import tsx checkpoint-writer-child.ts <dir> <pause|loop|chain-pause|chain-loop> [scratch]
 */
import { appendFile, writeFile } from "node:fs/promises";
import { CheckpointStore } from "../../gpu-worker/checkpoints/store/checkpoint-store.ts";
import type { CheckpointMeta } from "../../gpu-worker/checkpoints/store/types.ts";
import { syntheticState, tokensOf } from "./synthetic-kv-state.ts";
import { testDataKey } from "./test-data-key.ts";

const [dir, mode, scratchDir] = process.argv.slice(2);
const modes = ["pause", "loop", "chain-pause", "chain-loop"];
if (!dir || !mode || !modes.includes(mode)) throw new Error("usage: <dir> <pause|loop|chain-pause|chain-loop>");
const store = CheckpointStore.open({
  dir,
  budgetBytes: 1 << 30,
  modelIdentity: "model-a",
  ...(scratchDir ? { scratchDir } : {}),
});

async function halfThenRest(path: string, state: Buffer, pause: boolean): Promise<void> {
  const half = state.length >> 1;
  await writeFile(path, state.subarray(0, half));
  if (pause) {
    process.stdout.write("mid-state\n");
    await new Promise(() => {});
  }
  await appendFile(path, state.subarray(half));
}

if (mode.startsWith("chain")) {
  const anchorTokens = tokensOf(256);
  let base: CheckpointMeta = await store.write(
    {
      tenant: "tenant-a",
      key: testDataKey("tenant-a"),
      sessionId: "",
      reason: "cold-anchor",
      toolUseIds: [],
      payload: { text: "x".repeat(256), tokens: anchorTokens, extra: null },
    },
    async (path) => writeFile(path, syntheticState(anchorTokens)),
  );
  for (let i = 0; ; i++) {
    const n = 256 + 64 * (i + 1);
    base = await store.write(
      {
        tenant: "tenant-a",
        key: testDataKey("tenant-a"),
        sessionId: "s1",
        reason: "tool-frontier",
        toolUseIds: [`id-${i}`],
        payload: { text: `turn ${i}`.padEnd(n, "x"), tokens: tokensOf(n), extra: { i } },
        extends: base.id,
      },
      (path) => halfThenRest(path, syntheticState(tokensOf(n)), mode === "chain-pause" && i === 3),
    );
    process.stdout.write(`committed ${i}\n`);
  }
}

for (let i = 0; ; i++) {
  // 1 MiB of the byte i: the parent checks a loaded file against it.
  const state = Buffer.alloc(1 << 20, i & 0xff);
  await store.write(
    {
      tenant: "tenant-a",
      key: testDataKey("tenant-a"),
      sessionId: "s1",
      reason: "tool-frontier",
      toolUseIds: [`id-${i}`],
      payload: { text: `turn ${i}`, tokens: [i], extra: { i } },
    },
    async (path) => {
      const half = state.length / 2;
      await writeFile(path, state.subarray(0, half));
      if (mode === "pause" && i === 3) {
        process.stdout.write("mid-state\n");
        await new Promise(() => {});
      }
      await appendFile(path, state.subarray(half));
    },
  );
  process.stdout.write(`committed ${i}\n`);
}
