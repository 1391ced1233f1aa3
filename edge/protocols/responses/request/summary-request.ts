/**
 * A turn that writes a compaction summary (POST /v1/responses/compact, or a /v1/responses request
 * whose input ends with `compaction_trigger`): the conversation exactly as /v1/responses renders it
 * (same instructions and tools, so a live session continues from its KV and prefills only what
 * follows), then one user message asking for the summary, with no tool callable and plain text out.
 */
import type { InputItem, ResponsesRequest } from "./types.ts";

/** What the model is asked, after the conversation. */
export const SUMMARY_REQUEST =
  "Compact the conversation above. Write a summary that will replace it as your only memory of it: " +
  "the user's goals and constraints, what was decided and done (tool calls, commands, files and their " +
  "results that still matter), the current state, and what remains to do next. Keep names, paths and " +
  "numbers exact. Reply with the summary only.";

/** The summary's output budget when the request names none. */
export const SUMMARY_MAX_OUTPUT_TOKENS = 2048;

export function withSummaryRequest(
  body: ResponsesRequest,
  items: readonly InputItem[],
): { body: ResponsesRequest; items: InputItem[] } {
  return {
    body: {
      ...body,
      tool_choice: "none",
      text_format: { type: "text" },
      max_output_tokens: body.max_output_tokens ?? SUMMARY_MAX_OUTPUT_TOKENS,
    },
    items: [...items, { type: "message", role: "user", text: SUMMARY_REQUEST }],
  };
}
