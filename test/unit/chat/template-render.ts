/**
 * Renders a Frontier conversation with a model's real chat template (the fixtures in
 * native/model/chat-templates/, rendered by @huggingface/jinja), so tests can compare it byte for
 * byte with Frontier's own rendering.
 */
import { readFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";
import { type Conversation, Role, ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

export type TemplateName =
  | "qwen3"
  | "qwen3-coder"
  | "qwen3-coder-llama.cpp"
  | "qwen3.5"
  | "gpt-oss"
  | "glm"
  | "glm-4.5"
  | "glm-4.7"
  | "deepseek-v3.1"
  | "kimi-k2"
  | "minimax-m2";

const cache = new Map<TemplateName, Template>();

function template(name: TemplateName): Template {
  let t = cache.get(name);
  if (t === undefined) {
    t = new Template(
      readFileSync(new URL(`../../../native/model/chat-templates/${name}.jinja`, import.meta.url), "utf8"),
    );
    cache.set(name, t);
  }
  return t;
}

export interface TemplateStyle {
  /** Tool-call arguments as a JSON string (DeepSeek V3.1) instead of an object. */
  argumentsAsString?: boolean;
  /** One call per assistant message (gpt-oss assumes it). */
  oneCallPerMessage?: boolean;
  /** The reasoning field: `reasoning_content` (Qwen, GLM) or `thinking` (gpt-oss). */
  reasoningField?: "reasoning_content" | "thinking";
  /** Text put in place of the tools (DeepSeek V3.1's template has none; the model card puts them in the system prompt). */
  systemOverride?: string;
  /** The ID the model sees for a tool_use ID (Kimi's `functions.NAME:IDX`), on calls and as each result's `tool_call_id`. */
  callId?: (toolUseId: string) => string;
}

type JinjaMessage = Record<string, unknown>;

/** The conversation as the messages list an OpenAI-style client would give the template. */
export function templateMessages(conversation: Conversation, style: TemplateStyle = {}): JinjaMessage[] {
  const out: JinjaMessage[] = [];
  const system = style.systemOverride ?? conversation.system.join("\n\n");
  if (system !== "") out.push({ role: "system", content: system });
  for (const message of conversation.messages) {
    if (message.role === Role.SYSTEM) {
      const text = message.content.flatMap((c) => (c.block.case === "text" ? [c.block.value.text] : [])).join("\n\n");
      out.push({ role: "system", content: text });
    } else if (message.role === Role.USER) {
      const text: string[] = [];
      for (const c of message.content) {
        if (c.block.case === "toolResult") {
          const result: JinjaMessage = { role: "tool", content: c.block.value.content };
          if (style.callId) result.tool_call_id = style.callId(c.block.value.toolUseId);
          out.push(result);
        } else if (c.block.case === "text") text.push(c.block.value.text);
      }
      if (text.length > 0) out.push({ role: "user", content: text.join("\n\n") });
    } else {
      let reasoning = "";
      let content = "";
      const calls: JinjaMessage[] = [];
      for (const c of message.content) {
        const b = c.block;
        if (b.case === "thinking") reasoning += b.value.thinking;
        else if (b.case === "text") content += b.value.text;
        else if (b.case === "toolUse") {
          const args = style.argumentsAsString ? b.value.inputJson : (JSON.parse(b.value.inputJson) as unknown);
          const id = style.callId?.(b.value.id) ?? b.value.id;
          calls.push({ type: "function", id, function: { name: b.value.name, arguments: args } });
        }
      }
      const field = style.reasoningField ?? "reasoning_content";
      const base: JinjaMessage = { role: "assistant", content };
      if (reasoning !== "") base[field] = reasoning;
      if (calls.length === 0) out.push(base);
      else if (style.oneCallPerMessage)
        for (const [i, call] of calls.entries())
          out.push({ ...(i === 0 ? base : { role: "assistant", content: "" }), tool_calls: [call] });
      else out.push({ ...base, tool_calls: calls });
    }
  }
  return out;
}

export function templateTools(conversation: Conversation): JinjaMessage[] {
  return conversation.tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: JSON.parse(t.inputSchemaJson) as unknown },
  }));
}

/** The template's rendering with the generation prompt. */
export function renderTemplate(
  name: TemplateName,
  conversation: Conversation,
  style: TemplateStyle = {},
  extra: Record<string, unknown> = {},
): string {
  const thinking = (conversation.thinking?.mode ?? ThinkingMode.DISABLED) !== ThinkingMode.DISABLED;
  const tools = templateTools(conversation);
  return template(name).render({
    messages: templateMessages(conversation, style),
    ...(tools.length > 0 && style.systemOverride === undefined ? { tools } : {}),
    add_generation_prompt: true,
    enable_thinking: thinking,
    bos_token: "<｜begin▁of▁sentence｜>",
    ...extra,
  });
}

/** Today's date as the templates' `strftime_now` prints it. */
export function templateToday(): string {
  return new Template('{{ strftime_now("%Y-%m-%d") }}').render({});
}
