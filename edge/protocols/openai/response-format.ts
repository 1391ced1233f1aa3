/**
 * The answer format a client asks for, shared by Chat Completions (`response_format`, the schema
 * under `json_schema`) and Responses (`text.format`, the schema's fields inline): `text`,
 * `json_object` (any JSON object) or `json_schema` (`name`, `schema`, `strict`, `description`).
 * The worker samples the answer under a grammar built from it (gpu-worker/chat/grammar/answer-grammar.ts);
 * a schema it cannot build, or with `strict: true` one it cannot guarantee, is its 400 naming
 * `<field>.schema`.
 */
import { create } from "@bufbuild/protobuf";
import {
  type ResponseFormat,
  ResponseFormatSchema,
  ResponseFormatType,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { asBoolean, asEnum, asObject, asString, fail, optional, type Path, required } from "../../core/check.ts";

export type AnswerFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      name: string;
      description: string | undefined;
      schema: Record<string, unknown> | undefined;
      strict: boolean;
    };

const SCHEMA_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `{type, ...}` at `path`; for json_schema the schema's fields are read from `schemaAt` of it. */
export function validateAnswerFormat(value: unknown, path: Path, schemaAt: "json_schema" | "inline"): AnswerFormat {
  const format = asObject(value, path);
  const type = asEnum(required(format, "type", path), [...path, "type"], [
    "text",
    "json_object",
    "json_schema",
  ] as const);
  if (type !== "json_schema") return { type };
  const fieldsPath: Path = schemaAt === "inline" ? path : [...path, "json_schema"];
  const fields = schemaAt === "inline" ? format : asObject(required(format, "json_schema", path), fieldsPath);
  const name = asString(required(fields, "name", fieldsPath), [...fieldsPath, "name"]);
  if (!SCHEMA_NAME.test(name)) fail([...fieldsPath, "name"], "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'");
  const description = optional(fields, "description");
  const schema = optional(fields, "schema");
  const strict = optional(fields, "strict");
  return {
    type,
    name,
    description: description === undefined ? undefined : asString(description, [...fieldsPath, "description"]),
    schema: schema === undefined ? undefined : asObject(schema, [...fieldsPath, "schema"]),
    strict: strict === undefined ? false : asBoolean(strict, [...fieldsPath, "strict"]),
  };
}

/** The proto form; `schemaField` is where the client wrote the schema (named in the worker's refusals). */
export function toResponseFormat(format: AnswerFormat, schemaField: string): ResponseFormat | undefined {
  switch (format.type) {
    case "text":
      return undefined;
    case "json_object":
      return create(ResponseFormatSchema, { type: ResponseFormatType.JSON_OBJECT, field: schemaField });
    case "json_schema":
      return create(ResponseFormatSchema, {
        type: ResponseFormatType.JSON_SCHEMA,
        schemaJson: format.schema === undefined ? "" : JSON.stringify(format.schema),
        name: format.name,
        strict: format.strict,
        field: schemaField,
      });
  }
}
