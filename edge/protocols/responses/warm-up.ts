/**
 * A `generate: false` response.create over WebSocket (Codex sends one before its first turn): the
 * request is validated and its conversation remembered on the socket under a fresh response id, and
 * the response completes at once with no output. Nothing runs on a worker; the next turn names it
 * with `previous_response_id` and sends only what is new.
 */
import { mintId, newSessionId } from "../../../shared/ids.ts";
import { decodeConversation, type ResponsesContext } from "./adapter.ts";
import { newResponseObject } from "./response/response-object.ts";
import type { SocketMemory } from "./socket/socket-memory.ts";

/** The server events of a warm-up, as JSON text. */
export async function warmUp(
  json: Record<string, unknown>,
  rc: ResponsesContext,
  tenant: string,
  memory: SocketMemory,
): Promise<string[]> {
  const { body, items, pinned } = await decodeConversation({ ...json, stream: true }, rc, tenant, memory);
  // No session exists yet: the id names a fresh one that only this socket's memory knows.
  const id = await mintId(rc.config.idSecret, "resp", tenant, pinned?.sessionId ?? newSessionId());
  memory.remember(id, { items, sessionId: pinned?.sessionId });
  const response = newResponseObject(body, id, Math.floor(Date.now() / 1000));
  const created = JSON.stringify({ type: "response.created", sequence_number: 0, response });
  const completed = JSON.stringify({
    type: "response.completed",
    sequence_number: 1,
    response: {
      ...response,
      status: "completed",
      usage: {
        input_tokens: 0,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 0,
      },
    },
  });
  return [created, completed];
}
