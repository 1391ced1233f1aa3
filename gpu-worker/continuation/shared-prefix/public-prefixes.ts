/**
 * Public prefixes: text a client vendor publishes, byte-identical for every user (a Claude Code
 * version's system prompt and tool list), declared by the operator as the SHA-256 of the rendered
 * prompt's first `chars` characters (UTF-8 bytes hashed) — `npm run public-prefix` prints the line
 * from captured requests. A request is eligible only when its own rendered text starts with exactly
 * those bytes, so nothing but the registered content can ever be shared across tenants.
 */
import { createHash } from "node:crypto";

export interface PublicPrefix {
  /** The operator's label (logs only). */
  readonly name: string;
  /** SHA-256 (hex) of the UTF-8 bytes of the rendered prefix. */
  readonly sha256: string;
  /** Its length in UTF-16 code units of the rendered text. */
  readonly chars: number;
}

/**
 * FRONTIER_PUBLIC_PREFIXES: entries separated by commas or whitespace, each
 * `[name=]<sha256 hex>:<chars>`. Throws on a malformed entry (the worker refuses to start).
 */
export function parsePublicPrefixes(spec: string | undefined): PublicPrefix[] {
  const entries = (spec ?? "").split(/[\s,]+/).filter((e) => e !== "");
  const out: PublicPrefix[] = [];
  for (const entry of entries) {
    const m = /^(?:([A-Za-z0-9._@+-]{1,64})=)?([0-9a-f]{64}):([1-9][0-9]{0,8})$/.exec(entry);
    if (!m?.[2] || !m[3]) {
      throw new Error(
        `FRONTIER_PUBLIC_PREFIXES entry "${entry}" must be [name=]<sha256 hex, lowercase>:<characters> (npm run public-prefix prints it)`,
      );
    }
    out.push({ name: m[1] ?? m[2].slice(0, 12), sha256: m[2], chars: Number(m[3]) });
  }
  return out;
}

/** The content hash of a rendered prefix, as registered. */
export function publicPrefixHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export class PublicPrefixRegistry {
  readonly #byLength: PublicPrefix[];

  constructor(readonly entries: readonly PublicPrefix[]) {
    this.#byLength = [...entries].sort((a, b) => b.chars - a.chars);
  }

  get size(): number {
    return this.#byLength.length;
  }

  /** The longest registered prefix `text` starts with, byte for byte; undefined when none. */
  match(text: string): PublicPrefix | undefined {
    for (const entry of this.#byLength) {
      if (entry.chars > text.length) continue;
      if (publicPrefixHash(text.slice(0, entry.chars)) === entry.sha256) return entry;
    }
    return undefined;
  }
}
