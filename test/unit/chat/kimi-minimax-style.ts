/** How the Kimi K2 and MiniMax M2 templates are given a conversation, shared by the template and token tests. */
import type { Conversation } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { TemplateStyle } from "./template-render.ts";

/** What a Kimi API client would have been given: `functions.NAME:IDX`, IDX counting every call of the history. */
export function kimiStyle(c: Conversation): TemplateStyle {
  const ids = new Map<string, string>();
  for (const m of c.messages)
    for (const b of m.content)
      if (b.block.case === "toolUse") ids.set(b.block.value.id, `functions.${b.block.value.name}:${ids.size}`);
  return { callId: (id) => ids.get(id) ?? id };
}

/**
 * llama.cpp's copy of MiniMax M2's template (Unsloth's fixes) writes a newline between a turn's
 * `</minimax:tool_call>` and its `[e~[` that MiniMax's own template does not write: Unsloth put a
 * comment between `{{- toolcall_end_token}}` and the `{%- set …` that strips the newline in the
 * original. Frontier writes MiniMax's own bytes; this turns them into the copy's (the tools section
 * of the system turn, which also ends in `</minimax:tool_call>[e~[`, is the same in both).
 */
export function asLlamaCppMiniMax(text: string): string {
  const header = text.indexOf("[e~[\n") + "[e~[\n".length;
  return (
    text.slice(0, header) + text.slice(header).replaceAll("</minimax:tool_call>[e~[", "</minimax:tool_call>\n[e~[")
  );
}
