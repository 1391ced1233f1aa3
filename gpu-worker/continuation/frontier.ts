import type { Message } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

/**
 * What a session remembers about the point its KV stops at, recorded when a turn completes.
 * The IDs name the frontier; the digests let a request prove, cheaply, that it still agrees with
 * the history the KV holds.
 */
export interface Frontier {
  /** The exact text whose tokens the KV holds (prompt + sampled output). */
  text: string;
  /** KV length when recorded; a different length means the KV moved and the frontier is stale. */
  tokenCount: number;
  /** IDs of the tool calls of the last assistant turn (empty when it made none). */
  toolUseIds: readonly string[];
  /** The request's messages before the sampled turn (used to expand a tool-results-only request). */
  messages: readonly Message[];
  messageDigests: readonly string[];
  headerDigest: string;
}
