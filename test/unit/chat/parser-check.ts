/** Helpers for the output-parser tests: awkward chunkings and the invariants every parse keeps. */
import { expect } from "vitest";
import type { ChatFormat, GrammarTool, OutputEvent } from "../../../gpu-worker/chat/types.ts";

export interface ParseOptions {
  thinkingOpen: boolean;
  tools?: readonly GrammarTool[];
}

/** Merge adjacent text / thinking deltas and each call's argument deltas: chunking splits them differently. */
export function normalize(events: readonly OutputEvent[]): OutputEvent[] {
  const out: OutputEvent[] = [];
  for (const e of events) {
    const last = out.at(-1);
    if (last && (e.type === "text" || e.type === "thinking") && last.type === e.type) last.text += e.text;
    else if (last && e.type === "tool_call_args" && last.type === "tool_call_args" && last.index === e.index)
      last.text += e.text;
    else out.push({ ...e });
  }
  return out;
}

export function parseChunks(format: ChatFormat, options: ParseOptions, chunks: readonly string[]): OutputEvent[] {
  const parser = format.createOutputParser(options);
  return [...chunks.flatMap((c) => parser.push(c)), ...parser.finish()];
}

export function parse(format: ChatFormat, options: ParseOptions, chunks: readonly string[]): OutputEvent[] {
  return normalize(parseChunks(format, options, chunks));
}

/** Every started call ends once; its deltas concatenate to its arguments, a JSON object; raw is where it says. */
export function expectCallInvariants(output: string, events: readonly OutputEvent[]): void {
  const args = new Map<number, string>();
  const open = new Set<number>();
  for (const e of events) {
    if (e.type === "tool_call_start") {
      expect(open.has(e.index)).toBe(false);
      open.add(e.index);
      args.set(e.index, "");
    } else if (e.type === "tool_call_args") {
      expect(open.has(e.index)).toBe(true);
      args.set(e.index, (args.get(e.index) ?? "") + e.text);
    } else if (e.type === "tool_call_end") {
      expect(open.delete(e.index)).toBe(true);
      expect(e.argumentsJson).toBe(args.get(e.index));
      const value: unknown = JSON.parse(e.argumentsJson);
      expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
      expect(output.slice(e.offset, e.offset + e.raw.length)).toBe(e.raw);
    }
  }
  expect([...open]).toEqual([]);
}

/** Whole, at every split point, one UTF-16 unit at a time, and seeded random multi-splits: the same events. */
export function expectChunkingInvariant(format: ChatFormat, options: ParseOptions, output: string): OutputEvent[] {
  const whole = parse(format, options, [output]);
  expectCallInvariants(output, parseChunks(format, options, [output]));
  for (let i = 0; i <= output.length; i++) {
    expect(parse(format, options, [output.slice(0, i), output.slice(i)]), `split at ${i}`).toEqual(whole);
  }
  const single = parseChunks(format, options, output.split(""));
  expectCallInvariants(output, single);
  expect(normalize(single)).toEqual(whole);
  let seed = 7;
  for (let round = 0; round < 30; round++) {
    const chunks: string[] = [];
    for (let at = 0; at < output.length; ) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const len = 1 + (seed % 9);
      chunks.push(output.slice(at, at + len));
      at += len;
    }
    expect(parse(format, options, chunks)).toEqual(whole);
  }
  return whole;
}

/** The argument deltas a call streams when the output arrives a few characters at a time. */
export function argumentDeltas(format: ChatFormat, options: ParseOptions, output: string): string[] {
  const chunks = output.match(/[\s\S]{1,3}/g) ?? [];
  return parseChunks(format, options, chunks).flatMap((e) => (e.type === "tool_call_args" ? [e.text] : []));
}
