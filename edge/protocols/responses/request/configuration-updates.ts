/**
 * `configuration_update` input items (OpenAI: "an update to the conversation's response
 * configuration … each setting stays in effect until a later update replaces it"). Codex 0.171 sends
 * one with its default model before its first response (`{"reasoning": {"effort": "low"}}`) and keeps
 * it in the history it replays. An update is configuration, not context: it renders nothing. The
 * response is sampled with the settings in effect at the end of the conversation: the request's
 * `reasoning.effort` / `text.format`, each replaced by the last update in the history that sets it
 * (`effort: null` returns to the request's own).
 */
import { asEnum, asObject, asString, optional, type Path } from "../../../core/check.ts";
import { validateAnswerFormat } from "../../openai/response-format.ts";
import type { ConfigurationUpdateItem, InputItem, ResponsesRequest } from "./types.ts";

/** `reasoning.effort` values served (anything but none/minimal turns the model's thinking on). */
export const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;

/** One `configuration_update` item at `path` (its `reasoning.effort` and `text.format` checked). */
export function validateConfigurationUpdate(item: Record<string, unknown>, path: Path): ConfigurationUpdateItem {
  const update: ConfigurationUpdateItem = { type: "configuration_update" };
  const id = optional(item, "id");
  if (id !== undefined) update.id = asString(id, [...path, "id"]);
  const reasoning = optional(item, "reasoning");
  if (reasoning !== undefined) {
    const settings = asObject(reasoning, [...path, "reasoning"]);
    // `effort: null` is a setting of its own (back to the request's), not an absent field.
    if (settings.effort === null) update.reasoning_effort = null;
    else if (settings.effort !== undefined)
      update.reasoning_effort = asEnum(settings.effort, [...path, "reasoning", "effort"], EFFORTS);
  }
  const text = optional(item, "text");
  if (text !== undefined) {
    const format = optional(asObject(text, [...path, "text"]), "format");
    if (format !== undefined) update.text_format = validateAnswerFormat(format, [...path, "text", "format"], "inline");
  }
  return update;
}

/** The request with the settings the conversation's updates leave in effect. */
export function applyConfigurationUpdates(request: ResponsesRequest, items: readonly InputItem[]): ResponsesRequest {
  let effort = request.reasoning_effort;
  let format = request.text_format;
  for (const item of items) {
    if (item.type !== "configuration_update") continue;
    if (item.reasoning_effort !== undefined) effort = item.reasoning_effort ?? request.reasoning_effort;
    if (item.text_format !== undefined) format = item.text_format;
  }
  return effort === request.reasoning_effort && format === request.text_format
    ? request
    : { ...request, reasoning_effort: effort, text_format: format };
}
