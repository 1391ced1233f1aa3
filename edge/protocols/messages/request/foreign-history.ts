/**
 * Which blocks of a Messages history are Frontier's own and which another provider's. A search
 * hit whose `encrypted_content` opens as Frontier's sealed text for this tenant is Frontier's (its
 * text is what the model read); anything else is foreign and renders from its visible fields only.
 * A thinking block is Frontier's only when its signature verifies for this tenant; a foreign or
 * tampered one is context, never the model's own reasoning.
 */
import { signThinking } from "../../../../shared/thinking-signature.ts";
import { openText, type SealPurpose } from "../../../core/sealed-text.ts";
import { parseSealedHit } from "../../../server-tools/sealed-hit.ts";
import type { InputBlock, InputMessage, SearchHitInput, WebFetchContent } from "./types.ts";

/** How the edge recognises its own blobs; injected so tests and other callers can supply their own. */
export interface OwnBlobs {
  /** Frontier's sealed text for this tenant and purpose, or undefined (foreign, tampered, another tenant's). */
  open(purpose: SealPurpose, blob: string): Promise<string | undefined>;
  /** The signature is the one Frontier minted for exactly this thinking and tenant. */
  signedThinking(thinking: string, signature: string): Promise<boolean>;
}

export function ownBlobsFor(secret: string, tenant: string): OwnBlobs {
  return {
    open: (purpose, blob) => openText(secret, tenant, purpose, blob),
    signedThinking: async (thinking, signature) =>
      constantTimeEqual(await signThinking(secret, tenant, thinking), signature),
  };
}

export async function resolveOwnBlocks(messages: InputMessage[], own: OwnBlobs): Promise<InputMessage[]> {
  // Most histories carry none of these blocks: they pass through as they are, without a promise per block.
  if (!messages.some((message) => message.content.some(mayBeOwn))) return messages;
  return Promise.all(
    messages.map(async (message) => ({
      ...message,
      content: await Promise.all(message.content.map((block) => resolveBlock(block, own))),
    })),
  );
}

/** Blocks whose meaning depends on whether Frontier minted them (resolveBlock changes nothing else). */
function mayBeOwn(block: InputBlock): boolean {
  return (
    (block.type === "thinking" && block.foreign) ||
    block.type === "web_search_tool_result" ||
    block.type === "web_fetch_tool_result"
  );
}

async function resolveBlock(block: InputBlock, own: OwnBlobs): Promise<InputBlock> {
  switch (block.type) {
    case "thinking":
      if (!block.foreign) return block;
      return { ...block, foreign: !(await own.signedThinking(block.thinking, block.signature)) };
    case "web_search_tool_result": {
      const content = block.content;
      if (content.type === "error") return block;
      const hits = await Promise.all(content.hits.map((hit) => ownHit(hit, own)));
      return { ...block, content: { type: "hits", hits } };
    }
    case "web_fetch_tool_result":
      return { ...block, content: await ownPage(block.content, own) };
    default:
      return block;
  }
}

/**
 * The own-blob branch for a hit: Frontier seals the JSON of exactly what the model read
 * (edge/server-tools/sealed-hit.ts), so its URL, title and age come back from the blob too.
 */
async function ownHit(hit: SearchHitInput, own: OwnBlobs): Promise<SearchHitInput> {
  const sealed = parseSealedHit(await own.open("web_search_hit", hit.encrypted_content));
  if (!sealed) return { ...hit, text: undefined };
  return { ...hit, url: sealed.url, title: sealed.title, page_age: sealed.pageAge, text: sealed.text };
}

/** A fetched page's text: Frontier's own sealed page when it opens, else the document's visible text. */
async function ownPage(content: WebFetchContent, own: OwnBlobs): Promise<WebFetchContent> {
  if (content.type === "error" || content.data === undefined) return content;
  const opened = await own.open("web_fetch_page", content.data);
  return opened === undefined ? content : { ...content, data: opened };
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
