/**
 * Block hashes over token ids, chained: hash(i) = SHA-256(hash(i - 1) ‖ tokens of block i), truncated
 * to 128 bits, for every full block. The chain starts from a secret per scope: for a tenant, a key
 * derived (HKDF) from the data key its requests carry, bound to the tenant and the model; for public
 * prefixes, a public label bound to the model. So a tenant's hashes are unpredictable without its
 * key — an index row confirms nothing about a guessed prompt and never matches another tenant's
 * identical tokens — and a hash names a whole prefix, not one block (equal hashes, equal prefixes).
 */
import { createHash, hkdfSync } from "node:crypto";
import type { Token } from "../../../native/engine-types.ts";

/** A tenant's data key as the edge sends it (checkpoints/state/sealed-file.ts `TenantDataKey`). */
export interface DataKeyLike {
  readonly tenant: string;
  readonly bytes: Uint8Array;
}

/** Where a chain starts: a tenant's (keyed) or the public one; `scope` names it in the index, never the key. */
export interface ChainRoot {
  readonly scope: string;
  readonly seed: Buffer;
}

const TENANT_INFO = "frontier/shared-prefix/chain/v1";
const PUBLIC_LABEL = "frontier/shared-prefix/public/v1";

/** Bytes of a block hash kept (128 bits: collisions are out of reach for any index size). */
const HASH_BYTES = 16;

const tenantRoots = new WeakMap<DataKeyLike, Map<string, ChainRoot>>();

/** The chain root of `key`'s tenant for one model: HKDF-SHA-256 of the data key (cached per key object). */
export function tenantChainRoot(key: DataKeyLike, modelIdentity: string): ChainRoot {
  let byModel = tenantRoots.get(key);
  if (!byModel) {
    byModel = new Map();
    tenantRoots.set(key, byModel);
  }
  let root = byModel.get(modelIdentity);
  if (!root) {
    const info = Buffer.from(`${TENANT_INFO}\u0000${key.tenant}\u0000${modelIdentity}`, "utf8");
    root = {
      scope: `tenant:${key.tenant}`,
      seed: Buffer.from(hkdfSync("sha256", key.bytes, Buffer.alloc(0), info, HASH_BYTES)),
    };
    byModel.set(modelIdentity, root);
  }
  return root;
}

/** The public chain root for one model: anyone can compute it, and only public content is indexed under it. */
export function publicChainRoot(modelIdentity: string): ChainRoot {
  const seed = createHash("sha256").update(`${PUBLIC_LABEL}\u0000${modelIdentity}`).digest().subarray(0, HASH_BYTES);
  return { scope: "public", seed: Buffer.from(seed) };
}

/** The chain of `tokens`' full blocks (at most `maxBlocks`), each hash base64url (22 characters). */
export function blockChain(
  root: ChainRoot,
  tokens: readonly Token[],
  blockTokens: number,
  maxBlocks = Number.POSITIVE_INFINITY,
): string[] {
  const blocks = Math.min(Math.floor(tokens.length / blockTokens), maxBlocks);
  const chain: string[] = [];
  const words = new Uint32Array(blockTokens);
  let previous: Buffer = root.seed;
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < blockTokens; i++) words[i] = tokens[b * blockTokens + i] ?? 0;
    previous = createHash("sha256")
      .update(previous)
      .update(new Uint8Array(words.buffer))
      .digest()
      .subarray(0, HASH_BYTES);
    chain.push(previous.toString("base64url"));
  }
  return chain;
}

/** Tokens `a` and `b` agree on from the start. */
export function commonPrefix(a: readonly Token[], b: readonly Token[]): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a[i] === b[i]) i++;
  return i;
}
