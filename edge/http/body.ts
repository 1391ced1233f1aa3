/** Small HTTP helpers: request ids, JSON responses and a size-bounded JSON body reader. */
import { LIMITS } from "../../shared/limits.ts";
import { ApiError } from "../core/errors.ts";

/** `req_` + 24 random base62 characters. */
export function newRequestId(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let out = "req_";
  for (const b of crypto.getRandomValues(new Uint8Array(24))) out += alphabet[b % 62];
  return out;
}

export function jsonResponse(
  body: unknown,
  init: { status?: number; headers?: Record<string, string> } = {},
): Response {
  return new Response(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { "content-type": "application/json", ...init.headers },
  });
}

/**
 * Read the whole body as JSON, refusing more than `limit` bytes: first by `content-length`, then by
 * counting the bytes actually read (a chunked or lying client cannot get past it).
 */
export async function readJsonBody(request: Request, limit: number, gate?: ReadGate): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw ApiError.tooLarge(limit);
  if (gate && declared !== null && Number(declared) > gate.after) await gate.wait();
  const bytes = await readBounded(request.body, limit, gate);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw ApiError.invalid("The request body is not valid UTF-8");
  }
  if (text.trim() === "") throw ApiError.invalid("The request body is empty; expected a JSON object");
  const depth = jsonDepth(text, LIMITS.maxJsonDepth);
  if (depth > LIMITS.maxJsonDepth) {
    throw ApiError.invalid(`The request body nests objects and arrays deeper than ${LIMITS.maxJsonDepth} levels`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const detail = error instanceof SyntaxError ? `: ${error.message}` : "";
    throw ApiError.invalid(`The request body is not valid JSON${detail}`);
  }
}

/** Read no further than `after` bytes until `wait()` settles (it may reject: the read stops there). */
export interface ReadGate {
  after: number;
  wait: () => Promise<void>;
}

async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  gate: ReadGate | undefined,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let gated = gate;
  for (;;) {
    if (gated && total > gated.after) {
      const open = gated.wait();
      gated = undefined;
      await open.catch(async (error: unknown) => {
        await reader.cancel().catch(() => undefined);
        throw error;
      });
    }
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw ApiError.tooLarge(limit);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * The deepest object/array nesting of a JSON text, counting no further than `limit + 1` (strings
 * skipped, escapes honoured). Scanned before JSON.parse, so nothing downstream recurses deeply.
 */
export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
