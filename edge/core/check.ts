/**
 * Tiny typed readers for untrusted JSON. Each failure names the field path the way Anthropic's API
 * does (`messages.2.content.0.tool_use_id: Field required`).
 */

import { LIMITS } from "../../shared/limits.ts";

export type Path = readonly (string | number)[];

export class ValidationError extends Error {
  override readonly name = "ValidationError";
  constructor(
    readonly path: Path,
    readonly detail: string,
  ) {
    super(path.length > 0 ? `${path.join(".")}: ${detail}` : detail);
  }
}

const TOOL_NAME = /^[a-zA-Z0-9_-]+$/;

/** A tool's `name`: 1–maxLength characters of [a-zA-Z0-9_-] and unique within `seen` (which it joins). */
export function uniqueToolName(
  tool: Record<string, unknown>,
  path: Path,
  seen: Set<string>,
  maxLength: number = LIMITS.maxToolNameLength,
): string {
  const name = asString(required(tool, "name", path), [...path, "name"]);
  if (name.length === 0 || name.length > maxLength) {
    fail([...path, "name"], `String should have between 1 and ${maxLength} characters`);
  }
  // The APIs' own rule; it also keeps a name from spelling a chat format's markup (`</tool_call>`).
  if (!TOOL_NAME.test(name)) fail([...path, "name"], `String should match pattern '^[a-zA-Z0-9_-]{1,${maxLength}}$'`);
  if (seen.has(name)) fail([...path, "name"], `Tool names must be unique; '${name}' appears more than once`);
  seen.add(name);
  return name;
}

export function fail(path: Path, detail: string): never {
  throw new ValidationError(path, detail);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A present, non-null field or a "Field required" failure. */
export function required(object: Record<string, unknown>, key: string, path: Path): unknown {
  const value = object[key];
  if (value === undefined || value === null) fail([...path, key], "Field required");
  return value;
}

/** An optional field; JSON null counts as absent. */
export function optional(object: Record<string, unknown>, key: string): unknown {
  const value = object[key];
  return value === null ? undefined : value;
}

export function asObject(value: unknown, path: Path): Record<string, unknown> {
  if (!isObject(value)) fail(path, "Input should be an object");
  return value;
}

export function asArray(value: unknown, path: Path): unknown[] {
  if (!Array.isArray(value)) fail(path, "Input should be a valid list");
  return value;
}

export function asString(value: unknown, path: Path): string {
  if (typeof value !== "string") fail(path, "Input should be a valid string");
  return value;
}

export function asBoolean(value: unknown, path: Path): boolean {
  if (typeof value !== "boolean") fail(path, "Input should be a valid boolean");
  return value;
}

export interface Range {
  min?: number;
  max?: number;
}

export function asNumber(value: unknown, path: Path, range: Range = {}): number {
  if (typeof value !== "number" || !Number.isFinite(value)) fail(path, "Input should be a valid number");
  return inRange(value, path, range);
}

export function asInteger(value: unknown, path: Path, range: Range = {}): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) fail(path, "Input should be a valid integer");
  return inRange(value, path, range);
}

export function asEnum<T extends string>(value: unknown, path: Path, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    const names = allowed.map((name) => `'${name}'`);
    const list = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : (names[0] ?? "");
    fail(path, `Input should be ${list}`);
  }
  return value as T;
}

function inRange(value: number, path: Path, range: Range): number {
  if (range.min !== undefined && value < range.min) fail(path, `Input should be greater than or equal to ${range.min}`);
  if (range.max !== undefined && value > range.max) fail(path, `Input should be less than or equal to ${range.max}`);
  return value;
}
