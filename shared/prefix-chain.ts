/**
 * The text-side chain of a conversation's prefix, for placement: the edge computes it from the
 * request it normalised, the worker from the same proto fields, so "this worker holds KV whose prompt
 * starts with these bytes" is compared without either side tokenizing or rendering.
 *
 * `chain[0]` is the prefix fingerprint of system + tools (prefix-fingerprint.ts, tenant included, so
 * tenants never share a hash); `chain[i]` hashes `chain[i-1]` with the i-th chunk of
 * PREFIX_CHUNK_CHARS characters of the messages' canonical text (role, then each block's kind and text
 * fields, in order). Two conversations of one tenant with the same system + tools whose messages
 * agree on their first n characters share chain[0..floor(n / PREFIX_CHUNK_CHARS)]: a new agent whose
 * first user message differs from another's only at its end shares every chunk before that end.
 * Only full chunks are hashed, at most PREFIX_CHAIN_DEPTH of them. 32 hex characters each, the
 * fingerprint's shape, so a worker report carries them in the same field.
 *
 * The worker's token-level shared-prefix index decides what is reused; this chain only says where
 * to look (a hint, never trusted: the worker compares the tokens).
 */

import { toHex } from "./ids.ts";
import { type PrefixParts, prefixFingerprint } from "./prefix-fingerprint.ts";

/** Characters of message text per chained chunk (~128-512 tokens of real text). */
export const PREFIX_CHUNK_CHARS = 1024;
/** Chunks hashed at most (the first 256k characters of the messages). */
export const PREFIX_CHAIN_DEPTH = 256;

/** The proto's content blocks as the chain reads them (structural: shared/ imports no proto). */
export type ChainBlock =
  | { case: "text"; value: { text: string } }
  | { case: "thinking"; value: { thinking: string } }
  | { case: "toolUse"; value: { id: string; name: string; inputJson: string } }
  | { case: "toolResult"; value: { toolUseId: string; content: string; isError: boolean } }
  | { case: "opaque"; value: { type: string; text: string } }
  | { case: "serverToolUse"; value: { id: string; name: string; inputJson: string } }
  | { case: "serverToolResult"; value: { toolUseId: string; type: string; text: string } }
  | { case: undefined; value?: undefined };

export interface ChainConversation extends PrefixParts {
  messages: readonly { role: number; content: readonly { block: ChainBlock }[] }[];
}

/** The canonical text of the messages, as far as the chain reads it (`limit` characters at most). */
export function chainText(messages: ChainConversation["messages"], limit: number): string {
  let out = "";
  for (const message of messages) {
    out += `\u0001${message.role}`;
    for (const { block } of message.content) {
      out += `\u0002${block.case ?? ""}\u0003${blockFields(block).join("\u0003")}`;
      if (out.length >= limit) return out.slice(0, limit);
    }
  }
  return out;
}

function blockFields(block: ChainBlock): string[] {
  switch (block.case) {
    case "text":
      return [block.value.text];
    case "thinking":
      return [block.value.thinking];
    case "toolUse":
    case "serverToolUse":
      return [block.value.id, block.value.name, block.value.inputJson];
    case "toolResult":
      return [block.value.toolUseId, block.value.isError ? "1" : "0", block.value.content];
    case "opaque":
      return [block.value.type, block.value.text];
    case "serverToolResult":
      return [block.value.toolUseId, block.value.type, block.value.text];
    case undefined:
      return [];
  }
}

/** `[fingerprint, chunk 1, …]`: the prefix fingerprint then one hash per full chunk of the messages. */
export async function prefixChain(
  tenant: string,
  conversation: ChainConversation,
  depth = PREFIX_CHAIN_DEPTH,
): Promise<string[]> {
  const root = await prefixFingerprint(tenant, conversation);
  const text = chainText(conversation.messages, depth * PREFIX_CHUNK_CHARS);
  const chain = [root];
  const encoder = new TextEncoder();
  for (let at = 0; at + PREFIX_CHUNK_CHARS <= text.length; at += PREFIX_CHUNK_CHARS) {
    const input = encoder.encode(`${chain[chain.length - 1]}${text.slice(at, at + PREFIX_CHUNK_CHARS)}`);
    const digest = await crypto.subtle.digest("SHA-256", input);
    chain.push(toHex(new Uint8Array(digest)).slice(0, 32));
  }
  return chain;
}

/**
 * The depths of a held chain a worker advertises (bounded, whatever its length): 0, 1, 2, 4, 8, …
 * and the last. A request matching a holder to depth d finds an advertised depth ≥ d/2.
 */
export function advertisedDepths(length: number): number[] {
  const depths: number[] = [];
  for (let d = 0; d < length; d = d === 0 ? 1 : d * 2) depths.push(d);
  if (length > 0 && depths[depths.length - 1] !== length - 1) depths.push(length - 1);
  return depths;
}

/** The deepest index of `chain` present in `held` (-1: not even the fingerprint). */
export function deepestHeld(chain: readonly string[], held: ReadonlySet<string>): number {
  for (let i = chain.length - 1; i >= 0; i--) if (held.has(chain[i] ?? "")) return i;
  return -1;
}
