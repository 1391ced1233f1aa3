/**
 * The current-numbers table of docs/benchmarks.md: one row per claim, keyed by its id, between two
 * marker comments. A run rewrites the rows it measured, appends the ones the table does not have yet,
 * and leaves every other row (other workloads, numbers measured by hand) exactly as written.
 */

export const TABLE_BEGIN =
  "<!-- bench:current:begin (one row per claim, keyed by its id; `npm run bench` rewrites the rows it measured) -->";
export const TABLE_END = "<!-- bench:current:end -->";

/** One row: what is claimed, its current value, and how, when and where it was measured. */
export interface CurrentRow {
  /** The key: `[model:]workload/measure` for a bench row (rowId), any unique name for a row written by hand. */
  id: string;
  claim: string;
  value: string;
  spread: string;
  /** The command that measured it. */
  command: string;
  date: string;
  machine: string;
  /** Where the details are (a history file, or the run's report). */
  source: string;
}

const COLUMNS = ["claim", "value", "spread", "measured by", "date", "machine", "source", "id"] as const;
const FIELDS = ["claim", "value", "spread", "command", "date", "machine", "source", "id"] as const;

/**
 * A summary row's id: the workload and the measure in lowercase words, numbers of 1,000 and more rounded
 * to thousands (`at 2202 tokens` → `2k`, so a prompt that tokenises a little differently keeps its row),
 * prefixed with the model unless it is the default `mid` test model. Written in backticks in the table.
 */
export function rowId(model: string, workload: string, measure: string): string {
  const slug = (text: string) =>
    text
      .toLowerCase()
      .replace(/\d[\d,]*(?:\.\d+)?/g, (n) => {
        const value = Number(n.replace(/,/g, ""));
        return value >= 1000 ? `${Math.round(value / 1000)}k` : n.replace(/,/g, "");
      })
      .split(/[^a-z0-9]+/)
      .filter((word) => word !== "" && !["a", "an", "the", "of", "at", "on", "in", "to"].includes(word))
      .join("-");
  return `${model === "mid" ? "" : `${slug(model)}:`}${slug(workload)}/${slug(measure)}`;
}

function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replace(/(?<!\\)\|/g, "\\|");
}

function splitRow(line: string): string[] {
  const inner = line
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "");
  return inner.split(/(?<!\\)\|/).map((c) => c.trim());
}

function renderRow(row: CurrentRow): string {
  return `| ${FIELDS.map((f) => cell(f === "id" ? `\`${row.id}\`` : row[f])).join(" | ")} |`;
}

/** The table's lines, in order. Throws on a table it cannot read rather than rewriting it wrongly. */
export function parseCurrentTable(doc: string): { head: string; rows: CurrentRow[]; tail: string } {
  const begin = doc.indexOf(TABLE_BEGIN);
  const end = doc.indexOf(TABLE_END);
  if (begin < 0 || end < 0) {
    throw new Error(`no current table: the document needs the markers ${TABLE_BEGIN} and ${TABLE_END}`);
  }
  if (end < begin || doc.indexOf(TABLE_BEGIN, begin + 1) >= 0 || doc.indexOf(TABLE_END, end + 1) >= 0) {
    throw new Error("the current table's markers must appear once each, begin before end");
  }
  const lines = doc
    .slice(begin + TABLE_BEGIN.length, end)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const [header, rule, ...body] = lines;
  if (header === undefined || splitRow(header).join("|") !== COLUMNS.join("|") || !/^\|[\s|:-]+\|$/.test(rule ?? "")) {
    throw new Error(`the current table must start with the header | ${COLUMNS.join(" | ")} | and its rule line`);
  }
  const seen = new Set<string>();
  const rows = body.map((line, i) => {
    const cells = splitRow(line);
    if (!line.startsWith("|") || cells.length !== COLUMNS.length) {
      throw new Error(`current table row ${i + 1} has ${cells.length} cells, not ${COLUMNS.length}: ${line}`);
    }
    const row = Object.fromEntries(FIELDS.map((f, c) => [f, cells[c] ?? ""])) as unknown as CurrentRow;
    row.id = row.id.replace(/^`|`$/g, "");
    if (row.id === "" || seen.has(row.id))
      throw new Error(`current table row ${i + 1}: empty or repeated id "${row.id}"`);
    seen.add(row.id);
    return row;
  });
  return { head: doc.slice(0, begin + TABLE_BEGIN.length), rows, tail: doc.slice(end) };
}

/**
 * The document with the rows of `fresh` written into its current table: a row whose id is already there
 * is replaced in place, a new id is appended at the end, every other row is kept as it was.
 */
export function updateCurrentTable(
  doc: string,
  fresh: readonly CurrentRow[],
): { doc: string; updated: string[]; added: string[] } {
  const { head, rows, tail } = parseCurrentTable(doc);
  const byId = new Map<string, CurrentRow>();
  for (const row of fresh) {
    if (byId.has(row.id)) throw new Error(`two measurements of this run have the id "${row.id}"`);
    byId.set(row.id, row);
  }
  const updated: string[] = [];
  const kept = rows.map((row) => {
    const next = byId.get(row.id);
    if (!next) return row;
    updated.push(row.id);
    byId.delete(row.id);
    return next;
  });
  const added = [...byId.keys()];
  const table = [
    `| ${COLUMNS.join(" | ")} |`,
    `|${COLUMNS.map(() => "---").join("|")}|`,
    ...[...kept, ...byId.values()].map(renderRow),
  ];
  return { doc: `${head}\n\n${table.join("\n")}\n\n${tail}`, updated, added };
}
