/**
 * JSON Schema → GBNF for tool arguments. Everything is bounded so that even a random-weight
 * model terminates: short strings of printable ASCII, short integers, no exponents, short
 * arrays, a depth limit. Spacing is fixed (", " and ": ", nothing else), so the output is
 * canonical JSON and the grammar never allows trailing whitespace.
 */

import { canonicalJson, isPlainObject, tryParseJson } from "../json-text.ts";
import { GbnfRules, gbnfLiteral } from "./gbnf.ts";
import { type BoundError, type Bounds, numericBounds, stringBounds } from "./json-schema-bounds.ts";
import { mergeAll, resolveRef } from "./json-schema-parts.ts";
import { numberRangeGbnf } from "./number-range.ts";

export const JSON_GRAMMAR_LIMITS = {
  maxStringChars: 32,
  /** `minLength` past `maxStringChars` raises a string's bound up to this; past it the schema is refused. */
  maxMinLength: 256,
  maxIntegerDigits: 6,
  maxFractionDigits: 4,
  maxArrayItems: 4,
  /** Object/array nesting (and $ref expansion) deeper than this gets `{}` / `[]`. */
  maxDepth: 8,
  /** Nesting of a schema-less (generic) value. */
  genericDepth: 2,
  /**
   * Schema nodes converted for one grammar, `$ref` and alternative expansions included: past it the
   * schema is refused (SchemaGrammarError), since `{"anyOf":[{"$ref":"#"}, …×7]}` expands 7^depth.
   */
  maxSchemaNodes: 4096,
  /** The same over every tool of one grammar. */
  maxGrammarNodes: 32_768,
  /**
   * Optional properties of one object: llama.cpp's grammar setup grows with their square (measured by
   * bench/engine/grammar-worst.ts: 256 take ~20 ms, 1,024 ~250 ms, 4,094 ~3.6 s on the event loop).
   */
  maxOptionalProperties: 256,
} as const;

const JSON_TYPES = new Set(["string", "integer", "number", "boolean", "null", "array", "object"]);

/** A schema the grammar cannot be built from (empty or unknown type, past the size bound). */
export class SchemaGrammarError extends Error {
  override readonly name = "SchemaGrammarError";
  /** The request field the client fixes (a tool's schema: `tools`). */
  constructor(
    message: string,
    readonly param = "tools",
  ) {
    super(message);
  }
}

/**
 * A JSON literal that cannot spell a chat format's markup: every `<` becomes `\u003c` (the same
 * JSON value), so an enum value or property name like `ok</tool_call>` cannot close the call.
 */
export function markupSafeJson(json: string): string {
  return json.replaceAll("<", "\\u003c");
}

const L = JSON_GRAMMAR_LIMITS;
type Schema = Record<string, unknown>;

/** `expr` repeated min..max times (max ≥ min ≥ 0); "" when max is 0. */
function repeat(expr: string, min: number, max: number): string {
  if (max <= 0) return "";
  if (min === max) return min === 1 ? expr : `${expr}{${min}}`;
  if (min === 0 && max === 1) return `${expr}?`;
  return `${expr}{${min},${max}}`;
}

const join = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`);

const clamp = (v: unknown, lo: number, hi: number, fallback: number): number =>
  typeof v === "number" && Number.isFinite(v) ? Math.min(hi, Math.max(lo, Math.floor(v))) : fallback;

export interface JsonGrammarOptions {
  /**
   * Free string characters exclude `<`: where the format finds the end of a value by searching for
   * a closing tag (XML arguments), a sampled string must not be able to spell one.
   */
  stringsWithoutAngle?: boolean;
}

/** Converts schemas into rules of one grammar (several tools share primitives). */
export class JsonSchemaGrammar {
  #nodes = 0;
  #totalNodes = 0;
  #subject = "input_schema";
  readonly #stringChars: string;
  constructor(
    readonly rules: GbnfRules = new GbnfRules(),
    options: JsonGrammarOptions = {},
  ) {
    this.#stringChars = options.stringsWithoutAngle
      ? "[\\x20\\x21\\x23-\\x3B\\x3D-\\x5B\\x5D-\\x7E]"
      : "[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]";
  }

  /** Name the schema in refusals (e.g. "response_format.json_schema.schema"). */
  describeAs(subject: string): this {
    this.#subject = subject;
    this.#nodes = 0;
    return this;
  }

  /** A GBNF expression (usually a rule name) for values valid under `schema` (at `path`, for refusals). */
  value(schema: unknown, hint: string, root: unknown = schema, path = ""): string {
    return this.#convert(schema, hint, 0, root, path);
  }

  /** A refusal naming the subject, the keyword and its path in the schema. */
  refusal(path: string, error: BoundError): SchemaGrammarError {
    const at = path === "" ? error.keyword : `${path}.${error.keyword}`;
    return new SchemaGrammarError(`${this.#subject}: ${at}: ${error.message}`);
  }

  /** Arguments of a tool: the schema text parsed; anything unusable means any bounded object. */
  toolArguments(inputSchemaJson: string, hint: string, toolName?: string): string {
    if (toolName !== undefined) this.#subject = `input_schema of tool '${toolName}'`;
    this.#nodes = 0;
    const parsed = inputSchemaJson.trim() === "" ? undefined : tryParseJson(inputSchemaJson);
    const schema = parsed !== undefined && isPlainObject(parsed.value) ? parsed.value : {};
    const hasShape = Object.keys(schema).length > 0;
    return hasShape ? this.value(schema, hint) : this.#genericObject(0);
  }

  #convert(schema: unknown, hint: string, depth: number, root: unknown, path: string): string {
    if (!isPlainObject(schema)) return this.#generic(0);
    if (++this.#nodes > L.maxSchemaNodes) {
      throw new SchemaGrammarError(
        `${this.#subject}: the schema expands to more than ${L.maxSchemaNodes} nodes ($ref, anyOf and nesting included); simplify it`,
      );
    }
    if (++this.#totalNodes > L.maxGrammarNodes) {
      throw new SchemaGrammarError(`tools: the tools' schemas expand to more than ${L.maxGrammarNodes} nodes in all`);
    }
    if (depth > L.maxDepth) return this.#shallow(schema);
    const s = schema;
    checkType(s.type, this.#subject);
    if (typeof s.$ref === "string") {
      const target = resolveRef(root, s.$ref);
      return target === undefined ? this.#generic(L.genericDepth) : this.#convert(target, hint, depth + 1, root, path);
    }
    if ("const" in s) return gbnfLiteral(markupSafeJson(canonicalJson(s.const)));
    if (Array.isArray(s.enum) && s.enum.length > 0) {
      const values = s.enum.map((v) => gbnfLiteral(markupSafeJson(canonicalJson(v))));
      return this.rules.add(`${hint}-enum`, values.join(" | "));
    }
    const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
    if (alternatives !== undefined && alternatives.length > 0) {
      const key = Array.isArray(s.anyOf) ? "anyOf" : "oneOf";
      const parts = alternatives.map((alt, i) =>
        this.#convert(alt, `${hint}-${i}`, depth, root, join(path, `${key}.${i}`)),
      );
      return this.rules.add(`${hint}-alt`, [...new Set(parts)].join(" | "));
    }
    if (Array.isArray(s.allOf) && s.allOf.length > 0) {
      const { allOf, ...rest } = s;
      return this.#convert(mergeAll([rest, ...allOf]), hint, depth, root, path);
    }
    if (Array.isArray(s.type)) {
      const parts = s.type.map((t) => this.#convert({ ...s, type: t }, `${hint}-${String(t)}`, depth, root, path));
      return this.rules.add(`${hint}-types`, [...new Set(parts)].join(" | "));
    }
    if (s.nullable === true) {
      const { nullable, ...rest } = s;
      return this.rules.add(`${hint}-nullable`, `${this.#convert(rest, hint, depth, root, path)} | ${this.#null()}`);
    }
    switch (s.type) {
      case "string":
        return this.#string(s, path);
      case "integer":
        return this.#bounded(s, path, 0);
      case "number":
        return this.#bounded(s, path, L.maxFractionDigits);
      case "boolean":
        return this.rules.define("json-boolean", () => `"true" | "false"`);
      case "null":
        return this.#null();
      case "array":
        return this.#array(s, hint, depth, root, path);
      case "object":
        return this.#object(s, hint, depth, root, path);
      default:
        if (isPlainObject(s.properties)) return this.#object(s, hint, depth, root, path);
        if (s.items !== undefined || Array.isArray(s.prefixItems)) return this.#array(s, hint, depth, root, path);
        return this.#generic(0);
    }
  }

  #object(s: Schema, hint: string, depth: number, root: unknown, path: string): string {
    const props = isPlainObject(s.properties) ? Object.entries(s.properties) : [];
    if (props.length === 0) return s.additionalProperties === false ? `"{}"` : this.#genericObject(0);
    const requiredNames = new Set(
      Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : [],
    );
    const kv = (name: string, valueSchema: unknown): string => {
      const value = this.#convert(valueSchema, `${hint}-${name}`, depth + 1, root, join(path, `properties.${name}`));
      return this.rules.add(
        `${hint}-${name}-kv`,
        `${gbnfLiteral(`${markupSafeJson(JSON.stringify(name))}: `)} ${value}`,
      );
    };
    const required = props.filter(([n]) => requiredNames.has(n)).map(([n, v]) => kv(n, v));
    const known = new Set(props.map(([n]) => n));
    for (const n of requiredNames) if (!known.has(n)) required.push(kv(n, true));
    const optionalNames = props.filter(([n]) => !requiredNames.has(n));
    if (optionalNames.length > L.maxOptionalProperties) {
      throw new SchemaGrammarError(
        `${this.#subject}: an object has ${optionalNames.length} optional properties; a forced call's grammar takes at most ${L.maxOptionalProperties} (list the others in \`required\` or split the tool)`,
      );
    }
    const optional = optionalNames.map(([n, v]) => kv(n, v));
    const sep = `", "`;
    if (required.length > 0) {
      const body = [`"{"`, required.join(` ${sep} `), ...optional.map((o) => `(${sep} ${o})?`), `"}"`];
      return this.rules.add(`${hint}-object`, body.join(" "));
    }
    // Only optional properties: the first one present carries no comma.
    let tail = "";
    const starts: string[] = [];
    for (let i = optional.length - 1; i >= 0; i--) {
      const o = optional[i] as string;
      starts.unshift(tail === "" ? o : `${o} ${tail}`);
      tail = this.rules.add(`${hint}-tail`, tail === "" ? `(${sep} ${o})?` : `(${sep} ${o})? ${tail}`);
    }
    return this.rules.add(`${hint}-object`, `"{" (${starts.join(" | ")})? "}"`);
  }

  #array(s: Schema, hint: string, depth: number, root: unknown, path: string): string {
    const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
    if (tuple !== undefined) {
      const key = Array.isArray(s.prefixItems) ? "prefixItems" : "items";
      const items = tuple
        .slice(0, L.maxArrayItems)
        .map((t, i) => this.#convert(t, `${hint}-${i}`, depth + 1, root, join(path, `${key}.${i}`)));
      return this.rules.add(`${hint}-tuple`, items.length === 0 ? `"[]"` : `"[" ${items.join(` ", " `)} "]"`);
    }
    const min = clamp(s.minItems, 0, L.maxArrayItems, 0);
    const max = clamp(s.maxItems, min, L.maxArrayItems, L.maxArrayItems);
    if (max === 0) return `"[]"`;
    const item = this.#convert(s.items ?? true, `${hint}-item`, depth + 1, root, join(path, "items"));
    const more = repeat(`(", " ${item})`, Math.max(0, min - 1), max - 1);
    const list = more === "" ? item : `${item} ${more}`;
    return this.rules.add(`${hint}-array`, min === 0 ? `"[" (${list})? "]"` : `"[" ${list} "]"`);
  }

  #string(s: Schema, path = ""): string {
    const char = this.rules.define("json-char", () => `${this.#stringChars} | "\\\\" ["\\\\]`);
    const { min, max } = this.stringLength(s, path, L.maxStringChars);
    const body = () => `"\\"" ${repeat(char, min, max)} "\\""`.replace("  ", " ");
    if (min === 0 && max === L.maxStringChars) return this.rules.define("json-string", body);
    return this.rules.define(`json-string-${min}-${max}`, body);
  }

  /** A string's length bounds: minLength..maxLength, `cap` when maxLength is absent or larger (refused when unholdable). */
  stringLength(s: Schema, path: string, cap: number): { min: number; max: number } {
    const bounds = stringBounds(s, cap, L.maxMinLength);
    if ("keyword" in bounds) throw this.refusal(path, bounds);
    return bounds;
  }

  /** An integer (`f` 0) or number (`f` fraction digits at most) within the schema's bounds, exactly. */
  #bounded(s: Schema, path: string, f: number): string {
    const bounds: Bounds | BoundError = numericBounds(s, f, L.maxIntegerDigits);
    if ("keyword" in bounds) throw this.refusal(path, bounds);
    const { lo, hi, fraction, span } = bounds;
    const integer = fraction === 0;
    // The unbounded grammars, where the bounds are the default ones.
    if (hi === span && (lo === -span || lo === 0n) && (integer || fraction === L.maxFractionDigits))
      return integer ? this.#integer(lo === 0n) : this.#number(lo === 0n);
    const kind = integer ? "integer" : `number-f${fraction}`;
    return this.rules.define(`json-${kind}-${lo}-${hi}`.replaceAll("--", "-m"), () =>
      numberRangeGbnf(lo, hi, fraction),
    );
  }

  #integer(unsigned: boolean): string {
    const digits = `("0" | [1-9] ${repeat("[0-9]", 0, L.maxIntegerDigits - 1)})`;
    if (unsigned) return this.rules.define("json-uint", () => digits);
    return this.rules.define("json-integer", () => `"-"? ${digits}`);
  }

  #number(unsigned: boolean): string {
    const int = this.#integer(unsigned);
    const fraction = `("." ${repeat("[0-9]", 1, L.maxFractionDigits)})?`;
    return this.rules.define(unsigned ? "json-unumber" : "json-number", () => `${int} ${fraction}`);
  }

  #null(): string {
    return this.rules.define("json-null", () => `"null"`);
  }

  /** Past the depth limit: the smallest value of the schema's apparent type. */
  #shallow(s: Schema): string {
    if (s.type === "array") return `"[]"`;
    if (s.type === "object" || isPlainObject(s.properties)) return `"{}"`;
    return this.#generic(L.genericDepth);
  }

  /** Any JSON value nested at most `genericDepth - depth` more levels. */
  #generic(depth: number): string {
    const scalars = `${this.#string({})} | ${this.#number(false)} | ${this.rules.define("json-boolean", () => `"true" | "false"`)} | ${this.#null()}`;
    if (depth >= L.genericDepth) return this.rules.define("json-scalar", () => scalars);
    return this.rules.define(`json-value-${depth}`, () => {
      const array = this.rules.define(`json-array-${depth}`, () => {
        const item = this.#generic(depth + 1);
        return `"[" (${item} ${repeat(`(", " ${item})`, 0, L.maxArrayItems - 1)})? "]"`;
      });
      return `${scalars} | ${array} | ${this.#genericObject(depth)}`;
    });
  }

  #genericObject(depth: number): string {
    return this.rules.define(`json-object-${depth}`, () => {
      const kv = `${this.#string({})} ": " ${this.#generic(depth + 1)}`;
      return `"{" (${kv} ${repeat(`(", " ${kv})`, 0, L.maxArrayItems - 1)})? "}"`;
    });
  }
}

/** `type` is absent, one JSON type name, or a non-empty list of them. */
function checkType(type: unknown, subject: string): void {
  if (type === undefined) return;
  const names = Array.isArray(type) ? type : [type];
  if (names.length === 0) throw new SchemaGrammarError(`${subject}: "type" is an empty list`);
  for (const name of names) {
    if (typeof name !== "string" || !JSON_TYPES.has(name)) {
      throw new SchemaGrammarError(`${subject}: "type" ${JSON.stringify(name)} is not a JSON Schema type`);
    }
  }
}

/** A complete grammar (root rule `root`) for one JSON value valid under `schema`. */
export function jsonSchemaToGbnf(schema: unknown): string {
  const g = new JsonSchemaGrammar();
  return g.rules.toGrammar(g.value(schema, "value"));
}
