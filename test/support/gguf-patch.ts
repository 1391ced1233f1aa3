/**
 * Byte-level edits of a generated GGUF for tests: a metadata value changed in place (same width),
 * so a test can make a file with another context length, head count or architecture.
 */
import { GgufValueType } from "../../native/model/gguf-format.ts";

/** Offset of the value of metadata `key` (just after its u32 type), and that type. */
function findValue(buf: Buffer, key: string): { at: number; type: number } {
  const needle = Buffer.alloc(8 + Buffer.byteLength(key));
  needle.writeBigUInt64LE(BigInt(Buffer.byteLength(key)), 0);
  needle.write(key, 8);
  const keyAt = buf.indexOf(needle);
  if (keyAt < 0) throw new Error(`metadata ${key} is not in the file`);
  const typeAt = keyAt + needle.length;
  return { at: typeAt + 4, type: buf.readUInt32LE(typeAt) };
}

/** A copy of `buf` with the u32 metadata `key` set to `value`. */
export function withU32(buf: Buffer, key: string, value: number): Buffer {
  const out = Buffer.from(buf);
  const { at, type } = findValue(out, key);
  if (type !== GgufValueType.UINT32) throw new Error(`metadata ${key} is type ${type}, not u32`);
  out.writeUInt32LE(value, at);
  return out;
}

/**
 * A copy of `buf` whose architecture is `arch` (as long as the old name): `general.architecture`
 * and every `<arch>.` key prefix.
 */
export function withArchitecture(buf: Buffer, from: string, arch: string): Buffer {
  if (arch.length !== from.length) throw new Error("the new architecture name must be as long as the old one");
  const out = Buffer.from(buf);
  const { at, type } = findValue(out, "general.architecture");
  if (type !== GgufValueType.STRING) throw new Error("general.architecture is not a string");
  out.write(arch, at + 8);
  const prefix = Buffer.from(`${from}.`);
  for (let i = out.indexOf(prefix); i >= 0; i = out.indexOf(prefix, i + 1)) {
    // A key: its u64 length sits just before it.
    const length = i >= 8 ? Number(out.readBigUInt64LE(i - 8)) : 0;
    if (length > prefix.length && length < 256) out.write(arch, i);
  }
  return out;
}

/** Offset of the first metadata key's u64 length (after magic, version, tensor and metadata counts). */
export const FIRST_KEY_LENGTH_AT = 24;
