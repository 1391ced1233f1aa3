/**
 * `npm start`: the local stack on its embedded defaults — the edge in workerd on 127.0.0.1:8787,
 * GPU worker(s) on loopback, and the generated test model when FRONTIER_MODEL_PATH is not set.
 * WORKERS=n starts n workers: they register with the edge's pool (heartbeats) and share one
 * checkpoint directory (.state/checkpoints), so a session survives its worker dying or being
 * drained (`npm run drain -- worker-2`). Ctrl-C stops everything.
 */
import { join } from "node:path";
import { REPO_ROOT, startStack } from "./stack.ts";

const workers = Number(process.env.WORKERS ?? "1");
const edgePort = Number(process.env.FRONTIER_EDGE_PORT ?? "8787");

const stack = await startStack({
  workers,
  edgePort,
  edgeStateDir: join(REPO_ROOT, ".state/edge"),
  sharedCheckpointDir: workers > 1 ? join(REPO_ROOT, ".state/checkpoints") : undefined,
  verbose: true,
});
process.stdout.write(
  [
    "",
    `Frontier is up: ${stack.edgeUrl}`,
    `  workers: ${stack.workers.map((w) => `${w.grpcUrl} (gRPC) / ${w.httpUrl} (gRPC-Web)`).join(", ")}`,
    "  local API key: sk-frontier-local",
    ...(workers > 1
      ? [
          "  pool: workers heartbeat to the edge; shared checkpoints in .state/checkpoints",
          "  drain one: npm run drain -- worker-2   (list: npm run drain -- --list)",
        ]
      : []),
    `  try: curl ${stack.edgeUrl}/v1/messages -H 'x-api-key: sk-frontier-local' -H 'content-type: application/json' \\`,
    `        -d '{"model":"frontier-test","max_tokens":32,"messages":[{"role":"user","content":"Hello"}]}'`,
    "",
  ].join("\n"),
);
const shutdown = async (): Promise<void> => {
  await stack.stop();
  process.exit(0);
};
process.on("SIGINT", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
