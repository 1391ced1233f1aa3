/**
 * Sequence state files in llama.cpp's version-3 layout (see gpu-worker/checkpoints/store/kv-state-chunks.ts)
 * with made-up cell contents, for store tests that need states the chunker can cut: the state of
 * `tokens` holds one cell per position in order, every byte a function of (layer, K/V, position),
 * so the state of a prefix is a prefix of the cells of the longer one, as in the engine.
 */
const LAYERS = 2;
const ROW_BYTES = 64;
const STREAMS = 2;

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value >>> 0, 0);
  return out;
}

function cellByte(layer: number, part: number, pos: number, at: number): number {
  return (layer * 31 + part * 17 + pos * 7 + at) & 0xff;
}

/** The whole state of a sequence holding `tokens` (V transposed when `vTrans`). */
export function syntheticState(tokens: readonly number[], vTrans = true): Buffer {
  const n = tokens.length;
  const parts: Buffer[] = [u32(0x67677371), u32(3), u32(n), Buffer.from(Int32Array.from(tokens).buffer)];
  parts.push(u32(STREAMS), u32(n));
  if (n > 0) {
    for (let pos = 0; pos < n; pos++) parts.push(u32(pos), u32(1), u32(0));
    parts.push(u32(vTrans ? 1 : 0), u32(LAYERS));
    for (let layer = 0; layer < LAYERS; layer++) {
      const header = Buffer.alloc(12);
      header.writeInt32LE(1, 0);
      header.writeBigUInt64LE(BigInt(ROW_BYTES), 4);
      const data = Buffer.alloc(n * ROW_BYTES);
      for (let i = 0; i < data.length; i++) data[i] = cellByte(layer, 0, Math.floor(i / ROW_BYTES), i % ROW_BYTES);
      parts.push(header, data);
    }
    for (let layer = 0; layer < LAYERS; layer++) {
      const header = Buffer.alloc(12);
      header.writeInt32LE(1, 0);
      if (vTrans) {
        header.writeUInt32LE(2, 4);
        header.writeUInt32LE(ROW_BYTES / 2, 8);
        const data = Buffer.alloc(n * ROW_BYTES);
        for (let j = 0; j < ROW_BYTES / 2; j++) {
          for (let pos = 0; pos < n; pos++) {
            data[(j * n + pos) * 2] = cellByte(layer, 1, pos, 2 * j);
            data[(j * n + pos) * 2 + 1] = cellByte(layer, 1, pos, 2 * j + 1);
          }
        }
        parts.push(header, data);
      } else {
        header.writeBigUInt64LE(BigInt(ROW_BYTES), 4);
        const data = Buffer.alloc(n * ROW_BYTES);
        for (let i = 0; i < data.length; i++) data[i] = cellByte(layer, 1, Math.floor(i / ROW_BYTES), i % ROW_BYTES);
        parts.push(header, data);
      }
    }
  }
  for (let s = 1; s < STREAMS; s++) parts.push(u32(0));
  return Buffer.concat(parts);
}

/** Tokens 0..n-1 (a text of length n maps character i to token i in these tests). */
export const tokensOf = (n: number): number[] => Array.from({ length: n }, (_, i) => (i * 13) % 1000);
