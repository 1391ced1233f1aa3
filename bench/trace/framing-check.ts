/**
 * Run-time checks that the framing the replay sends llama-server is what Frontier's worker prefilled,
 * and that llama-server accounted every prompt it was sent (prompt_n + cache_n = tokens sent).
 *
 * A Frontier first turn's `input_tokens` must be exactly open + its input + close. A next turn served
 * from the live KV (`live-text-prefix`) must be its parent's prompt + the parent's output + between +
 * what it adds + close, give or take the parent's last sampled token: the worker's KV holds every
 * sampled token but the last (never decoded), and the worker tokenizes the suffix from the text, so
 * that token comes back from its text. The random-weight model often samples a byte that is not
 * valid UTF-8 on its own, whose text is U+FFFD: three byte tokens, 2 more than predicted. Other next
 * turns (a copy or a restore after the turn moved) are not predicted and are counted as unchecked.
 */
import type { ChatFraming } from "./chat-framing.ts";
import type { AccountingMismatch } from "./llama-server-target.ts";
import type { ReplayRun } from "./replay.ts";

interface TraceTurn {
  id: number;
  parent: number | undefined;
  inputLength: number;
  outputLength: number;
}

/** The most a re-tokenized last sampled token adds (U+FFFD: 3 byte tokens for 1). */
const LAST_TOKEN_TEXT_SLACK = 2;

interface FramingCheck {
  violations: string[];
  /** What was checked, for the progress log and the report. */
  note: string;
}

/** Frontier's prompt tokens for a replayed turn as the framing predicts them; undefined when not predictable. */
function predicted(
  run: ReplayRun,
  requests: readonly TraceTurn[],
  framing: ChatFraming,
  id: number,
): number | undefined {
  const request = requests[id];
  if (!request) return undefined;
  if (request.parent === undefined) return framing.open.length + request.inputLength + framing.close.length;
  const parent = requests[request.parent];
  const parentResult = run.requests.find((r) => r.id === request.parent);
  if (!parent || !parentResult) return undefined;
  const added = request.inputLength - parent.inputLength - parent.outputLength;
  return parentResult.promptTokens + parentResult.outputTokens + framing.between.length + added + framing.close.length;
}

export function checkFrontierFraming(
  run: ReplayRun,
  requests: readonly TraceTurn[],
  framing: ChatFraming,
): FramingCheck {
  const off: string[] = [];
  let first = 0;
  let next = 0;
  let unchecked = 0;
  let slackTurns = 0;
  let slackTokens = 0;
  for (const r of run.requests) {
    const isFirst = requests[r.id]?.parent === undefined;
    const want = predicted(run, requests, framing, r.id);
    if (want === undefined || (!isFirst && r.decision !== "live-text-prefix")) {
      unchecked++;
      continue;
    }
    const extra = r.promptTokens - want;
    if (isFirst) first++;
    else next++;
    if (extra === 0) continue;
    if (!isFirst && extra > 0 && extra <= LAST_TOKEN_TEXT_SLACK) {
      slackTurns++;
      slackTokens += extra;
      continue;
    }
    off.push(`${isFirst ? "first" : "next"} turn ${r.id}: ${r.promptTokens} vs ${want}`);
  }
  const note =
    `${run.target}: ${first} first turns and ${next} live next turns match the ${framing.format} framing` +
    ` (${slackTurns} next turns +${slackTokens} tokens: the parent's last sampled token re-tokenized from its text); ${unchecked} unchecked`;
  const violations =
    off.length === 0
      ? []
      : [
          `${run.target}: ${off.length} turns' input_tokens are not the ${framing.format} framing's prediction (${off.slice(0, 3).join("; ")}): ` +
            "the framing sent to llama-server is not what the worker prefilled",
        ];
  return { violations, note };
}

/** llama-server requests whose timings did not add up to the prompt sent. */
export function accountingViolations(mismatches: readonly AccountingMismatch[]): string[] {
  const first = mismatches[0];
  return first === undefined
    ? []
    : [
        `llama-server: ${mismatches.length} requests' prompt_n + cache_n differ from the tokens sent ` +
          `(first: turn ${first.id}, ${first.promptN} + ${first.cacheN} vs ${first.sent})`,
      ];
}
