/**
 * The GPT-2 byte-level BPE alphabet: every byte maps to one printable code point, so token
 * texts in a `gpt2` GGUF vocabulary are strings over these 256 characters (space is "Ġ",
 * newline "Ċ"). All code points are below U+0144, so one character is one UTF-16 unit.
 */

function buildByteToChar(): readonly string[] {
  const printable: number[] = [];
  const ranges: ReadonlyArray<readonly [number, number]> = [
    [0x21, 0x7e],
    [0xa1, 0xac],
    [0xae, 0xff],
  ];
  for (const [from, to] of ranges) for (let b = from; b <= to; b++) printable.push(b);
  const table = new Array<string>(256);
  const keep = new Set(printable);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    table[b] = keep.has(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  }
  return table;
}

/** `BYTE_TO_CHAR[b]` is the vocabulary character for byte `b`. */
export const BYTE_TO_CHAR: readonly string[] = buildByteToChar();

const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** Encode raw text (as UTF-8 bytes) into the byte-level alphabet. */
export function textToByteChars(text: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(text)) out += BYTE_TO_CHAR[b];
  return out;
}

/** Decode a byte-level token text back to its bytes; `undefined` when a character is outside the alphabet. */
export function byteCharsToBytes(tokenText: string): Uint8Array | undefined {
  const out = new Uint8Array(tokenText.length);
  for (let i = 0; i < tokenText.length; i++) {
    const b = CHAR_TO_BYTE.get(tokenText.charAt(i));
    if (b === undefined) return undefined;
    out[i] = b;
  }
  return out;
}
