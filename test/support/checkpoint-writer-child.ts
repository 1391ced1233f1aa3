/**
 * The victim of the checkpoint crash tests: a process that writes tool-frontier checkpoints of one
 * session into a store until it is killed. `pause` stops for good halfway through the fourth state
 * file (so a SIGKILL lands mid-write); `loop` writes without pausing (the kill lands anywhere).
 * Prints `committed <i>` after each write resolved and `mid-state` when it pauses.
 * Usage: node --import tsx checkpoint-writer-child.ts <dir> <pause|loop>
 */
import { appendFile, writeFile } from "node:fs/promises";
import { CheckpointStore } from "../../gpu-worker/checkpoints/checkpoint-store.ts";

const [dir, mode] = process.argv.slice(2);
if (!dir || (mode !== "pause" && mode !== "loop")) throw new Error("usage: <dir> <pause|loop>");
const store = CheckpointStore.open({ dir, budgetBytes: 1 << 30, modelIdentity: "model-a" });

for (let i = 0; ; i++) {
  // 1 MiB of the byte i: the parent checks a loaded file against it.
  const state = Buffer.alloc(1 << 20, i & 0xff);
  await store.write(
    {
      tenant: "tenant-a",
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
