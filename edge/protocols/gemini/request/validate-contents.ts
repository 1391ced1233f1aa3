/**
 * Validation of Gemini `contents` (and `systemInstruction`) into typed turns. Parts: `text`,
 * `thought: true` text (model turns), `functionCall` (model turns), `functionResponse` (user
 * turns). Media and code-execution parts are refused with a 400 naming the part, never dropped.
 * A streamed answer arrives as many parts; adjacent text parts (and adjacent thought parts) of a
 * model turn are one text (one thought), as the model wrote it.
 *
 * Function-call IDs: a client that echoes them gets them read back — a `NAME__<id>` wrapper (what
 * Gemini CLI makes of every ID it receives) around an ID Frontier minted is read as that ID, so it
 * routes and continues live like the other protocols' IDs. Calls without an ID get a positional
 * one, and a functionResponse without an ID answers the first unanswered call of its name in the
 * model turn before it (Gemini's own rule); one that answers none is a 400.
 */
import { isIdSyntax } from "../../../../shared/ids.ts";
import { LIMITS } from "../../../../shared/limits.ts";
import { asArray, asBoolean, asEnum, asObject, asString, fail, optional, type Path } from "../../../core/check.ts";
import { field } from "./fields.ts";
import type { GeminiContent, GeminiPart } from "./types.ts";

const MEDIA_PARTS = ["inlineData", "fileData"];
const CODE_PARTS = ["executableCode", "codeExecutionResult", "toolCall", "toolResponse"];

/** A part as sent, before runs are joined and IDs paired. */
type RawPart =
  | { kind: "text"; text: string }
  | { kind: "thought"; text: string; signature: string | undefined }
  | { kind: "functionCall"; id: string | undefined; name: string; args: Record<string, unknown> }
  | { kind: "functionResponse"; id: string | undefined; name: string; response: Record<string, unknown>; path: Path };

export function validateContents(value: unknown, path: Path): GeminiContent[] {
  const list = asArray(value, path);
  if (list.length === 0) fail(path, "List should have at least 1 item");
  if (list.length > LIMITS.maxMessages) fail(path, `List should have at most ${LIMITS.maxMessages} items`);
  const raw = list.map((entry, i) => validateContent(entry, [...path, i]));
  return pairCallIds(raw);
}

function validateContent(value: unknown, path: Path): { role: "user" | "model"; parts: RawPart[] } {
  const content = asObject(value, path);
  const rawRole = optional(content, "role");
  // A single-turn request may leave the role out: it is the user's.
  const role = rawRole === undefined || rawRole === "" ? "user" : asEnum(rawRole, [...path, "role"], ["user", "model"]);
  const rawParts = optional(content, "parts");
  const list = rawParts === undefined ? [] : asArray(rawParts, [...path, "parts"]);
  // Gemini CLI keeps a model turn that said nothing as `parts: []`.
  if (list.length === 0 && role === "user") fail([...path, "parts"], "List should have at least 1 item");
  return { role, parts: list.map((entry, i) => validatePart(entry, [...path, "parts", i], role)) };
}

function validatePart(value: unknown, path: Path, role: "user" | "model"): RawPart {
  const part = asObject(value, path);
  const rawSignature = field(part, "thoughtSignature");
  const signature = rawSignature === undefined ? undefined : asString(rawSignature, [...path, "thoughtSignature"]);
  const thoughtFlag = optional(part, "thought");
  const thought = thoughtFlag !== undefined && asBoolean(thoughtFlag, [...path, "thought"]);
  for (const key of MEDIA_PARTS) {
    if (field(part, key) !== undefined) fail([...path, key], `Part '${key}' is not supported by this model`);
  }
  for (const key of CODE_PARTS) {
    if (field(part, key) !== undefined) fail([...path, key], `Part '${key}' is not supported by this server`);
  }
  const text = optional(part, "text");
  const call = field(part, "functionCall");
  const response = field(part, "functionResponse");
  if ([text, call, response].filter((v) => v !== undefined).length > 1) {
    fail(path, "A part holds exactly one of text, functionCall or functionResponse");
  }
  if (thought && role !== "model") fail([...path, "thought"], "Thought parts belong to model turns");
  if (call !== undefined) {
    if (role !== "model") fail([...path, "functionCall"], "A functionCall belongs to a model turn");
    return functionCall(call, [...path, "functionCall"]);
  }
  if (response !== undefined) {
    if (role !== "user") fail([...path, "functionResponse"], "A functionResponse belongs to a user turn");
    return functionResponse(response, [...path, "functionResponse"]);
  }
  // A part may carry only a signature (a streamed thought's last chunk): an empty text.
  if (text === undefined && signature === undefined) {
    fail(path, "A part needs one of text, functionCall or functionResponse");
  }
  const value_ = text === undefined ? "" : asString(text, [...path, "text"]);
  return thought ? { kind: "thought", text: value_, signature } : { kind: "text", text: value_ };
}

function functionCall(value: unknown, path: Path): RawPart {
  const call = asObject(value, path);
  const name = functionName(call, path);
  const args = optional(call, "args");
  return {
    kind: "functionCall",
    id: callId(optional(call, "id"), name, [...path, "id"]),
    name,
    args: args === undefined ? {} : asObject(args, [...path, "args"]),
  };
}

function functionResponse(value: unknown, path: Path): RawPart {
  const response = asObject(value, path);
  const name = functionName(response, path);
  const parts = optional(response, "parts");
  if (parts !== undefined && asArray(parts, [...path, "parts"]).length > 0) {
    fail([...path, "parts"], "Media in a functionResponse is not supported by this model");
  }
  const body = optional(response, "response");
  return {
    kind: "functionResponse",
    id: callId(optional(response, "id"), name, [...path, "id"]),
    name,
    response: body === undefined ? {} : asObject(body, [...path, "response"]),
    path,
  };
}

function functionName(object: Record<string, unknown>, path: Path): string {
  const name = asString(optional(object, "name") ?? fail([...path, "name"], "Field required"), [...path, "name"]);
  if (name === "") fail([...path, "name"], "String should have at least 1 character");
  return name;
}

/** The call's ID, Frontier's own when a client wrapped it as `NAME__<id>`; undefined when absent or empty. */
function callId(value: unknown, name: string, path: Path): string | undefined {
  if (value === undefined) return undefined;
  const id = asString(value, path);
  if (id === "") return undefined;
  const prefix = `${name}__`;
  return id.startsWith(prefix) && isIdSyntax(id.slice(prefix.length)) ? id.slice(prefix.length) : id;
}

/** Joined runs, every call and response with an ID (see the file's comment). */
function pairCallIds(contents: { role: "user" | "model"; parts: RawPart[] }[]): GeminiContent[] {
  let unanswered: { id: string; name: string }[] = [];
  return contents.map((content, c) => {
    if (content.role === "model") unanswered = [];
    const parts: GeminiPart[] = [];
    for (const [p, part] of content.parts.entries()) {
      if (part.kind === "text" || part.kind === "thought") {
        joinRun(parts, part, content.role);
      } else if (part.kind === "functionCall") {
        const id = part.id ?? `gemini-call-${c}-${p}`;
        unanswered.push({ id, name: part.name });
        parts.push({ ...part, id });
      } else {
        const at = part.id === undefined ? unanswered.findIndex((call) => call.name === part.name) : -1;
        const id = part.id ?? unanswered[at]?.id;
        if (id === undefined) {
          fail([...part.path, "id"], `No functionCall of '${part.name}' in the model turn before it is left to answer`);
        }
        unanswered = unanswered.filter((call, i) => i !== at && call.id !== id);
        parts.push({ kind: "functionResponse", id, name: part.name, response: part.response });
      }
    }
    return { role: content.role, parts };
  });
}

/** A model turn's adjacent text parts are one text, its adjacent thought parts one thought. */
function joinRun(parts: GeminiPart[], part: Extract<RawPart, { kind: "text" | "thought" }>, role: string): void {
  const last = parts.at(-1);
  if (role === "model" && last?.kind === "text" && part.kind === "text") {
    last.text += part.text;
    return;
  }
  if (last?.kind === "thought" && part.kind === "thought") {
    last.text += part.text;
    last.signature = part.signature ?? last.signature;
    return;
  }
  if (part.kind === "thought") parts.push({ kind: "thought", text: part.text, signature: part.signature, own: false });
  else if (part.text !== "" || role === "user") parts.push({ kind: "text", text: part.text });
}

/** `systemInstruction`: a Content (or a plain string) whose text parts are the system prompt; its role is ignored. */
export function validateSystemInstruction(value: unknown, path: Path): string[] {
  if (typeof value === "string") return [value];
  const content = asObject(value, path);
  const parts = asArray(optional(content, "parts") ?? [], [...path, "parts"]);
  return parts.map((entry, i) => {
    const at: Path = [...path, "parts", i];
    const text = optional(asObject(entry, at), "text");
    if (text === undefined) fail(at, "Only text parts are supported in systemInstruction");
    return asString(text, [...at, "text"]);
  });
}
