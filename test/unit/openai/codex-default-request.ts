/**
 * Test fixture: what Codex CLI 0.171 sends with its default model (`gpt-6.2-sol`, "Responses Lite":
 * built-in provider, no `-m`, no catalog), captured from `codex exec` against a recording server
 * (descriptions, developer messages and ids shortened). No top-level `tools`: the tool set is the
 * leading `additional_tools` item (its code-mode `exec` a custom tool in the `functions` namespace);
 * a `configuration_update` sets the reasoning effort; items carry
 * `internal_chat_message_metadata_passthrough`; a replayed `custom_tool_call` names its namespace and
 * its output is a list of `input_text` parts.
 */
import { CODEX_EXEC_LARK } from "../chat/codex-apply-patch.ts";

const passthrough = { turn_id: "01a24c1f-bf24-7733-9c12-3893eeaac440" };

export const CODEX_DEFAULT_TOOLS_ITEM = {
  type: "additional_tools",
  id: "at_01a24c1e-b9c0-7933-b7ef-4eb35359a90f",
  role: "developer",
  tools: [
    {
      type: "namespace",
      name: "functions",
      description: "",
      tools: [
        {
          type: "custom",
          name: "exec",
          description: "Run JavaScript code to orchestrate/compose tool calls",
          format: { type: "grammar", syntax: "lark", definition: CODEX_EXEC_LARK },
        },
        {
          type: "function",
          name: "wait",
          description: "Waits on a yielded `exec` cell and returns new output or completion.",
          strict: false,
          parameters: {
            type: "object",
            properties: { cell_id: { type: "string", description: "Identifier of the running exec cell." } },
            required: ["cell_id"],
            additionalProperties: false,
          },
        },
      ],
    },
    {
      type: "namespace",
      name: "clock",
      description: "Tools for reading and waiting on time.",
      tools: [
        {
          type: "function",
          name: "sleep",
          description: "Pause execution for a specified duration.",
          strict: false,
          parameters: {
            type: "object",
            properties: { duration_ms: { type: "number" } },
            required: ["duration_ms"],
            additionalProperties: false,
          },
        },
      ],
    },
  ],
};

const developer = (text: string) => ({
  type: "message",
  id: "msg_01a24c1e-b9c0-7933-b7ef-4ec3369ecba4",
  role: "developer",
  content: [{ type: "input_text", text }],
  internal_chat_message_metadata_passthrough: passthrough,
});

const user = (text: string) => ({
  type: "message",
  id: "msg_01a24c1e-bc89-7370-96d3-f326973b5222",
  role: "user",
  content: [{ type: "input_text", text }],
  internal_chat_message_metadata_passthrough: { ...passthrough, create_time: 1796573412.4892774 },
});

/** The first request's input. */
export const CODEX_DEFAULT_FIRST_INPUT = [
  CODEX_DEFAULT_TOOLS_ITEM,
  developer("You are Codex, an agent based on GPT-6."),
  developer("<permissions instructions>read-only</permissions instructions>"),
  user("<environment_context>\n  <cwd>/tmp/work</cwd>\n</environment_context>"),
  user("Run echo hi then say done"),
  { type: "configuration_update", reasoning: { effort: "low" } },
];

/** The exec call the model made and Codex's output for it, as Codex replays them. */
export const CODEX_DEFAULT_EXEC_CALL = {
  type: "custom_tool_call",
  id: "ctc_8",
  status: "completed",
  call_id: "call_8",
  name: "exec",
  namespace: "functions",
  input: 'const r = await tools.exec_command({cmd: "echo frontier-one"});\ntext(r.output);',
  internal_chat_message_metadata_passthrough: passthrough,
};

export const CODEX_DEFAULT_EXEC_OUTPUT = {
  type: "custom_tool_call_output",
  id: "ctco_01a24c1f-e154-7123-9804-0a2cd132e8a3",
  call_id: "call_8",
  output: [
    { type: "input_text", text: "Script completed\nWall time 1.0 seconds\nOutput:\n" },
    { type: "input_text", text: "frontier-one\n" },
  ],
  internal_chat_message_metadata_passthrough: passthrough,
};

/** The request body around an input, as Codex sends it (no `tools`, no `instructions`). */
export function codexDefaultBody(input: unknown[]) {
  return {
    model: "gpt-6.2-sol",
    stream: true,
    input,
    tool_choice: "auto",
    parallel_tool_calls: false,
    reasoning: { effort: "low", context: "all_turns" },
    store: false,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: "01a24c1e-b629-7f62-85db-407f368b5c3f",
    text: { verbosity: "low" },
    client_metadata: { "x-codex-installation-id": "645491ba-425b-4ca6-be14-db34fd1576c6" },
  };
}
