/**
 * Helpers for the multi-worker integration test: a two-worker stack (pooled, one shared checkpoint
 * directory), a tool-loop conversation driver, and lookups in the workers' logs.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Stack, startStack, startWorker, type WorkerHandle } from "../../scripts/stack.ts";
import { LOCAL_API_KEY, OTHER_TENANT_API_KEY, postJson } from "./api.ts";

export const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";

export interface PoolStack {
  stack: Stack;
  stateDir: string;
  workerEnv: Record<string, string>;
}

export async function startPoolStack(): Promise<PoolStack> {
  const stateDir = mkdtempSync(join(tmpdir(), "frontier-pool-"));
  const hash = async (key: string) =>
    Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))).toString("hex");
  const workerEnv = {
    FRONTIER_CONTEXT_SIZE: "8192",
    FRONTIER_SEQUENCES: "8",
    FRONTIER_ANCHOR_MIN_TOKENS: "64",
    FRONTIER_STATE_DIR: join(stateDir, "worker"),
  };
  const stack = await startStack({
    // Workers are killed on purpose here; the test watches the pool react, not the stack restart them.
    supervise: false,
    workers: 2,
    edgeStateDir: join(stateDir, "edge"),
    sharedCheckpointDir: join(stateDir, "checkpoints"),
    workerEnv,
    edgeVars: {
      API_KEYS: JSON.stringify({ [await hash(LOCAL_API_KEY)]: "local", [await hash(OTHER_TENANT_API_KEY)]: "other" }),
    },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  return { stack, stateDir, workerEnv };
}

/** Start a worker again under an existing id (it registers under its new URL). */
export function restartWorker(pool: PoolStack, id: string): Promise<WorkerHandle> {
  return startWorker({
    ...pool.workerEnv,
    FRONTIER_WORKER_ID: id,
    FRONTIER_CHECKPOINT_DIR: join(pool.stateDir, "checkpoints"),
    FRONTIER_EDGE_URL: pool.stack.edgeUrl,
    FRONTIER_HEARTBEAT_MS: "500",
  });
}

export const tool = {
  name: "lookup",
  description: "Look a word up in the dictionary and return its definition.",
  input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};

export interface Block {
  type: string;
  id?: string;
}

export interface TurnResult {
  status: number;
  requestId: string;
  route: string;
  cache: string;
  content: Block[];
  stopReason?: string;
  error?: { type: string; message: string };
}

/** One conversation of a tool loop: every turn replays the history and answers the last tool calls. */
export class ToolLoop {
  readonly messages: { role: string; content: unknown }[];

  constructor(
    readonly system: string,
    first: string,
  ) {
    this.messages = [{ role: "user", content: first }];
  }

  /** The tool_use ids of the last assistant turn. */
  get pending(): string[] {
    const last = this.messages.at(-1);
    if (last?.role !== "assistant") return [];
    return (last.content as Block[]).filter((b) => b.type === "tool_use").map((b) => b.id ?? "");
  }

  /** Send the next turn (answering pending tool calls first); on success, append the answer. */
  async turn(edgeUrl: string, options: { onlyResults?: boolean; apiKey?: string } = {}): Promise<TurnResult> {
    const pending = this.pending;
    if (pending.length > 0) {
      this.messages.push({
        role: "user",
        content: pending.map((id) => ({ type: "tool_result", tool_use_id: id, content: `definition ${id.slice(-4)}` })),
      });
    }
    const messages = options.onlyResults ? this.messages.slice(-1) : this.messages;
    const body = {
      model: "m",
      max_tokens: 400,
      system: this.system,
      tools: [tool],
      tool_choice: { type: "any" },
      messages,
    };
    const res = await postRetryingSocket(`${edgeUrl}/v1/messages`, body, {
      headers: options.apiKey ? { "x-api-key": options.apiKey } : {},
    });
    const json = (await res.json()) as {
      content?: Block[];
      stop_reason?: string;
      error?: { type: string; message: string };
    };
    const result: TurnResult = {
      status: res.status,
      requestId: res.headers.get("request-id") ?? "",
      route: res.headers.get("x-frontier-route") ?? "",
      cache: res.headers.get("x-frontier-cache") ?? "",
      content: json.content ?? [],
      stopReason: json.stop_reason,
      error: json.error,
    };
    if (res.status === 200) this.messages.push({ role: "assistant", content: result.content });
    else if (pending.length > 0) this.messages.pop();
    return result;
  }
}

/**
 * POST, retried once when the connection was closed under the request (an idle keep-alive
 * connection the edge closed as the client reused it: the request never reached the edge).
 */
async function postRetryingSocket(
  url: string,
  body: unknown,
  options: Parameters<typeof postJson>[2],
): Promise<Response> {
  try {
    return await postJson(url, body, options);
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== "UND_ERR_SOCKET") throw error;
    return postJson(url, body, options);
  }
}

/** The worker whose log mentions this request id (waits briefly for the log line to arrive). */
export async function workerOf(workers: readonly WorkerHandle[], requestId: string): Promise<WorkerHandle | undefined> {
  for (let i = 0; i < 100; i++) {
    const found = workers.find((w) => w.logs.some((l) => l.includes(`request=${requestId}`)));
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

/** Log lines of one worker that mention `needle` and match `pattern`. */
export function logLines(worker: WorkerHandle, needle: string, pattern: RegExp): string[] {
  return worker.logs.filter((l) => l.includes(needle) && pattern.test(l));
}

export async function until(check: () => boolean | Promise<boolean>, attempts = 200, ms = 100): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, ms));
  }
  return false;
}

export async function adminWorkers(
  edgeUrl: string,
): Promise<{ id: string; url: string; state: string; prefixes: string[]; pending: number }[]> {
  const res = await fetch(`${edgeUrl}/admin/workers`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const body = (await res.json()) as {
    regions: { workers: { id: string; url: string; state: string; prefixes: string[]; pending: number }[] }[];
  };
  return body.regions.flatMap((r) => r.workers);
}
