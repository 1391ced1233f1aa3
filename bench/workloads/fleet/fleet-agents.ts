/**
 * The agent fleet's requests (issue 45 item 4): Claude-Code-like first turns. Every agent of every
 * tenant runs the same client version — one system prompt and one tool list, byte-identical (what the
 * operator registers as a public prefix) — and a tenant's agents share a project-context first user
 * message (instructions, environment, repository notes) that differs only in its last line, the
 * agent's task. Sizes in characters; the byte-level test model reads ~1 token per character.
 */
import type { AgentTool } from "../agent-loop.ts";

export interface FleetSizes {
  /** Agents per tenant (the first starts alone, the others together). */
  agents: number;
  systemChars: number;
  contextChars: number;
}

export const FLEET_SIZES: FleetSizes = { agents: 4, systemChars: 5000, contextChars: 6000 };
export const QUICK_FLEET_SIZES: FleetSizes = { agents: 2, systemChars: 1200, contextChars: 1500 };

/** A tool as the bench's agents declare it (the agent loop's shape). */
export type FleetTool = AgentTool;

export interface FleetAgent {
  tenant: number;
  /** 0-based within its tenant: agent 0 starts alone, the others together after it. */
  index: number;
  name: string;
  /** The Messages request body of its first turn. */
  body: { model: string; max_tokens: number; system: string; tools: FleetTool[]; messages: FleetMessage[] };
}

interface FleetMessage {
  role: "user";
  content: string;
}

/** Text of about `chars` characters made of numbered lines over `topic` (deterministic, not one repeated line). */
function paragraph(topic: string, chars: number): string {
  const lines: string[] = [];
  let length = 0;
  for (let i = 1; length < chars; i++) {
    const line = `${i}. ${topic} rule ${i}: keep changes small, read the file before editing it, and explain every step (${(i * 7919) % 1000}).`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n").slice(0, chars);
}

function tools(): FleetTool[] {
  const tool = (name: string, description: string, properties: Record<string, object>): FleetTool => ({
    name,
    description,
    input_schema: { type: "object", properties, required: Object.keys(properties) },
  });
  return [
    tool("Bash", "Run a shell command in the project folder and return its output.", {
      command: { type: "string", description: "The command to run" },
    }),
    tool("Read", "Read a file of the project, with line numbers.", {
      file_path: { type: "string", description: "Absolute path of the file" },
    }),
    tool("Edit", "Replace one exact string in a file with another.", {
      file_path: { type: "string" },
      old_string: { type: "string" },
      new_string: { type: "string" },
    }),
    tool("Grep", "Search the project's files for a regular expression.", {
      pattern: { type: "string" },
      path: { type: "string" },
    }),
    tool("Task", "Start a subagent with its own context for a self-contained task.", {
      description: { type: "string" },
      prompt: { type: "string" },
    }),
  ];
}

const TASKS = [
  "fix the flaky test in test/queue.test.ts",
  "rename the helper parseArgs to readArguments everywhere",
  "add a --dry-run flag to the deploy script",
  "document the cache settings in docs/cache.md",
  "find why the build is slow and report it",
  "remove the dead code in src/legacy/",
  "add input validation to the upload handler",
  "write a unit test for the date formatter",
];

/** Every agent of the fleet: `tenants` tenants × `sizes.agents` agents, tenant by tenant. */
export function fleetAgents(sizes: FleetSizes, tenants = 2): FleetAgent[] {
  const system = `You are an interactive CLI agent for software engineering tasks (client 2.1.0).\n${paragraph("Client", sizes.systemChars)}`;
  const toolList = tools();
  const agents: FleetAgent[] = [];
  for (let tenant = 0; tenant < tenants; tenant++) {
    const context = `<system-reminder>\nProject instructions (CLAUDE.md) of repository ${tenant === 0 ? "acme/api" : "globex/web"}:\n${paragraph(`Project ${tenant}`, sizes.contextChars)}\n</system-reminder>\n`;
    for (let index = 0; index < sizes.agents; index++) {
      const task = TASKS[(index + tenant * 3) % TASKS.length] ?? "";
      agents.push({
        tenant,
        index,
        name: `t${tenant}-agent-${index + 1}`,
        body: {
          model: "frontier-test",
          max_tokens: 4,
          system,
          tools: toolList,
          messages: [{ role: "user", content: `${context}Task (agent ${index + 1}): ${task}.` }],
        },
      });
    }
  }
  return agents;
}

/**
 * The characters of `agent`'s first message that no earlier agent of its tenant shares: the suffix
 * after the longest common prefix with any of them (the whole message for a tenant's first agent).
 */
export function sharedMessageChars(agent: FleetAgent, earlier: readonly FleetAgent[]): number {
  const text = agent.body.messages[0]?.content ?? "";
  let best = 0;
  for (const other of earlier) {
    if (other.tenant !== agent.tenant) continue;
    const theirs = other.body.messages[0]?.content ?? "";
    let i = 0;
    while (i < text.length && i < theirs.length && text.charCodeAt(i) === theirs.charCodeAt(i)) i++;
    best = Math.max(best, i);
  }
  return best;
}

/** The same body with its first message cut to `chars` characters. */
export function cutMessage(agent: FleetAgent, chars: number): FleetAgent["body"] {
  const text = agent.body.messages[0]?.content ?? "";
  return { ...agent.body, messages: [{ role: "user", content: text.slice(0, chars) }] };
}
