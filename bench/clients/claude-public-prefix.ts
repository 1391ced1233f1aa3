/**
 * Issue 45: Claude Code's first turn for a tenant that never ran it, with the operator's public
 * prefix registered. `npx tsx bench/clients/claude-public-prefix.ts` (tiny model, one worker):
 *  1. captures the real Claude Code's first request twice (two users: other HOME and folder) against a
 *     recording server, and registers what their rendered prompts share (scripts/public-prefix.ts);
 *  2. starts the stack with FRONTIER_PUBLIC_PREFIXES set and the test-only scripted policy;
 *  3. runs Claude Code's Bash loop: tenant A's first conversation (nothing on the worker: a cold
 *     prefill, the public prefix's state saved on the way), A's second conversation in the same
 *     folder with another task (its own first conversation's prefix: shared-prefix), then tenants B
 *     and C, who never ran Claude Code: they restore the public prefix instead of prefilling it.
 * Prints, per tenant, the main request's decision, prompt, reused and prefilled tokens and the
 * worker's time to first token. Claude Code runs with CLAUDE_CODE_DISABLE_AUTO_MEMORY=1: with its
 * auto memory on, its system prompt names the user's memory folder (home and project path) 3.6k
 * characters in, and only what comes before that is the same for every user.
 * Leaves the worker's log and every request body Claude Code sent (through a recording proxy in
 * front of the edge) in a folder under $TMPDIR, whose path it prints.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publicPrefixEntry, workerFormat } from "../../scripts/public-prefix.ts";
import { REPO_ROOT, startStack } from "../../scripts/stack.ts";
import { DEV_API_KEY } from "../../shared/dev-secrets.ts";
import { runCli } from "../../test/support/cli-client.ts";

const CLAUDE = join(REPO_ROOT, "node_modules", ".bin", "claude");
const TENANTS = [
  { tenant: "tenant-a", key: DEV_API_KEY },
  { tenant: "tenant-b", key: "sk-frontier-bench-tenant-b" },
  { tenant: "tenant-c", key: "sk-frontier-bench-tenant-c" },
];

/** The runs, in order: each tenant's conversations, in one folder per tenant. */
const RUNS = [
  { tenant: 0, task: "Run the two echo commands, then say you are done." },
  { tenant: 0, task: "Run the two echo commands again, then say you are finished." },
  { tenant: 1, task: "Run the two echo commands, then say you are done." },
  { tenant: 2, task: "Run the two echo commands, then say you are done." },
];

function claudeEnv(baseUrl: string, key: string, home: string): Record<string, string> {
  return {
    HOME: home,
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: key,
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_DISABLE_AUTO_MEMORY: "1",
  };
}

/** A user's home and project folder. */
function userDirs(): { home: string; work: string; remove: () => void } {
  const home = mkdtempSync(join(tmpdir(), "frontier-pp-home-"));
  const work = mkdtempSync(join(tmpdir(), "frontier-pp-work-"));
  const remove = () => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  };
  return { home, work, remove };
}

async function runClaude(
  baseUrl: string,
  key: string,
  args: string[],
  dirs: { home: string; work: string },
): Promise<void> {
  await runCli(CLAUDE, args, { cwd: dirs.work, env: claudeEnv(baseUrl, key, dirs.home), timeoutMs: 600_000 });
}

/** Claude Code's main first request (its first with tools), as a user in a fresh home sends it. */
async function captureFirstRequest(): Promise<unknown> {
  const bodies: { tools?: unknown[] }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      if (req.method === "POST") bodies.push(JSON.parse(body) as { tools?: unknown[] });
      res.writeHead(400, { "content-type": "application/json", "x-should-retry": "false" });
      res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "recorded" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const dirs = userDirs();
  try {
    await runClaude(`http://127.0.0.1:${port}`, "sk-capture", ["-p", "hello", "--allowedTools", "Bash"], dirs);
  } finally {
    server.close();
    dirs.remove();
  }
  // Its first attempt: after the recorded errors Claude Code 2.1.332 falls back to another request
  // (21 tools listed in full instead of 12 with deferred tool search) that a server which answers never sees.
  const main = bodies.find((b) => (b.tools?.length ?? 0) > 0);
  if (!main) throw new Error("Claude Code sent no request");
  return main;
}

/** A pass-through proxy to `target` that keeps every POST body it forwards, in order. */
async function recordingProxy(target: string): Promise<{ url: string; bodies: string[]; close: () => void }> {
  const bodies: string[] = [];
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.method === "POST") bodies.push(body.toString());
      const forward = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => server.close() };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The main session's first turn in the worker's "turn finished" lines since `from`: the largest prompt. */
function firstTurn(lines: readonly string[]): Record<string, string> | undefined {
  const turns = lines
    .filter((l) => l.includes(" turn finished "))
    .map((l) => Object.fromEntries([...l.matchAll(/ (\w+)=(\S+)/g)].map((m) => [m[1] ?? "", m[2] ?? ""])));
  const bySession = new Map<string, Record<string, string>>();
  for (const t of turns) if (!bySession.has(t.session ?? "")) bySession.set(t.session ?? "", t);
  return [...bySession.values()].sort((a, b) => Number(b.prompt) - Number(a.prompt))[0];
}

async function main(): Promise<void> {
  console.log("capturing Claude Code's first request as two users …");
  const captures = [await captureFirstRequest(), await captureFirstRequest()];
  const format = await workerFormat({});
  const { entry, text } = publicPrefixEntry(format, captures, "claude-code");
  console.log(`public prefix: ${text.length} characters of the rendered header (${format.name}); ${entry}`);
  const state = mkdtempSync(join(tmpdir(), "frontier-pp-stack-"));
  const stack = await startStack({
    workers: 1,
    edgeStateDir: state,
    workerEnv: {
      FRONTIER_CONTEXT_SIZE: "65536",
      FRONTIER_SEQUENCES: "4",
      FRONTIER_STATE_DIR: join(state, "worker"),
      FRONTIER_TEST_POLICY: "scripted-tools",
      FRONTIER_PUBLIC_PREFIXES: entry,
    },
    edgeVars: { API_KEYS: JSON.stringify(Object.fromEntries(TENANTS.map((t) => [sha256(t.key), t.tenant]))) },
  });
  const rows: string[] = [];
  const dirs = TENANTS.map(() => userDirs());
  const dump = mkdtempSync(join(tmpdir(), "frontier-pp-dump-"));
  const proxy = await recordingProxy(stack.edgeUrl);
  try {
    const logs = stack.workers[0]?.logs ?? [];
    for (const [n, run] of RUNS.entries()) {
      const who = TENANTS[run.tenant];
      if (!who) throw new Error(`no tenant ${run.tenant}`);
      const { tenant, key } = who;
      const from = logs.length;
      const sent = proxy.bodies.length;
      const args = ["-p", run.task, "--allowedTools", "Bash", "--max-turns", "4"];
      await runClaude(proxy.url, key, args, dirs[run.tenant] ?? userDirs());
      writeFileSync(join(dump, `run-${n + 1}-${tenant}.requests.json`), `[${proxy.bodies.slice(sent).join(",\n")}]\n`);
      const t = firstTurn(logs.slice(from));
      if (n === 0 && !logs.some((l) => l.includes(" public prefix saved "))) {
        console.log(
          "warning: the first cold prefill saved no public prefix: the registration does not match the request",
        );
      }
      const prompt = Number(t?.prompt ?? 0);
      const cached = Number(t?.cached ?? 0);
      const conversation = RUNS.slice(0, n + 1).filter((r) => r.tenant === run.tenant).length;
      rows.push(
        `| ${tenant} | ${conversation} | ${t?.decision ?? "?"} | ${prompt} | ${cached} | ${prompt - cached} | ${t?.first_token_ms ?? "?"} | ${t?.prefill_ms ?? "?"} |`,
      );
      console.log(rows.at(-1));
    }
  } finally {
    proxy.close();
    await stack.stop();
    writeFileSync(join(dump, "worker.log"), `${(stack.workers[0]?.logs ?? []).join("\n")}\n`);
    console.log(`worker log and Claude Code's requests: ${dump}`);
    for (const d of dirs) d.remove();
    rmSync(state, { recursive: true, force: true });
  }
  console.log(
    [
      "",
      "| tenant | its conversation | first turn's decision | prompt tokens | reused | prefilled | worker TTFT ms | prefill ms |",
      "|---|---|---|---|---|---|---|---|",
      ...rows,
    ].join("\n"),
  );
}

await main();
