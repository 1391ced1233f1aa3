/**
 * What a chat format lets a request change, read off the format itself: whether the request's
 * thinking setting changes the prompt (the format opens a thinking block when thinking is on and
 * renders its no-thinking form when off) and how many tool calls one generation can make. The
 * worker's Health answer carries them, and the edge's model catalog (Codex's /models) is built from it.
 */
import { create } from "@bufbuild/protobuf";
import {
  ConversationSchema,
  Role,
  type Thinking,
  ThinkingMode,
  ThinkingSchema,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { ChatFormat } from "./types.ts";

export interface FormatCapabilities {
  chatFormat: string;
  thinkingToggle: boolean;
  maxCallsPerTurn: number;
}

function probePrompt(format: ChatFormat, thinking: Thinking): string {
  const conversation = create(ConversationSchema, {
    messages: [{ role: Role.USER, content: [{ block: { case: "text", value: { text: "hello" } } }] }],
    thinking,
  });
  return format.render(conversation).text;
}

export function formatCapabilities(format: ChatFormat): FormatCapabilities {
  const on = probePrompt(format, create(ThinkingSchema, { mode: ThinkingMode.ENABLED, budgetTokens: 4096 }));
  const off = probePrompt(format, create(ThinkingSchema, { mode: ThinkingMode.DISABLED }));
  return { chatFormat: format.name, thinkingToggle: on !== off, maxCallsPerTurn: format.maxCallsPerTurn };
}
