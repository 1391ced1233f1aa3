/**
 * The shared-prefix index's pure parts: keyed block chains (per tenant and model, chained so a hash
 * names a whole prefix), the index's deepest-block lookup against a brute-force model under random
 * holds and drops, its bound, and public-prefix registration and matching.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  blockChain,
  commonPrefix,
  publicChainRoot,
  tenantChainRoot,
} from "../../../gpu-worker/continuation/shared-prefix/block-chain.ts";
import { loadSharedPrefixOptions } from "../../../gpu-worker/continuation/shared-prefix/options.ts";
import { SharedPrefixIndex } from "../../../gpu-worker/continuation/shared-prefix/prefix-index.ts";
import {
  PublicPrefixRegistry,
  parsePublicPrefixes,
  publicPrefixHash,
} from "../../../gpu-worker/continuation/shared-prefix/public-prefixes.ts";

const key = (tenant: string, byte = 1) => ({ tenant, bytes: new Uint8Array(32).fill(byte) });
const tokens = (n: number, salt = 0) => Array.from({ length: n }, (_, i) => (i * 31 + salt) % 1000);

describe("block chains", () => {
  it("cover full blocks only, and equal prefixes give equal hashes", () => {
    const root = tenantChainRoot(key("a"), "model-1");
    const a = blockChain(root, tokens(1000), 64);
    expect(a).toHaveLength(15);
    const b = blockChain(root, [...tokens(700), 1, 2, 3], 64);
    expect(b.slice(0, 10)).toEqual(a.slice(0, 10));
    expect(b[10]).not.toBe(a[10]);
  });

  it("chain: a block equal to another's, after a different prefix, hashes differently", () => {
    const root = tenantChainRoot(key("a"), "m");
    const first = blockChain(root, [...tokens(64, 1), ...tokens(64)], 64);
    const second = blockChain(root, [...tokens(64, 2), ...tokens(64)], 64);
    expect(first[1]).not.toBe(second[1]);
  });

  it("are keyed per tenant, data key and model: no hash of one matches another's", () => {
    const t = tokens(512);
    const chains = [
      blockChain(tenantChainRoot(key("a"), "m"), t, 64),
      blockChain(tenantChainRoot(key("b"), "m"), t, 64),
      blockChain(tenantChainRoot(key("a", 2), "m"), t, 64),
      blockChain(tenantChainRoot(key("a"), "m2"), t, 64),
      blockChain(publicChainRoot("m"), t, 64),
    ];
    const all = chains.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(tenantChainRoot(key("a"), "m").scope).toBe("tenant:a");
  });

  it("commonPrefix counts the tokens two arrays agree on from the start", () => {
    expect(commonPrefix([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(commonPrefix([], [1])).toBe(0);
    expect(commonPrefix([5, 6], [5, 6])).toBe(2);
  });
});

describe("SharedPrefixIndex", () => {
  it("finds the deepest block some holder has, newest holder first", () => {
    const index = new SharedPrefixIndex<string>(1000);
    const root = tenantChainRoot(key("a"), "m");
    const chain = (t: number[]) => blockChain(root, t, 16);
    index.hold("x", "x", chain(tokens(64)));
    index.hold("y", "y", chain(tokens(160)));
    index.hold("z", "z", chain([...tokens(32), 9, 9, 9]));
    expect(index.lookup(chain(tokens(200)))).toEqual({ blocks: 10, refs: ["y"] });
    expect(index.lookup(chain(tokens(64)))).toEqual({ blocks: 4, refs: ["y", "x"] });
    expect(index.lookup(chain(tokens(40)))).toEqual({ blocks: 2, refs: ["z", "y", "x"] });
    expect(index.lookup(chain([7, ...tokens(100)]))).toBeUndefined();
    expect(index.drop("y")).toBe(true);
    expect(index.lookup(chain(tokens(200)))).toEqual({ blocks: 4, refs: ["x"] });
    // Holding again replaces what a holder held.
    index.hold("x", "x", chain(tokens(16)));
    expect(index.lookup(chain(tokens(200)))?.blocks).toBe(2);
    expect(index.stats()).toMatchObject({ holders: 2, heldBlocks: 1 + 2 });
  });

  it("stays within its bound, evicting the least recently used holders", () => {
    const index = new SharedPrefixIndex<number>(100);
    for (let h = 0; h < 20; h++)
      index.hold(`h${h}`, h, blockChain(tenantChainRoot(key("a"), "m"), tokens(16 * 10, h + 1), 16));
    expect(index.stats().blocks).toBeLessThanOrEqual(100);
    expect(index.stats().holders).toBe(10);
    expect(index.stats().evicted).toBe(10);
    // A chain longer than the bound is cut to it.
    index.hold("long", -1, blockChain(tenantChainRoot(key("a"), "m"), tokens(16 * 300), 16));
    expect(index.stats().blocks).toBeLessThanOrEqual(100);
  });

  it("agrees with a brute-force model under random holds, drops and lookups", () => {
    const root = tenantChainRoot(key("a"), "m");
    const B = 4;
    // Prompts from a small alphabet of blocks, so they share prefixes often.
    const prompt = fc
      .array(fc.integer({ min: 0, max: 2 }), { minLength: 0, maxLength: 6 })
      .map((blocks) => blocks.flatMap((b) => [b, b + 1, b + 2, b + 3]));
    const op = fc.oneof(
      fc.record({ kind: fc.constant("hold" as const), holder: fc.integer({ min: 0, max: 5 }), tokens: prompt }),
      fc.record({ kind: fc.constant("drop" as const), holder: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant("lookup" as const), tokens: prompt }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const index = new SharedPrefixIndex<number>(10_000);
        const model = new Map<number, number[]>();
        for (const o of ops) {
          if (o.kind === "hold") {
            index.hold(`h${o.holder}`, o.holder, blockChain(root, o.tokens, B));
            model.delete(o.holder);
            if (o.tokens.length >= B) model.set(o.holder, o.tokens);
          } else if (o.kind === "drop") {
            index.drop(`h${o.holder}`);
            model.delete(o.holder);
          } else {
            const got = index.lookup(blockChain(root, o.tokens, B));
            let best = 0;
            for (const held of model.values()) best = Math.max(best, Math.floor(commonPrefix(held, o.tokens) / B));
            expect(got?.blocks ?? 0).toBe(best);
            const holders = [...model.entries()]
              .filter(([, held]) => Math.floor(commonPrefix(held, o.tokens) / B) >= best && best > 0)
              .map(([h]) => h);
            expect([...(got?.refs ?? [])].sort()).toEqual(holders.sort());
          }
        }
      }),
    );
  });
});

describe("public prefixes", () => {
  it("parse the operator's entries and refuse malformed ones", () => {
    const sha = publicPrefixHash("hello");
    expect(parsePublicPrefixes(`cc-2.1=${sha}:5, ${sha}:3`)).toEqual([
      { name: "cc-2.1", sha256: sha, chars: 5 },
      { name: sha.slice(0, 12), sha256: sha, chars: 3 },
    ]);
    expect(parsePublicPrefixes(undefined)).toEqual([]);
    expect(() => parsePublicPrefixes("abc:5")).toThrow(/FRONTIER_PUBLIC_PREFIXES/);
    expect(() => parsePublicPrefixes(`${sha}:0`)).toThrow();
    expect(() => loadSharedPrefixOptions({ FRONTIER_PUBLIC_PREFIXES: "nope" })).toThrow();
    expect(loadSharedPrefixOptions({})).toMatchObject({ enabled: true, blockTokens: 256, minTokens: 256 });
    expect(loadSharedPrefixOptions({ FRONTIER_SHARED_PREFIX: "off" }).enabled).toBe(false);
  });

  it("match only text that starts with exactly the registered bytes; the longest wins", () => {
    const header = "<|im_start|>system\nYou are a coding agent.";
    const longer = `${header}\n# Tools`;
    const registry = new PublicPrefixRegistry([
      { name: "short", sha256: publicPrefixHash(header), chars: header.length },
      { name: "long", sha256: publicPrefixHash(longer), chars: longer.length },
    ]);
    expect(registry.match(`${header}\nsomething private`)?.name).toBe("short");
    expect(registry.match(`${longer} and more`)?.name).toBe("long");
    expect(registry.match(header.replace("coding", "Coding"))).toBeUndefined();
    expect(registry.match(header.slice(0, -1))).toBeUndefined();
  });
});
