/**
 * The client end-to-end matrix `npm run clients:latest` runs: each client, the npm package whose
 * newest release it installs (and reads the version of), and the e2e test files that drive it.
 */

export interface MatrixClient {
  /** The name printed in the table. */
  client: string;
  /** The npm package installed at its newest release; the printed version is this package's. */
  pkg: string;
  /** e2e test files (under test/e2e) that exercise this client. */
  files: readonly string[];
}

export const MATRIX: readonly MatrixClient[] = [
  { client: "Claude Code", pkg: "@anthropic-ai/claude-code", files: ["claude-code.test.ts"] },
  { client: "Claude Code, ToolSearch", pkg: "@anthropic-ai/claude-code", files: ["claude-code-tool-search.test.ts"] },
  { client: "Anthropic SDK", pkg: "@anthropic-ai/sdk", files: ["anthropic-sdk.test.ts"] },
  { client: "openai SDK, Responses", pkg: "openai", files: ["openai-responses.test.ts"] },
  { client: "openai SDK, Chat Completions", pkg: "openai", files: ["openai-chat.test.ts"] },
  { client: "openai SDK, ResponsesWS", pkg: "openai", files: ["responses-ws-sdk.test.ts"] },
  { client: "Codex CLI, custom provider", pkg: "@openai/codex", files: ["codex.test.ts", "codex-compaction.test.ts"] },
  { client: "Codex CLI, built-in (WebSocket)", pkg: "@openai/codex", files: ["codex-websocket.test.ts"] },
  { client: "Codex CLI, default model", pkg: "@openai/codex", files: ["codex-default-model.test.ts"] },
  { client: "Qwen Code", pkg: "@qwen-code/qwen-code", files: ["qwen-code.test.ts"] },
  { client: "opencode", pkg: "opencode-ai", files: ["opencode.test.ts"] },
  { client: "Agents SDK (WebSocket)", pkg: "@openai/agents", files: ["agents-sdk-ws.test.ts"] },
  { client: "Gemini CLI", pkg: "@google/gemini-cli", files: ["gemini-cli.test.ts"] },
  { client: "Google GenAI SDK", pkg: "@google/genai", files: ["gemini-sdk.test.ts"] },
];

/** The distinct packages to install, in matrix order. */
export function matrixPackages(matrix: readonly MatrixClient[] = MATRIX): string[] {
  return [...new Set(matrix.map((c) => c.pkg))];
}

/** The distinct test files to run, in matrix order. */
export function matrixFiles(matrix: readonly MatrixClient[] = MATRIX): string[] {
  return [...new Set(matrix.flatMap((c) => c.files))];
}
