/**
 * A small MCP server on stdio (newline-delimited JSON-RPC 2.0, no SDK) that offers a catalogue of
 * tools, enough of them, with full descriptions and schemas, that a client defers them behind its
 * tool search. Each `tools/call` is appended as one JSON line (`{ name, arguments }`) to the file
 * named by `MCP_CATALOG_CALLS_FILE`, and answered with a text naming the call.
 *
 * Run as `tsx test/support/mcp-catalog-server.ts` (a client's MCP config starts it).
 */
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

/** The server's name in a client's MCP config; Claude Code calls its tools `mcp__<server>__<tool>`. */
export const MCP_CATALOG_SERVER = "catalog";

/** The catalogue's areas: each gets a lookup, an update and a report tool (3 x 8 = 24 tools). */
const AREAS = ["warehouse", "invoice", "shipment", "supplier", "customer", "ticket", "payroll", "calendar"] as const;

interface CatalogTool {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, unknown>; required: string[] };
}

const idProperty = (area: string) => ({ type: "string", description: `The ${area} record's identifier.` });

function toolsFor(area: string): CatalogTool[] {
  return [
    {
      name: `lookup_${area}`,
      description: `Look up one ${area} record by its identifier and return every field it holds, with the history of changes made to it, who made them and when. Use it before changing a ${area} record.`,
      inputSchema: {
        type: "object",
        properties: {
          record_id: idProperty(area),
          include_history: { type: "boolean", description: "Also return the record's change history." },
        },
        required: ["record_id"],
      },
    },
    {
      name: `update_${area}`,
      description: `Change fields of one ${area} record. Only the fields given are changed; the change is recorded in the record's history with the reason given.`,
      inputSchema: {
        type: "object",
        properties: {
          record_id: idProperty(area),
          fields: { type: "object", description: "Field names and their new values.", additionalProperties: true },
          reason: { type: "string", description: "Why the record is changed (kept in its history)." },
        },
        required: ["record_id", "fields"],
      },
    },
    {
      name: `report_${area}`,
      description: `Summarise ${area} records over a date range: counts by status, totals, and the ten largest changes, as a table.`,
      inputSchema: {
        type: "object",
        properties: {
          note: { type: "string", description: "A label for the report." },
          from: { type: "string", description: "First day (YYYY-MM-DD), inclusive." },
          to: { type: "string", description: "Last day (YYYY-MM-DD), inclusive." },
          group_by: { type: "string", enum: ["status", "owner", "week"], description: "How rows are grouped." },
        },
        required: ["note", "from", "to"],
      },
    },
  ];
}

/** Every tool the server offers, in `tools/list` order. */
export const CATALOG_TOOLS: readonly CatalogTool[] = AREAS.flatMap(toolsFor);

type JsonRpcId = string | number;
interface JsonRpcRequest {
  id?: JsonRpcId;
  method: string;
  params?: { protocolVersion?: string; name?: string; arguments?: unknown };
}

function reply(id: JsonRpcId, result: unknown): void {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
}

function replyError(id: JsonRpcId, code: number, message: string): void {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`);
}

function callTool(id: JsonRpcId, name: string | undefined, args: unknown): void {
  const tool = CATALOG_TOOLS.find((t) => t.name === name);
  if (!tool) {
    replyError(id, -32602, `Unknown tool: ${String(name)}`);
    return;
  }
  const callsFile = process.env.MCP_CATALOG_CALLS_FILE;
  if (callsFile) appendFileSync(callsFile, `${JSON.stringify({ name, arguments: args ?? {} })}\n`);
  reply(id, { content: [{ type: "text", text: `${tool.name} ran with ${JSON.stringify(args ?? {})}` }] });
}

/** The answer to one request; a notification (no id: initialized, cancelled) gets none. */
function handle(request: JsonRpcRequest): void {
  const { id, method, params } = request;
  if (id === undefined) return;
  if (method === "tools/call") callTool(id, params?.name, params?.arguments);
  else if (method === "initialize")
    reply(id, {
      protocolVersion: params?.protocolVersion ?? "2025-06-18",
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: MCP_CATALOG_SERVER, version: "1.0.0" },
    });
  else if (method === "tools/list") reply(id, { tools: CATALOG_TOOLS });
  else if (method === "ping") reply(id, {});
  else replyError(id, -32601, `Method not found: ${method}`);
}

function serve(): void {
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    let request: JsonRpcRequest;
    try {
      request = JSON.parse(line) as JsonRpcRequest;
    } catch {
      process.stdout.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })}\n`,
      );
      return;
    }
    handle(request);
  });
}

if (process.argv[1]?.endsWith("mcp-catalog-server.ts")) serve();
