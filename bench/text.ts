/** Deterministic text for benchmark prompts: the same arguments always give the same bytes. */

const WORDS = "agent tool result session worker prefix token cache stream model prompt frontier edge route state".split(
  " ",
);

/** A seeded linear congruential generator (32-bit). */
export function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state;
  };
}

/** Filler prose of `words` words drawn from `vocabulary`, a line break every 17 words. */
export function filler(words: number, seed = 7, vocabulary: readonly string[] = WORDS): string {
  const next = lcg(seed);
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    out.push(vocabulary[next() % vocabulary.length] ?? "agent");
    if (i % 17 === 16) out.push(".\n");
  }
  return out.join(" ");
}

/** A string's 32-bit FNV-1a hash (seeds per agent, turn and call). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
