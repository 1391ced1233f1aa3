/**
 * The subset of the Gemini API (`generateContent`, `streamGenerateContent`, `countTokens`) Frontier
 * serves, as validate.ts returns it: typed values with the client's field names resolved (schemas
 * already JSON Schema, function-call IDs already Frontier's where the client prefixed them).
 */

/** One validated part of a `contents` entry. */
export type GeminiPart =
  | { kind: "text"; text: string }
  /**
   * A run of `thought: true` text parts (model turns only), joined, with the last signature the run
   * carried. `own`: the signature is the one Frontier minted for exactly this text and tenant.
   */
  | { kind: "thought"; text: string; signature: string | undefined; own: boolean }
  /**
   * `id`: the client's ID (a `NAME__` prefix around a Frontier ID removed), or, when it sent none, a
   * positional one (`gemini-call-<content>-<part>`) that its functionResponse is paired to by name.
   */
  | { kind: "functionCall"; id: string; name: string; args: Record<string, unknown> }
  | { kind: "functionResponse"; id: string; name: string; response: Record<string, unknown> };

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  /** JSON Schema of the arguments (`parametersJsonSchema` as sent, or `parameters` converted). */
  parameters: Record<string, unknown>;
}

/** `toolConfig.functionCallingConfig`. VALIDATED behaves as AUTO: calls are always schema-valid here. */
export type GeminiCallingMode = "AUTO" | "ANY" | "NONE" | "VALIDATED";

export interface GeminiToolConfig {
  mode: GeminiCallingMode;
  /** With ANY: the calls are restricted to these (empty: every declared function). */
  allowedFunctionNames: string[];
}

/** The answer's format: `responseMimeType` with `responseSchema` / `responseJsonSchema`. */
export type GeminiAnswerFormat =
  | { type: "text" }
  | { type: "json"; schema: Record<string, unknown> | undefined; field: string };

/** `thinkingConfig`: off (`thinkingBudget: 0`), dynamic (`-1`, or absent) or a budget. */
export type GeminiThinking = { mode: "off" } | { mode: "dynamic" } | { mode: "budget"; tokens: number };

export interface GeminiGenerationConfig {
  temperature: number | undefined;
  topP: number | undefined;
  topK: number | undefined;
  seed: number | undefined;
  maxOutputTokens: number | undefined;
  stopSequences: string[];
  answer: GeminiAnswerFormat;
  thinking: GeminiThinking;
  /** `thinkingConfig.includeThoughts`: thought parts are returned (the model thinks either way). */
  includeThoughts: boolean;
}

export interface GeminiRequest {
  /** The model named in the path (`models/{model}:…`), without `models/`. */
  model: string;
  contents: GeminiContent[];
  system: string[];
  functions: GeminiFunctionDeclaration[];
  /** Declared tools of kinds Frontier does not offer (googleSearch, codeExecution, …), by their key. */
  toolsNotOffered: string[];
  toolConfig: GeminiToolConfig;
  generation: GeminiGenerationConfig;
}
