/** What the Gemini API's workerd tests share: a Gemini client call, a shell-tool worker, the response shapes. */
import { env, exports } from "cloudflare:workers";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, installFakeWorker } from "./fake-worker.ts";
import { LOCAL_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";

export const SHELL = {
  functionDeclarations: [
    {
      name: "run_shell_command",
      parametersJsonSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
  ],
};

export interface GeminiInit {
  method?: string;
  key?: string | null;
  query?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export function gemini(path: string, init: GeminiInit = {}): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  const key = init.key === undefined ? LOCAL_KEY : init.key;
  if (key !== null) headers["x-goog-api-key"] = key;
  const body =
    init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body);
  if (body !== undefined) headers["content-type"] = "application/json";
  const url = `http://edge.test/v1beta/${path}${init.query ?? ""}`;
  return exports.default.fetch(new Request(url, { method: init.method ?? (body ? "POST" : "GET"), headers, body }));
}

/** A worker whose first turn on a session calls the shell tool twice, and whose later turns answer. */
export function callsThenText() {
  const turns = new Map<string, number>();
  return installFakeWorker(async function* ({ request }) {
    const n = turns.get(request.sessionId) ?? 0;
    turns.set(request.sessionId, n + 1);
    const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
    yield event({
      case: "prompt",
      value: {
        promptTokens: 50,
        cachedTokens: n * 40,
        messageId,
        decision: n ? CacheDecision.LIVE_TOOL_IDS : CacheDecision.COLD,
      },
    });
    if (n === 0) {
      for (const [index, command] of ["echo one", "echo two"].entries()) {
        const id = await mintId(SECRET, "call", request.tenantId, request.sessionId);
        yield event({ case: "toolCallStart", value: { index, id, name: "run_shell_command" } });
        yield event({ case: "toolCallDelta", value: { index, argumentsJson: JSON.stringify({ command }) } });
        yield event({ case: "toolCallEnd", value: { index } });
      }
      yield event({
        case: "stop",
        value: { reason: StopReason.TOOL_USE, usage: { inputTokens: 50, outputTokens: 8 } },
      });
    } else {
      yield event({ case: "textDelta", value: { text: "done" } });
      yield event({
        case: "stop",
        value: { reason: StopReason.END_TURN, usage: { inputTokens: 10, cachedTokens: 40, outputTokens: 1 } },
      });
    }
  });
}

export interface GeminiResponse {
  candidates: { content: { parts: Record<string, unknown>[] }; finishReason?: string }[];
  usageMetadata?: { promptTokenCount: number; cachedContentTokenCount?: number; totalTokenCount: number };
  responseId: string;
}

export const sseChunks = (text: string) =>
  text
    .split("\r\n\r\n")
    .map((e) => e.trim())
    .filter((e) => e.startsWith("data: "))
    .map((e) => JSON.parse(e.slice(6)) as GeminiResponse);
