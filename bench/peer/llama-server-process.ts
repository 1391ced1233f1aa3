/**
 * llama.cpp's llama-server as the peer comparison runs it: started on the same GGUF with Frontier's
 * batch and slot count, the CPU features compiled into it, and whether both sides ran the same kernels.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { freePort, stopChild } from "../../scripts/stack.ts";
import { fileIdentity, kernelLibraries } from "./mapped-kernels.ts";

/** `slots` (default 2, Frontier's bench worker's sequences) each get `contextSize` KV cells. */
export async function startLlamaServer(
  binary: string,
  modelPath: string,
  contextSize: number,
  slots = 2,
): Promise<{ url: string; child: ChildProcess; log: string }> {
  const port = await freePort();
  const log = join(tmpdir(), `frontier-bench-llama-server-${port}.log`);
  const args = ["-m", modelPath, "--host", "127.0.0.1", "--port", String(port), "--parallel", String(slots)];
  args.push(
    "-c",
    String(contextSize * slots),
    "-t",
    "1",
    "-fa",
    "off",
    // The same batch as Frontier's engine (node-llama-cpp sets n_ubatch = n_batch = FRONTIER_BATCH_SIZE).
    "-b",
    batchSize(),
    "-ub",
    batchSize(),
    "-ngl",
    process.env.FRONTIER_GPU === "off" ? "0" : "999",
  );
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  const sink = createWriteStream(log);
  child.stdout?.pipe(sink);
  child.stderr?.pipe(sink);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}; see ${log}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { url, child, log };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stopChild(child);
  throw new Error(`llama-server not healthy within 120 s; see ${log}`);
}

export function batchSize(): string {
  return process.env.FRONTIER_BATCH_SIZE || "512";
}

/**
 * The CPU features compiled into llama-server, as describeEngineBuild lists them: from its
 * `system_info` line, which this llama.cpp prints only at log verbosity 4. A second process is
 * started for it (and stopped once the line is out, before the model loads), so the measured
 * server runs at its default verbosity.
 */
export async function llamaServerCpuFeatures(binary: string, modelPath: string): Promise<string> {
  const child = spawn(binary, ["-m", modelPath, "--port", String(await freePort()), "-t", "1", "-lv", "4"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    const line = await new Promise<string | undefined>((resolve) => {
      let text = "";
      const timer = setTimeout(() => resolve(undefined), 30_000);
      const onData = (chunk: Buffer) => {
        text += chunk.toString("utf8");
        const complete = text.split("\n").slice(0, -1); // lines whose newline arrived
        const found = complete.find((l) => l.includes("system_info:"));
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      child.on("exit", () => {
        clearTimeout(timer);
        resolve(text.split("\n").find((l) => l.includes("system_info:")));
      });
    });
    return line ? [...line.matchAll(/([A-Z][A-Z0-9_]*) = 1/g)].map((m) => m[1]).join(" ") : "not reported";
  } finally {
    await stopChild(child);
  }
}

interface KernelParity {
  equal: boolean;
  /** What the ratio table's row says about how (e.g. "same files: prebuilt sapphirerapids"). */
  how: string;
  /** The report's sentence. */
  line: string;
}

/**
 * Whether both sides ran the same kernels. Best evidence: both processes mapped the same CPU kernel
 * library file (llama-server built against node-llama-cpp's prebuilt libraries:
 * `scripts/build-llama-server.sh`, the default). Else a local (GGML_NATIVE) Frontier engine build
 * and the same CPU features compiled into llama-server, both from node-llama-cpp's bundled llama.cpp.
 */
export function kernelParity(
  engineBuild: string,
  serverFeatures: string,
  mapped: { worker: string[]; server: string[] },
): KernelParity {
  const workerKernels = kernelLibraries(mapped.worker);
  const serverKernels = kernelLibraries(mapped.server);
  const names = (paths: readonly string[]) => paths.map((p) => basename(p)).join(", ") || "none found";
  const ids = (paths: readonly string[]) => paths.map(fileIdentity).sort().join(" ");
  if (workerKernels.length > 0 && ids(workerKernels) === ids(serverKernels)) {
    const serverIds = new Set(mapped.server.map(fileIdentity));
    const shared = mapped.worker.filter((p) => serverIds.has(fileIdentity(p)));
    return {
      equal: true,
      how: `same files: ${names(workerKernels)}`,
      line: `Equal kernels: both processes mapped the same llama.cpp library files (${names(shared)}; the same inodes in \`/proc/PID/maps\`).`,
    };
  }
  const features = /; ([^)]*)\)$/.exec(engineBuild)?.[1] ?? "";
  if (engineBuild.startsWith("local") && features === serverFeatures) {
    return {
      equal: true,
      how: "local build both sides",
      line: "Equal kernels: both builds report the same CPU features, from the same llama.cpp source.",
    };
  }
  return {
    equal: false,
    how: `Frontier ${names(workerKernels)} vs llama-server ${names(serverKernels)}`,
    line: `**Not equal kernels**: Frontier (${engineBuild}) mapped ${names(workerKernels)}, llama-server ${names(serverKernels)} (CPU features ${serverFeatures}). Build llama-server with \`scripts/build-llama-server.sh\` (prebuilt kernels) for the prebuilt engine, or \`--kernels native\` after \`npm run build:engine\`.`,
  };
}
