/** A hosted tool's outcome (worker event) → the Anthropic result block the client gets. */
import { ServerToolKind, type ServerToolOutcome } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type SealKeys, sealHit } from "../../../server-tools/sealed-hit.ts";
import type { ServerToolResultOutput } from "./events.ts";

export async function anthropicResultBlock(
  outcome: ServerToolOutcome,
  keys: SealKeys,
): Promise<ServerToolResultOutput> {
  const tool_use_id = outcome.toolUseId;
  if (outcome.kind === ServerToolKind.WEB_FETCH) {
    if (outcome.errorCode !== "" || !outcome.page) {
      return {
        type: "web_fetch_tool_result",
        tool_use_id,
        content: { type: "web_fetch_tool_error", error_code: outcome.errorCode || "unavailable" },
      };
    }
    const page = outcome.page;
    return {
      type: "web_fetch_tool_result",
      tool_use_id,
      content: {
        type: "web_fetch_result",
        url: page.url,
        retrieved_at: page.retrievedAt,
        content: {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: page.text },
          title: page.title === "" ? null : page.title,
        },
      },
    };
  }
  if (outcome.errorCode !== "") {
    return {
      type: "web_search_tool_result",
      tool_use_id,
      content: { type: "web_search_tool_result_error", error_code: outcome.errorCode },
    };
  }
  const content = await Promise.all(
    outcome.hits.map(async (hit) => ({
      type: "web_search_result" as const,
      url: hit.url,
      title: hit.title,
      page_age: hit.pageAge === "" ? null : hit.pageAge,
      encrypted_content: await sealHit(keys, hit),
    })),
  );
  return { type: "web_search_tool_result", tool_use_id, content };
}
