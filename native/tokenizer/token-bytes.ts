/**
 * Raw bytes of vocabulary tokens, decoded from the GGUF token texts (llama.cpp's detokenizer
 * returns text, which loses partial UTF-8 sequences).
 */
import { byteCharsToBytes } from "../model/byte-unicode.ts";

const TOKEN_TYPE_BYTE = 6;
const TOKEN_TYPE_CONTROL = 3;
const TOKEN_TYPE_USER_DEFINED = 4;
const SPM_BYTE = /^<0x([0-9A-Fa-f]{2})>$/;

export interface TokenBytesSource {
  /** `tokenizer.ggml.model`. */
  tokenizerModel: string;
  tokens: readonly string[];
  tokenTypes: readonly number[] | undefined;
  /** Used for tokenizer families whose texts cannot be decoded here. */
  fallback: (token: number) => string;
}

/** Memoized token -> bytes table. */
export class TokenBytes {
  private readonly cache: Array<Uint8Array | undefined>;
  private readonly encoder = new TextEncoder();
  constructor(private readonly src: TokenBytesSource) {
    this.cache = new Array<Uint8Array | undefined>(src.tokens.length);
  }

  /** A fresh copy of `token`'s bytes. Throws RangeError for ids outside the vocabulary. */
  get(token: number): Uint8Array {
    if (!Number.isInteger(token) || token < 0 || token >= this.src.tokens.length)
      throw new RangeError(`token ${token} is outside the vocabulary (0-${this.src.tokens.length - 1})`);
    let bytes = this.cache[token];
    if (bytes === undefined) {
      bytes = this.decode(token);
      this.cache[token] = bytes;
    }
    return bytes.slice();
  }

  private decode(token: number): Uint8Array {
    const text = this.src.tokens[token] ?? "";
    const type = this.src.tokenTypes?.[token];
    if (type === TOKEN_TYPE_CONTROL || type === TOKEN_TYPE_USER_DEFINED) return this.encoder.encode(text);
    switch (this.src.tokenizerModel) {
      case "gpt2":
        return byteCharsToBytes(text) ?? this.encoder.encode(text);
      case "llama": {
        const byte = type === TOKEN_TYPE_BYTE ? SPM_BYTE.exec(text) : null;
        if (byte?.[1] !== undefined) return Uint8Array.of(Number.parseInt(byte[1], 16));
        return this.encoder.encode(text.replaceAll("\u2581", " "));
      }
      default:
        return this.encoder.encode(this.src.fallback(token));
    }
  }
}
