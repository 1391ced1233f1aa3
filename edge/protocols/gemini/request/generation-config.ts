/**
 * `generationConfig`: sampling (temperature, topP, topK, seed, maxOutputTokens, stopSequences), the
 * answer's format (`responseMimeType` text/plain or application/json, with `responseSchema` — Gemini's
 * OpenAPI subset — or `responseJsonSchema`), and `thinkingConfig` (`thinkingBudget`: 0 off, -1
 * dynamic, N a budget; `thinkingLevel`; `includeThoughts`). One candidate only; what Frontier does
 * not serve is a 400 naming the field.
 */
import { LIMITS } from "../../../../shared/limits.ts";
import { asArray, asBoolean, asInteger, asNumber, asObject, asString, fail, type Path } from "../../../core/check.ts";
import { field } from "./fields.ts";
import { toJsonSchema, withJsonSchemaTypes } from "./schema.ts";
import type { GeminiAnswerFormat, GeminiGenerationConfig, GeminiThinking } from "./types.ts";

/** Gemini's own limit on stop sequences. */
const MAX_STOP_SEQUENCES = 5;
/** `thinkingLevel` → a budget, as Chat Completions' `reasoning_effort` maps (MINIMAL: no thinking). */
const LEVEL_BUDGETS: Record<string, number> = { LOW: 1024, MEDIUM: 4096, HIGH: 16_384 };
const PATH: Path = ["generationConfig"];

export function validateGenerationConfig(value: unknown): GeminiGenerationConfig {
  if (value === undefined) {
    return {
      temperature: undefined,
      topP: undefined,
      topK: undefined,
      seed: undefined,
      maxOutputTokens: undefined,
      stopSequences: [],
      answer: { type: "text" },
      thinking: { mode: "dynamic" },
      includeThoughts: false,
    };
  }
  const config = asObject(value, PATH);
  refuseUnsupported(config);
  const read = <T>(key: string, check: (v: unknown, path: Path) => T): T | undefined => {
    const v = field(config, key);
    return v === undefined ? undefined : check(v, [...PATH, key]);
  };
  const topK = read("topK", (v, p) => asInteger(v, p, { min: 0 }));
  const thinking = field(config, "thinkingConfig");
  const thinkingConfig = thinking === undefined ? undefined : asObject(thinking, [...PATH, "thinkingConfig"]);
  return {
    temperature: read("temperature", (v, p) => asNumber(v, p, { min: 0, max: 2 })),
    topP: read("topP", (v, p) => asNumber(v, p, { min: 0, max: 1 })),
    topK: topK === 0 ? undefined : topK,
    seed: read("seed", (v, p) => asInteger(v, p)),
    maxOutputTokens: read("maxOutputTokens", (v, p) => asInteger(v, p, { min: 1, max: LIMITS.maxOutputTokens })),
    stopSequences: read("stopSequences", stopSequences) ?? [],
    answer: answerFormat(config),
    thinking: thinkingConfig === undefined ? { mode: "dynamic" } : thinkingOf(thinkingConfig),
    includeThoughts:
      thinkingConfig === undefined
        ? false
        : (readBoolean(thinkingConfig, "includeThoughts", [...PATH, "thinkingConfig"]) ?? false),
  };
}

function refuseUnsupported(config: Record<string, unknown>): void {
  const candidates = field(config, "candidateCount");
  if (candidates !== undefined && asInteger(candidates, [...PATH, "candidateCount"], { min: 1 }) !== 1) {
    fail(
      [...PATH, "candidateCount"],
      "Only one candidate per request is supported; omit candidateCount or set it to 1",
    );
  }
  if (readBoolean(config, "responseLogprobs", PATH)) {
    fail(
      [...PATH, "responseLogprobs"],
      "Log probabilities are not supported; omit responseLogprobs or set it to false",
    );
  }
  if (field(config, "logprobs") !== undefined) fail([...PATH, "logprobs"], "Log probabilities are not supported");
  for (const key of ["presencePenalty", "frequencyPenalty"]) {
    const penalty = field(config, key);
    if (penalty !== undefined && asNumber(penalty, [...PATH, key]) !== 0) {
      fail([...PATH, key], `${key} is not supported; omit it or set it to 0`);
    }
  }
  for (const key of ["speechConfig", "imageConfig"]) {
    if (field(config, key) !== undefined) fail([...PATH, key], "Only text output is supported");
  }
  const modalities = field(config, "responseModalities");
  if (modalities !== undefined) {
    asArray(modalities, [...PATH, "responseModalities"]).forEach((entry, i) => {
      const at: Path = [...PATH, "responseModalities", i];
      if (asString(entry, at).toUpperCase() !== "TEXT")
        fail(at, `Output modality ${JSON.stringify(entry)} is not supported`);
    });
  }
}

function stopSequences(value: unknown, path: Path): string[] {
  const list = asArray(value, path);
  if (list.length > MAX_STOP_SEQUENCES) fail(path, `At most ${MAX_STOP_SEQUENCES} stop sequences are allowed`);
  return list.map((entry, i) => {
    const text = asString(entry, [...path, i]);
    if (text === "" || text.length > LIMITS.maxStopSequenceLength) {
      fail([...path, i], `String should have between 1 and ${LIMITS.maxStopSequenceLength} characters`);
    }
    return text;
  });
}

/** JSON output: `responseMimeType: application/json`, with a schema in either dialect (or none: any JSON). */
function answerFormat(config: Record<string, unknown>): GeminiAnswerFormat {
  const mime = field(config, "responseMimeType");
  const type = mime === undefined ? "text/plain" : asString(mime, [...PATH, "responseMimeType"]);
  const openApi = field(config, "responseSchema");
  const jsonSchema = field(config, "responseJsonSchema") ?? field(config, "_responseJsonSchema");
  if (openApi !== undefined && jsonSchema !== undefined) {
    fail([...PATH, "responseJsonSchema"], "Set responseSchema or responseJsonSchema, not both");
  }
  if (type === "text/plain") {
    if (openApi !== undefined || jsonSchema !== undefined) {
      fail([...PATH, "responseMimeType"], "A response schema needs responseMimeType 'application/json'");
    }
    return { type: "text" };
  }
  if (type !== "application/json") {
    fail([...PATH, "responseMimeType"], `Input should be 'text/plain' or 'application/json' (got '${type}')`);
  }
  if (openApi !== undefined) {
    const schemaPath = [...PATH, "responseSchema"];
    return { type: "json", schema: toJsonSchema(openApi, schemaPath), field: schemaPath.join(".") };
  }
  const schemaPath = [...PATH, "responseJsonSchema"];
  return {
    type: "json",
    schema: jsonSchema === undefined ? undefined : withJsonSchemaTypes(asObject(jsonSchema, schemaPath)),
    field: schemaPath.join("."),
  };
}

function thinkingOf(config: Record<string, unknown>): GeminiThinking {
  const path: Path = [...PATH, "thinkingConfig"];
  const budget = field(config, "thinkingBudget");
  const level = field(config, "thinkingLevel");
  if (budget !== undefined && level !== undefined) {
    fail([...path, "thinkingLevel"], "Set thinkingBudget or thinkingLevel, not both");
  }
  if (budget !== undefined) {
    const tokens = asInteger(budget, [...path, "thinkingBudget"], { min: -1, max: LIMITS.maxOutputTokens });
    if (tokens === 0) return { mode: "off" };
    return tokens === -1 ? { mode: "dynamic" } : { mode: "budget", tokens };
  }
  if (level === undefined) return { mode: "dynamic" };
  const name = asString(level, [...path, "thinkingLevel"]).toUpperCase();
  if (name === "THINKING_LEVEL_UNSPECIFIED") return { mode: "dynamic" };
  if (name === "MINIMAL") return { mode: "off" };
  const tokens = LEVEL_BUDGETS[name];
  if (tokens === undefined) fail([...path, "thinkingLevel"], "Input should be one of MINIMAL, LOW, MEDIUM, HIGH");
  return { mode: "budget", tokens };
}

function readBoolean(object: Record<string, unknown>, key: string, path: Path): boolean | undefined {
  const v = field(object, key);
  return v === undefined ? undefined : asBoolean(v, [...path, key]);
}
