/**
 * What a checkpoint's files hold and how their integrity is recorded: the payload's JSON encoding and
 * the `crc32:…` checksum string the index row keeps for the state and payload files.
 */
import type { CheckpointPayload } from "./types.ts";

export function encodePayload(payload: CheckpointPayload): Buffer {
  const { text, tokens, extra } = payload;
  return Buffer.from(JSON.stringify({ text, tokens, extra }), "utf8");
}

export function decodePayload(bytes: Buffer): CheckpointPayload | undefined {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { text, tokens, extra } = value as Record<string, unknown>;
  if (typeof text !== "string" || !Array.isArray(tokens) || !tokens.every(Number.isInteger)) return undefined;
  return { text, tokens: tokens as number[], extra };
}

export interface FileCrc {
  readonly crc: number;
  readonly bytes: number;
}

/** The CRC-32 and size a checksum string records for a state file (undefined: unknown format). */
export function stateCheck(checksum: string): FileCrc | undefined {
  return parseChecksum(checksum)?.state;
}

const CHECKSUM = /^crc32:([0-9a-f]{8}):(\d+):([0-9a-f]{8}):(\d+)$/;

export function formatChecksum(state: FileCrc, payload: FileCrc): string {
  const hex = (crc: number) => crc.toString(16).padStart(8, "0");
  return `crc32:${hex(state.crc)}:${state.bytes}:${hex(payload.crc)}:${payload.bytes}`;
}

/** Undefined for any other format (a store written before this one): such an entry is unusable. */
export function parseChecksum(checksum: string): { state: FileCrc; payload: FileCrc } | undefined {
  const match = CHECKSUM.exec(checksum);
  if (!match) return undefined;
  const [, stateCrc, stateBytes, payloadCrc, payloadBytes] = match;
  return {
    state: { crc: Number.parseInt(stateCrc ?? "", 16), bytes: Number(stateBytes) },
    payload: { crc: Number.parseInt(payloadCrc ?? "", 16), bytes: Number(payloadBytes) },
  };
}
