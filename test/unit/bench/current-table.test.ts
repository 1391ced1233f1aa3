import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type CurrentRow,
  parseCurrentTable,
  rowId,
  TABLE_BEGIN,
  TABLE_END,
  updateCurrentTable,
} from "../../../bench/current-table.ts";

const HEADER =
  "| claim | value | spread | measured by | date | machine | source | id |\n| --- | --- | --- | --- | --- | --- | --- | --- |";

function row(id: string, value: string, extra: Partial<CurrentRow> = {}): CurrentRow {
  return {
    id,
    claim: `claim of ${id}`,
    value,
    spread: "n=1",
    command: "`npm run bench`",
    date: "2026-11-30",
    machine: "2 × CPU, no GPU; `mid` model",
    source: "[history](bench/history/README.md)",
    ...extra,
  };
}

function line(r: CurrentRow): string {
  return `| ${r.claim} | ${r.value} | ${r.spread} | ${r.command} | ${r.date} | ${r.machine} | ${r.source} | \`${r.id}\` |`;
}

const before = "# Benchmarks\n\nIntro, written by hand.\n\n";
const after = "\n\n## GPU\n\nAlso by hand.\n";
const rows = [
  row("continuation/a", "**13.8x**"),
  row("edge-alone/by-hand", "**6.48 ms**", {
    spread: "runs 5.63–6.48 \\| by hand",
    date: "not re-measured since 2026-11-30",
  }),
  row("placement/b", "**20%**"),
];
const doc = `${before}${TABLE_BEGIN}\n\n${HEADER}\n${rows.map(line).join("\n")}\n\n${TABLE_END}${after}`;

describe("the current table of docs/benchmarks.md", () => {
  it("rewrites a measured row in place and leaves every other row and the prose as written", () => {
    const fresh = row("placement/b", "**100%**", {
      date: "2026-12-03",
      command: "`npm run bench -- --only placement`",
    });
    const out = updateCurrentTable(doc, [fresh]);
    expect(out.updated).toEqual(["placement/b"]);
    expect(out.added).toEqual([]);
    expect(out.doc.startsWith(`${before}${TABLE_BEGIN}`)).toBe(true);
    expect(out.doc.endsWith(`${TABLE_END}${after}`)).toBe(true);
    expect(parseCurrentTable(out.doc).rows).toEqual([rows[0], rows[1], fresh]);
  });

  it("appends the ids the table does not have, after the existing rows", () => {
    const added = row("routing/new-measure", "**7.2 ms**", { date: "2026-12-03" });
    const out = updateCurrentTable(doc, [added, row("continuation/a", "**14.1x**")]);
    expect(out.updated).toEqual(["continuation/a"]);
    expect(out.added).toEqual(["routing/new-measure"]);
    const ids = parseCurrentTable(out.doc).rows.map((r) => r.id);
    expect(ids).toEqual(["continuation/a", "edge-alone/by-hand", "placement/b", "routing/new-measure"]);
    expect(parseCurrentTable(out.doc).rows[0]?.value).toBe("**14.1x**");
  });

  it("reads back what it wrote, pipes in a cell included", () => {
    const piped = row("x/pipe", "**1 | 2**", { spread: "a\nb" });
    const out = updateCurrentTable(doc, [piped]);
    expect(parseCurrentTable(out.doc).rows.at(-1)).toEqual({ ...piped, value: "**1 \\| 2**", spread: "a b" });
    // Rewriting again changes nothing.
    expect(updateCurrentTable(out.doc, []).doc).toBe(out.doc);
  });

  it("refuses a document without both markers, or with a table it cannot read", () => {
    expect(() => updateCurrentTable(doc.replace(TABLE_END, ""), [])).toThrow(/markers/);
    expect(() => updateCurrentTable(doc.replace(TABLE_BEGIN, ""), [])).toThrow(/markers/);
    expect(() => updateCurrentTable(`${TABLE_END}\n${doc.replace(TABLE_END, "")}`, [])).toThrow(/once each/);
    expect(() => updateCurrentTable(doc.replace("| id |", "| key |"), [])).toThrow(/header/);
    expect(() => updateCurrentTable(doc.replace(" | `placement/b` |", " |"), [])).toThrow(/row 3 has 7 cells/);
    expect(() => updateCurrentTable(doc.replace("`placement/b`", "`continuation/a`"), [])).toThrow(/repeated id/);
    expect(() => updateCurrentTable(doc, [row("a/b", "1"), row("a/b", "2")])).toThrow(/two measurements/);
  });

  it("keys a summary row by its workload and measure, rounding big numbers and naming a non-default model", () => {
    expect(rowId("mid", "continuation vs cold", "cold / continuation TTFT at 2202 tokens")).toBe(
      "continuation-vs-cold/cold-continuation-ttft-2k-tokens",
    );
    expect(rowId("mid", "continuation vs cold", "cold / continuation TTFT at 2,184 tokens")).toBe(
      rowId("mid", "continuation vs cold", "cold / continuation TTFT at 2202 tokens"),
    );
    expect(rowId("mid", "agent loop", "prefilled / suffix, turns 2–5 (19927-token prefix)")).toBe(
      "agent-loop/prefilled-suffix-turns-2-5-20k-token-prefix",
    );
    expect(rowId("qwen3-mid", "agent loop", "prefilled tokens per turn, turns 2+ (median)")).toBe(
      "qwen3-mid:agent-loop/prefilled-tokens-per-turn-turns-2-median",
    );
    expect(rowId("tiny", "placement", "x")).not.toBe(rowId("mid", "placement", "x"));
  });

  it("reads the committed docs/benchmarks.md, whose bench rows carry the ids a run would give them", () => {
    const committed = readFileSync(join(import.meta.dirname, "../../../docs/benchmarks.md"), "utf8");
    const { rows: table } = parseCurrentTable(committed);
    expect(table.length).toBeGreaterThan(20);
    const continuation = table.find((r) => r.id === "continuation-vs-cold/cold-continuation-ttft-24k-tokens");
    expect(continuation?.claim).toBe("continuation vs cold: cold / continuation TTFT at 24013 tokens");
    // A run that measured nothing rewrites nothing but the table's padding.
    expect(parseCurrentTable(updateCurrentTable(committed, []).doc).rows).toEqual(table);
  });
});
