export {};
import { appendFileSync } from "node:fs";
import { startStack } from "./scripts/stack.ts";
const stack = await startStack({
  workers: 1,
  edgePort: 18787,
  edgeStateDir: "/tmp/clients-cap/edge-state",
  workerEnv: {
    FRONTIER_CONTEXT_SIZE: "65536",
    FRONTIER_SEQUENCES: "4",
    FRONTIER_STATE_DIR: "/tmp/clients-cap/edge-state/worker",
    FRONTIER_TEST_POLICY: "scripted-tools",
  },
});
const w = stack.workers[0]!;
appendFileSync("/tmp/clients-cap/worker.log", `${w.logs.join("\n")}\n`);
w.process.stderr?.on("data", (c: Buffer) => appendFileSync("/tmp/clients-cap/worker.log", c));
console.log("UP", stack.edgeUrl);
process.on("SIGTERM", async () => { await stack.stop(); process.exit(0); });
