/**
 * `npm run public-prefix -- [--name LABEL] request.json [more.json …]`: the FRONTIER_PUBLIC_PREFIXES
 * entry of a client version's public prefix, from Anthropic Messages request bodies it sent
 * (captured, e.g., with a recording proxy). Each is rendered exactly as this worker renders it (its
 * model and chat format: FRONTIER_MODEL_PATH, FRONTIER_CHAT_FORMAT, FRONTIER_HARMONY_DATE, as the
 * worker reads them; the generated test model without a path). The public prefix is what every
 * capture's rendered prompt starts with, byte for byte, up to the end of system + tools at most
 * (never a message), and never inside a control token. Give captures from different users and
 * machines: what they share is what is published; a single capture registers its whole header and
 * must contain nothing of its user (Claude Code's system prompt names the user's memory folder
 * unless CLAUDE_CODE_DISABLE_AUTO_MEMORY=1). Prints `name=<sha256>:<chars>` (docs/operations/shared-prefixes.md).
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { toConversation } from "../edge/protocols/messages/request/normalize.ts";
import { validateMessagesRequest } from "../edge/protocols/messages/request/validate.ts";
import { segmentsUpTo } from "../gpu-worker/chat/engine/prompt-builder.ts";
import { selectChatFormat } from "../gpu-worker/chat/select-format.ts";
import type { ChatFormat, RenderedPrompt } from "../gpu-worker/chat/types.ts";
import { loadConfig } from "../gpu-worker/config.ts";
import { publicPrefixHash } from "../gpu-worker/continuation/shared-prefix/public-prefixes.ts";
import { offerServerTools } from "../gpu-worker/server-tools/declarations.ts";
import { expandServerTools } from "../gpu-worker/server-tools/expand.ts";
import { inspectModel } from "../native/engine.ts";
import { ensureTestModel } from "../native/model/gguf-writer.ts";

const USAGE = "usage: npm run public-prefix -- [--name LABEL] request.json [more.json …]\n";

function fail(message: string, code = 1): never {
  process.stderr.write(`public-prefix: ${message}\n`);
  process.exit(code);
}

/** The prompt the worker renders for this request's first turn (system, tools, messages). */
function render(format: ChatFormat, body: unknown): RenderedPrompt {
  const request = validateMessagesRequest(body, { requireMaxTokens: false });
  const conversation = toConversation(request);
  const offered = offerServerTools(conversation.serverTools, undefined);
  return format.render(expandServerTools(conversation, offered, new Set()));
}

/** The worker's chat format, chosen as the worker chooses it from its environment. */
export async function workerFormat(env: NodeJS.ProcessEnv = process.env): Promise<ChatFormat> {
  const config = loadConfig({ ...env, FRONTIER_DEV: env.FRONTIER_DEV ?? "1" });
  const modelPath = config.modelPath ?? (await ensureTestModel(config.testModelSize));
  const harmony = config.harmonyDate === undefined ? {} : { currentDate: config.harmonyDate };
  return selectChatFormat(config.chatFormat, await inspectModel(modelPath), harmony).format;
}

/**
 * What the request bodies' rendered prompts share from the start, up to the end of system + tools
 * at most and never inside a control token: the public prefix's text and its registration entry.
 */
export function publicPrefixEntry(
  format: ChatFormat,
  bodies: readonly unknown[],
  name: string,
): { entry: string; text: string; headers: number[] } {
  if (!/^[A-Za-z0-9._@+-]{1,64}$/.test(name)) throw new Error("name: letters, digits and ._@+- only (at most 64)");
  const prompts = bodies.map((body) => render(format, body));
  const headers = prompts.map((p) => p.messageOffsets[0] ?? p.text.length);
  let chars = Math.min(...headers);
  const first = prompts[0]?.text ?? "";
  for (const prompt of prompts) {
    let i = 0;
    while (i < chars && prompt.text.charCodeAt(i) === first.charCodeAt(i)) i++;
    chars = i;
  }
  const segments = prompts[0]?.segments ?? [];
  while (chars > 0 && segmentsUpTo(segments, chars) === undefined) chars--;
  if (chars === 0) throw new Error("the captures share no rendered prefix");
  const text = first.slice(0, chars);
  return { entry: `${name}=${publicPrefixHash(text)}:${chars}`, text, headers };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { name: { type: "string" } },
    strict: true,
  });
  if (positionals.length === 0) {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  const format = await workerFormat();
  const bodies = positionals.map((path) => JSON.parse(readFileSync(path, "utf8")) as unknown);
  const { entry, text, headers } = publicPrefixEntry(format, bodies, values.name ?? "public");
  const lone = "only one capture: its whole header is registered; check that nothing in it is its user's\n";
  process.stderr.write(
    `${format.name} format, ${bodies.length} capture(s); shared ${text.length} characters of headers of ${headers.join(", ")}\n` +
      (bodies.length === 1 ? lone : "") +
      `it ends: ${JSON.stringify(text.slice(-120))}\n`,
  );
  process.stdout.write(`${entry}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
}
