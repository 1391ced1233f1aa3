/**
 * What each load agent says, decided up front and deterministically from its name: its own system
 * prompt, the tools (small bounded arguments, so a forced call fits a small max_tokens), its task,
 * what the simulated tools answer, how long they take, and which turns the client aborts.
 */
import { filler, hash32 } from "../../text.ts";
import type { AgentTool } from "../agent-loop.ts";

const WORDS = (
  "file path read write test run error build module import export function return type class async " +
  "promise value result config option command output line change diff commit branch review lint format " +
  "package script server client request response queue worker session token cache stream"
).split(" ");

export const LOAD_TOOLS: AgentTool[] = [
  ["Read", "path"],
  ["Bash", "command"],
  ["Grep", "pattern"],
].map(([name = "", argument = ""]) => ({
  name,
  description: `${name} the workspace: ${filler(12, hash32(name), WORDS)}`,
  input_schema: {
    type: "object",
    properties: { [argument]: { type: "string", maxLength: 8 } },
    required: [argument],
  },
}));

/** A system prompt of about `words` words that no other agent shares (its first line names the agent). */
export function systemPrompt(agent: string, words: number): string {
  return `You are load agent ${agent}. Work through the task with the tools.\n${filler(words, hash32(agent), WORDS)}`;
}

export function taskText(agent: string): string {
  return `${agent}: find why the build fails and fix it.`;
}

/** A simulated tool's output: 20–60 words, fixed for the agent, turn and call. */
export function toolOutput(agent: string, turn: number, call: number): string {
  const h = hash32(`${agent}:${turn}:${call}:out`);
  return filler(20 + (h % 41), h, WORDS);
}

/** The tool time after turn `turn`: uniform in [min, max] ms, fixed for the agent and turn. */
export function toolPauseMs(agent: string, turn: number, [min, max]: readonly [number, number]): number {
  return min + (hash32(`${agent}:${turn}:pause`) % (max - min + 1));
}

/** Whether the client aborts turn `turn` after its first event (and then re-sends it). */
export function abortsTurn(agent: string, turn: number, share: number): boolean {
  return hash32(`${agent}:${turn}:abort`) % 10_000 < share * 10_000;
}

/**
 * The order the tools finish in (call positions, 0-based): by a simulated duration per call, as a
 * client returns results when its tools finish, not in call order.
 */
export function finishOrder(agent: string, turn: number, calls: number): number[] {
  return Array.from({ length: calls }, (_, i) => i).sort(
    (a, b) => (hash32(`${agent}:${turn}:${a}:t`) % 1000) - (hash32(`${agent}:${turn}:${b}:t`) % 1000),
  );
}
