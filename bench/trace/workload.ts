/**
 * `npm run bench -- --only trace [--trace FILE] [--quick] [--json OUT] [--llama-server-prompt framed|raw]`:
 * a production request trace (Mooncake's conversation trace by default), scaled down, replayed
 * open-loop against Frontier through the edge (1 and 2 workers) and llama-server on the same GGUF,
 * slots and KV cells, one after the other in the same run. --quick replays a tiny slice on one worker
 * (llama-server only if given). llama-server gets the same token sequence as Frontier's worker
 * prefills (`framed`, the default: chat-framing.ts) or the trace's token ids alone (`raw`).
 */
import { writeFileSync } from "node:fs";
import { DEFAULT_BLOCK_TOKENS } from "../../gpu-worker/continuation/shared-prefix/options.ts";
import { TEST_MODEL_SPECS } from "../../native/model/gguf-writer.ts";
import type { Workload } from "../workload.ts";
import { BlockTokens, oneToOneAlphabet, tokensToText } from "./block-tokens.ts";
import { modelChatFraming, type PeerPromptMode } from "./chat-framing.ts";
import { accountingViolations, checkFrontierFraming } from "./framing-check.ts";
import { frontierTarget } from "./frontier-target.ts";
import { llamaServerTarget } from "./llama-server-target.ts";
import { replay } from "./replay.ts";
import { scaleTrace, type TraceScaling } from "./scale.ts";
import { summarise } from "./summary.ts";
import { llamaServerBinary, startFrontier, startPeer } from "./targets.ts";
import { defaultTracePath, infiniteCacheCeiling, readTrace } from "./trace-file.ts";
import { type ReplaySystem, traceFiles, traceJson, traceSection, traceSummaryRows } from "./trace-report.ts";

export const DEFAULT_SCALING: TraceScaling = { blockTokens: 32, maxRequests: 60, spanSeconds: 120, seed: 1 };
export const QUICK_SCALING: TraceScaling = { blockTokens: 8, maxRequests: 6, spanSeconds: 3, seed: 1 };

export interface TraceArgs {
  trace?: string | undefined;
  json?: string | undefined;
  /** How llama-server is prompted (default framed). */
  peerPrompt?: PeerPromptMode | undefined;
}

export function traceWorkload(args: () => TraceArgs): Workload {
  return {
    name: "trace",
    needsStack: false,
    async run({ options, progress }) {
      if (options.family !== undefined) throw new Error("the trace replay needs the byte-level generated model");
      const { trace: tracePath = defaultTracePath(), json, peerPrompt = "framed" } = args();
      const full = readTrace(tracePath);
      const scaling = options.quick ? QUICK_SCALING : DEFAULT_SCALING;
      const scaled = scaleTrace(full, scaling);
      const blocks = new BlockTokens(oneToOneAlphabet(TEST_MODEL_SPECS[options.size].vocab), scaling.blockTokens);
      // The worker's chat framing (its format and tokenizer), checked against every Frontier turn below.
      const framing = await modelChatFraming(options.modelPath, blocks.block(-1));
      progress(
        `trace: ${framing.format} framing: ${framing.open.length} tokens before a first turn's text, ${framing.close.length} after every turn's, ${framing.between.length} between an output and the next text; llama-server prompts ${peerPrompt}`,
      );
      const contextSize =
        Math.ceil((Math.max(...scaled.requests.map((r) => r.inputLength + r.outputLength)) + 256) / 256) * 256;
      progress(
        `trace: ${scaled.requests.length} requests (${scaled.conversations} conversations) of ${full.length}, blocks of ${scaling.blockTokens}, ceiling ${(100 * scaled.ceiling.blocks).toFixed(1)}% (blocks) / ${(100 * scaled.ceiling.withOwnOutput).toFixed(1)}% (own output), context ${contextSize} × 2`,
      );
      const systems: ReplaySystem[] = [];
      const violations: string[] = [];
      const framingNotes: string[] = [];
      for (const workers of options.quick ? [1] : [1, 2]) {
        const name = workers === 1 ? "Frontier, 1 worker" : `Frontier, ${workers} workers`;
        progress(`trace: starting ${name}`);
        const frontier = await startFrontier(workers, options.modelPath, contextSize, sharedPrefixEnv(scaled.factor));
        try {
          const target = frontierTarget(name, frontier.edgeUrl, blocks);
          await target.send(
            { ...scaled.requests[0]!, id: -1, hashIds: [-1], inputLength: scaling.blockTokens, parent: undefined },
            undefined,
          );
          const before = await frontier.metrics();
          const run = await replay(scaled.requests, target, progress);
          const after = await frontier.metrics();
          const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
          const queueCount = delta("frontier:request_queue_time_seconds_count");
          const queueMean =
            queueCount > 0 ? (1000 * delta("frontier:request_queue_time_seconds_sum")) / queueCount : Number.NaN;
          const decisions = [...after.keys()]
            .filter((k) => k.startsWith("frontier:continuation_decisions_total{"))
            .map((k) => [k.replace(/^.*decision="([^"]*)".*$/, "$1"), delta(k)] as const)
            .filter(([, n]) => n > 0);
          systems.push({
            key: workers === 1 ? "frontier" : `frontier_${workers}_workers`,
            run,
            summary: summarise(scaled, run, queueMean),
            decisions,
          });
          const check = checkFrontierFraming(run, scaled.requests, framing);
          progress(`trace: ${check.note}`);
          framingNotes.push(check.note);
          violations.push(...check.violations);
        } finally {
          await frontier.stop();
        }
      }
      const binary = options.quick ? options.llamaServer : llamaServerBinary(options.llamaServer);
      if (binary) {
        progress(`trace: starting llama-server (${binary})`);
        const peer = await startPeer(binary, options.modelPath, contextSize);
        try {
          const first = blocks.prompt(scaled.requests[0]!.hashIds, scaled.requests[0]!.inputLength);
          const tokenized = await fetch(`${peer.url}/tokenize`, {
            method: "POST",
            body: JSON.stringify({ content: tokensToText(first) }),
          }).then((r) => r.json() as Promise<{ tokens: number[] }>);
          if (tokenized.tokens.join(",") !== first.join(",")) {
            violations.push(
              "llama-server tokenizes the prompt text differently from its token ids: the 1:1 alphabet is wrong for this model",
            );
          }
          const target = llamaServerTarget(peer.url, blocks, peerPrompt === "framed" ? framing : undefined);
          await target.send(
            { ...scaled.requests[0]!, id: -1, hashIds: [-1], inputLength: scaling.blockTokens, parent: undefined },
            undefined,
          );
          const run = await replay(scaled.requests, target, progress);
          systems.push({ key: "llama_server", run, summary: summarise(scaled, run), decisions: [] });
          violations.push(...accountingViolations(target.mismatches));
        } finally {
          await peer.stop();
        }
      } else {
        progress(
          "trace: no llama-server binary (scripts/build-llama-server.sh, or --llama-server PATH): Frontier only",
        );
      }
      for (const s of systems) {
        if (s.run.failures.length > 0)
          violations.push(
            `${s.run.target}: ${s.run.failures.length} requests failed (first: ${s.run.failures[0]?.error})`,
          );
      }
      const context = {
        tracePath,
        fullRequests: full.length,
        fullCeiling: infiniteCacheCeiling(full),
        scaled,
        contextSize,
        peerPrompt,
        framingNotes,
      };
      if (json) writeFileSync(json, `${JSON.stringify(traceJson(context, systems), null, 2)}\n`);
      return {
        summary: traceSummaryRows(context, systems),
        section: traceSection(context, systems),
        files: traceFiles(scaled, systems),
        violations,
      };
    },
  };
}

/**
 * The worker's shared-prefix blocks scaled with the trace, as its lengths are: the production trace's
 * blocks are 512 tokens and the worker indexes blocks of 256 (FRONTIER_PREFIX_BLOCK_TOKENS), so at
 * ×1/16 a block is 16 tokens, and a prefix worth copying (FRONTIER_PREFIX_MIN_TOKENS, one block) too.
 * Unscaled, no first turn of the sample shares a whole 256-token block with another conversation
 * (they share 32-160 tokens), and the rung would never be tried.
 */
function sharedPrefixEnv(factor: number): Record<string, string> {
  const block = String(Math.max(1, Math.round(DEFAULT_BLOCK_TOKENS * factor)));
  return { FRONTIER_PREFIX_BLOCK_TOKENS: block, FRONTIER_PREFIX_MIN_TOKENS: block };
}
