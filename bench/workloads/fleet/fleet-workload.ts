/**
 * `npm run bench -- --only fleet`: an agent fleet's first turns (issue 45 item 4), Frontier and
 * llama-server side by side in one run. Two tenants run the same client version (one system prompt
 * and tool list, registered as a public prefix); each tenant's agents share a project-context first
 * message that differs only in its last line. Per tenant, the first agent starts alone, then the
 * others start together (a lead agent, then its parallel subagents). Frontier: one worker with as
 * many sequences as agents per tenant, the public prefix registered from the two tenants' first
 * requests as an operator would (scripts/public-prefix.ts). llama-server: `--parallel` = the same,
 * the same KV cells per slot, its prompt cache as shipped, the same conversation as chat messages.
 * Checks: every first turn after a tenant's first copies a shared prefix and prefills only its
 * non-shared suffix (its task line, plus the turn's closing framing); the second tenant's first
 * turn restores the public prefix.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publicPrefixEntry, workerFormat } from "../../../scripts/public-prefix.ts";
import { startStack, stopChild } from "../../../scripts/stack.ts";
import { BENCH_KEY, countTokens, streamTurn } from "../../clients/edge-client.ts";
import { startLlamaServer } from "../../peer/llama-server-process.ts";
import { llamaServerBinary } from "../../trace/targets.ts";
import type { Workload } from "../../workload.ts";
import {
  cutMessage,
  FLEET_SIZES,
  type FleetAgent,
  fleetAgents,
  QUICK_FLEET_SIZES,
  sharedMessageChars,
} from "./fleet-agents.ts";
import { llamaServerTurn } from "./fleet-peer.ts";
import { type FleetTurn, fleetSection, fleetSummary, fleetViolations } from "./fleet-report.ts";

const OTHER_KEY = "sk-frontier-bench-fleet-tenant-b";

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Buffer.from(digest).toString("hex");
}

/** Tenant by tenant: the first agent alone, then the others at once. */
async function inPhases<T>(agents: readonly FleetAgent[], run: (agent: FleetAgent) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (const tenant of [...new Set(agents.map((a) => a.tenant))]) {
    const mine = agents.filter((a) => a.tenant === tenant);
    const [lead, ...rest] = mine;
    if (lead) out.push(await run(lead));
    out.push(...(await Promise.all(rest.map(run))));
  }
  return out;
}

export const fleetWorkload: Workload = {
  name: "fleet",
  needsStack: false,
  async run({ options, progress }) {
    if (options.family !== undefined) throw new Error("the fleet workload runs the byte-level generated model");
    const sizes = options.quick ? QUICK_FLEET_SIZES : FLEET_SIZES;
    const agents = fleetAgents(sizes);
    const contextSize = Math.ceil((sizes.systemChars + sizes.contextChars + 4096) / 1024) * 1024;
    const format = await workerFormat({ FRONTIER_MODEL_PATH: options.modelPath });
    const firsts = agents.filter((a) => a.index === 0).map((a) => a.body);
    const { entry, text } = publicPrefixEntry(format, firsts, "fleet-client-2.1.0");
    progress(`fleet: ${agents.length} agents, public prefix ${text.length} characters, context ${contextSize}`);
    const dir = mkdtempSync(join(tmpdir(), "frontier-fleet-"));
    const stack = await startStack({
      workers: 1,
      edgeStateDir: join(dir, "edge"),
      workerEnv: {
        FRONTIER_MODEL_PATH: options.modelPath,
        FRONTIER_CONTEXT_SIZE: String(contextSize),
        FRONTIER_SEQUENCES: String(sizes.agents),
        FRONTIER_STATE_DIR: join(dir, "worker"),
        FRONTIER_PUBLIC_PREFIXES: entry,
      },
      edgeVars: {
        API_KEYS: JSON.stringify({ [await sha256(BENCH_KEY)]: "fleet-a", [await sha256(OTHER_KEY)]: "fleet-b" }),
      },
      verbose: process.env.FRONTIER_BENCH_VERBOSE === "1",
    });
    const frontier: FleetTurn[] = [];
    try {
      const done = new Set<FleetAgent>();
      const turns = await inPhases(agents, async (agent) => {
        const key = agent.tenant === 0 ? BENCH_KEY : OTHER_KEY;
        const earlier = agents.filter((a) => done.has(a) || (a.tenant === agent.tenant && a.index === 0));
        const turn = await streamTurn(stack.edgeUrl, agent.body, crypto.randomUUID(), { "x-api-key": key });
        done.add(agent);
        const shared = agent.index === 0 ? 0 : sharedMessageChars(agent, earlier);
        const unique =
          shared === 0
            ? undefined
            : (await countTokens(stack.edgeUrl, agent.body)) -
              (await countTokens(stack.edgeUrl, cutMessage(agent, shared)));
        const prompt = turn.inputTokens + turn.cachedTokens;
        return {
          agent: agent.name,
          tenant: agent.tenant,
          index: agent.index,
          decision: /decision=([\w-]+)/.exec(turn.cache)?.[1] ?? "?",
          prompt,
          cached: turn.cachedTokens,
          prefilled: turn.inputTokens,
          ttftMs: turn.firstBlockMs,
          unique,
        } satisfies FleetTurn;
      });
      frontier.push(...turns);
      progress(`fleet: Frontier done (${frontier.map((t) => t.decision).join(", ")})`);
    } finally {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    const binary = options.quick ? options.llamaServer : llamaServerBinary(options.llamaServer);
    const peer: FleetTurn[] = [];
    if (binary) {
      progress(`fleet: llama-server (${binary})`);
      const server = await startLlamaServer(binary, options.modelPath, contextSize, sizes.agents);
      try {
        peer.push(...(await inPhases(agents, (agent) => llamaServerTurn(server.url, agent))));
      } finally {
        await stopChild(server.child);
      }
    } else {
      progress("fleet: no llama-server binary (scripts/build-llama-server.sh, or --llama-server PATH): Frontier only");
    }
    return {
      summary: fleetSummary(frontier, peer),
      section: fleetSection(frontier, peer, { sizes, publicChars: text.length, contextSize }),
      violations: fleetViolations(frontier),
    };
  },
};
