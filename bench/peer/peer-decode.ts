/**
 * Decode alone, Frontier's engine against llama-server, in one run: the same GGUF (mid), the same
 * `--context`-token prompt already in the KV on both sides, `--tokens` greedy tokens under the same
 * lowercase-ASCII grammar (llama-server's chat parser refuses the random model's raw bytes), one
 * thread each, alternating `--reps` times. Frontier's side is the engine in this process
 * (native/engine-sequence.ts `generate`: what a worker turn decodes with); llama-server's is its own
 * `timings.predicted_per_token_ms` from `/completion` (slot 0, prompt cached after the first call).
 * The kernels both processes mapped are compared by file identity (bench/peer/mapped-kernels.ts). Each
 * side's CPU time over its decodes (`/proc/PID/stat`) against their wall time says how much of a
 * decode the process spent off the CPU (waiting between threads rather than computing).
 *   `tsx bench/peer/peer-decode.ts [--llama-server .llama-server/llama-server-prebuilt] [--context 5000] [--tokens 200] [--reps 8]`
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createEngine } from "../../native/engine.ts";
import { GREEDY } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { freePort, stopChild } from "../../scripts/stack.ts";
import { fmt, median, spread } from "../stats.ts";
import { fileIdentity, kernelLibraries, mappedLlamaLibraries } from "./mapped-kernels.ts";

const { values } = parseArgs({
  options: {
    "llama-server": { type: "string", default: ".llama-server/llama-server-prebuilt" },
    context: { type: "string", default: "5000" },
    tokens: { type: "string", default: "200" },
    reps: { type: "string", default: "8" },
  },
});
const depth = Number(values.context);
const tokens = Number(values.tokens);
const reps = Number(values.reps);
const GRAMMAR = "root ::= [a-z ]+";
const modelPath = await ensureTestModel("mid");
// Deterministic token ids inside the vocabulary (2048), away from the control tokens at its start.
const prompt = Array.from({ length: depth }, (_, i) => ((i * 7919) % 2000) + 10);

const server = await startLlamaServer(values["llama-server"] ?? "", depth + tokens + 64);
const engine = await createEngine({
  modelPath,
  contextSize: depth + tokens + 64,
  sequences: 2,
  threads: 1,
  gpu: false,
  flashAttention: false,
  batchSize: 512,
});
try {
  const sequence = await engine.acquireSequence();
  await sequence.append(prompt);
  await serverDecode(); // prefills slot 0; later calls reuse its cache
  const frontier: number[] = [];
  const llamaServer: number[] = [];
  const busy = { frontier: { cpu: 0, wall: 0 }, llamaServer: { cpu: 0, wall: 0 } };
  for (let rep = 0; rep < reps; rep++) {
    const cpu0 = cpuMs(process.pid);
    const wall0 = performance.now();
    // The first sampled token comes from the prompt's logits: per-token time is over the rest.
    let count = 0;
    let first = 0;
    for await (const _ of sequence.generate({ ...GREEDY, grammar: GRAMMAR, maxTokens: tokens })) {
      if (count++ === 0) first = performance.now();
    }
    frontier.push((performance.now() - first) / Math.max(1, count - 1));
    busy.frontier.cpu += cpuMs(process.pid) - cpu0;
    busy.frontier.wall += performance.now() - wall0;
    await sequence.truncate(depth);
    const serverCpu0 = cpuMs(server.child.pid);
    const serverWall0 = performance.now();
    llamaServer.push(await serverDecode());
    busy.llamaServer.cpu += cpuMs(server.child.pid) - serverCpu0;
    busy.llamaServer.wall += performance.now() - serverWall0;
  }
  const share = (b: { cpu: number; wall: number }) => `${fmt((100 * b.cpu) / b.wall, 0)}% of a core busy`;
  const ours = kernelLibraries(mappedLlamaLibraries(process.pid)).map(fileIdentity);
  const theirs = kernelLibraries(mappedLlamaLibraries(server.child.pid)).map(fileIdentity);
  const same = ours.length > 0 && ours.join() === theirs.join();
  process.stdout.write(
    [
      `decode at depth ${depth}, ${tokens} tokens, ${reps} alternating reps, mid model, 1 thread, grammar ${GRAMMAR}`,
      `kernels: ${same ? "the same files" : `DIFFERENT (${ours.join(",")} vs ${theirs.join(",")})`}`,
      `Frontier engine  ${fmt(median(frontier), 2)} ms/token (${spread(frontier)}); ${share(busy.frontier)}`,
      `llama-server     ${fmt(median(llamaServer), 2)} ms/token (${spread(llamaServer)}); ${share(busy.llamaServer)}`,
      `llama-server / Frontier time per token: ${fmt(median(llamaServer) / median(frontier), 2)}x`,
      "",
    ].join("\n"),
  );
} finally {
  await engine.dispose();
  await stopChild(server.child);
}

/** CPU time (user + system) of process `pid` so far, ms (Linux clock ticks of 10 ms). */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** One `/completion` from the cached prompt: llama-server's own ms per decoded token. */
async function serverDecode(): Promise<number> {
  const response = await fetch(`${server.url}/completion`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      prompt,
      n_predict: tokens,
      temperature: 0,
      ignore_eos: true,
      cache_prompt: true,
      id_slot: 0,
      grammar: GRAMMAR,
    }),
  });
  const body = (await response.json()) as { timings?: { predicted_per_token_ms: number } };
  if (!body.timings) throw new Error(`llama-server answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.timings.predicted_per_token_ms;
}

async function startLlamaServer(binary: string, contextSize: number): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const args = ["-m", modelPath, "--host", "127.0.0.1", "--port", String(port), "--parallel", "2"];
  args.push("-c", String(contextSize * 2), "-t", "1", "-fa", "off", "-b", "512", "-ub", "512", "-ngl", "0");
  const child = spawn(binary, args, { stdio: ["ignore", "ignore", "ignore"] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null)
      throw new Error(`${binary} exited with ${child.exitCode} (build it: scripts/build-llama-server.sh)`);
    try {
      if ((await fetch(`${url}/health`)).ok) return { url, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGKILL");
  throw new Error(`${binary} did not become healthy in 60 s`);
}
