/** Small helpers for talking to the local edge in tests. */
import { DEV_API_KEY } from "../../shared/dev-secrets.ts";

export const LOCAL_API_KEY = DEV_API_KEY;
/** A second tenant, configured only in the test stacks. */
export const OTHER_TENANT_API_KEY = "sk-frontier-test-other-tenant";
/** The workers' FRONTIER_METRICS_TOKEN in the test stacks. */
export const TEST_METRICS_TOKEN = "frontier-test-metrics-token";

export interface PostOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function postJson(url: string, body: unknown, options: PostOptions = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": LOCAL_API_KEY,
      "anthropic-version": "2023-06-01",
      ...options.headers,
    },
    body: JSON.stringify(body),
    signal: options.signal,
  });
}

export function randomHint(): string {
  return crypto.randomUUID();
}
