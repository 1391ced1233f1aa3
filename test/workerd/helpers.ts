import { exports } from "cloudflare:workers";

export const LOCAL_KEY = "sk-frontier-local";
export const OTHER_KEY = "sk-test-other";

export interface CallOptions {
  method?: string;
  key?: string | null;
  bearer?: boolean;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Call the edge Worker (same isolate) like a client would. */
export function call(path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? LOCAL_KEY : options.key;
  if (key !== null) {
    if (options.bearer) headers.authorization = `Bearer ${key}`;
    else headers["x-api-key"] = key;
  }
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  return exports.default.fetch(
    new Request(`http://edge.test${path}`, { method: options.method ?? "GET", headers, body }),
  );
}

export interface ErrorBody {
  type: string;
  error: { type: string; message: string };
  request_id: string;
}

/** A minimal valid Messages request body. */
export function messagesBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "frontier-test", max_tokens: 16, messages: [{ role: "user", content: "hi" }], ...extra };
}

/**
 * A heartbeat body of an idle worker (4 free sequences, nothing queued, resident or draining) in the
 * `local` region, with `fields` (its id, url, …) on top.
 */
export function idleWorkerReport(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    region: "local",
    boot: "boot1",
    model_identity: "m",
    sequences_total: 4,
    sequences_free: 4,
    queue_depth: 0,
    active_requests: 0,
    resident_sessions: 0,
    prefixes: [],
    draining: false,
    leaving: false,
    ...fields,
  };
}
