/**
 * `npm start`: the local stack on its embedded defaults — the edge in workerd on 127.0.0.1:8787,
 * GPU worker(s) on loopback, and the generated test model when FRONTIER_MODEL_PATH is not set.
 * WORKERS=n starts n workers. Ctrl-C stops everything.
 */
import { join } from "node:path";
import { REPO_ROOT, startStack } from "./stack.ts";

const workers = Number(process.env.WORKERS ?? "1");
const edgePort = Number(process.env.FRONTIER_EDGE_PORT ?? "8787");

const stack = await startStack({
  workers,
  edgePort,
  edgeStateDir: join(REPO_ROOT, ".state/edge"),
  verbose: true,
});
process.stdout.write(
  [
    "",
    `Frontier is up: ${stack.edgeUrl}`,
    `  workers: ${stack.workers.map((w) => `${w.grpcUrl} (gRPC) / ${w.httpUrl} (gRPC-Web)`).join(", ")}`,
    "  local API key: sk-frontier-local",
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
