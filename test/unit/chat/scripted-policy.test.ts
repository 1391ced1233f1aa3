/** The test-only scripted policy drives each client's own shell tool with the fixed harmless commands. */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import {
  grammarForTurn,
  SCRIPTED_BASH_COMMANDS,
  SCRIPTED_NO_TOOLS_MARKER,
  scriptedCodeModeScript,
} from "../../../gpu-worker/generate/sampling-policy.ts";
import { ConversationSchema, ThinkingMode, ToolChoiceMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CODEX_EXEC_LARK } from "./codex-apply-patch.ts";
import { text, toolResult, user } from "./fixtures.ts";
import { gbnfMatches } from "./gbnf-check.ts";

const format = new ChatMlFormat();
const markup = format.spec.markup;
const codexShell = { name: "exec_command", description: "Runs a command", inputSchemaJson: '{"type":"object"}' };

function codexTurn(last: ReturnType<typeof user>) {
  return create(ConversationSchema, {
    system: ["You are Codex."],
    tools: [{ name: "write_stdin", description: "", inputSchemaJson: "{}" }, codexShell],
    toolChoice: { mode: ToolChoiceMode.AUTO },
    thinking: { mode: ThinkingMode.DISABLED },
    messages: [last],
  });
}

describe("scripted-tools policy", () => {
  it("forces Codex's exec_command with the fixed echo commands on a user turn", () => {
    const grammar = grammarForTurn(format, codexTurn(user(text("hi"))), false, "scripted-tools");
    const calls = SCRIPTED_BASH_COMMANDS.map((cmd) => ({
      name: "exec_command",
      argumentsJson: JSON.stringify({ cmd }),
    }));
    expect(gbnfMatches(grammar ?? "", toolCallsText(markup, calls))).toBe(true);
    const bash = SCRIPTED_BASH_COMMANDS.map((command) => ({
      name: "Bash",
      argumentsJson: JSON.stringify({ command }),
    }));
    expect(gbnfMatches(grammar ?? "", toolCallsText(markup, bash))).toBe(false);
  });

  it.each(["run_shell_command", "bash"])("forces %s (Qwen Code, opencode) with { command }", (name) => {
    const conversation = create(ConversationSchema, {
      tools: [{ name, description: "Runs a shell command", inputSchemaJson: '{"type":"object"}' }],
      toolChoice: { mode: ToolChoiceMode.AUTO },
      messages: [user(text("hi"))],
    });
    const grammar = grammarForTurn(format, conversation, false, "scripted-tools") ?? "";
    const calls = SCRIPTED_BASH_COMMANDS.map((command) => ({ name, argumentsJson: JSON.stringify({ command }) }));
    expect(gbnfMatches(grammar, toolCallsText(markup, calls))).toBe(true);
    const chosen = [{ name, argumentsJson: JSON.stringify({ command: "rm -rf /" }) }];
    expect(gbnfMatches(grammar, toolCallsText(markup, chosen))).toBe(false);
  });

  it("forces Codex's code-mode functions.exec (its default model) with a script running each fixed command", () => {
    const exec = {
      name: "functions.exec",
      description: "Run JavaScript code",
      inputSchemaJson: JSON.stringify({ type: "object", properties: { input: { type: "string" } } }),
      inputGrammar: { syntax: "lark", definition: CODEX_EXEC_LARK },
    };
    const conversation = create(ConversationSchema, {
      tools: [exec, { name: "functions.wait", description: "", inputSchemaJson: "{}" }],
      toolChoice: { mode: ToolChoiceMode.AUTO, disableParallelToolUse: true },
      messages: [user(text("hi"))],
    });
    const grammar = grammarForTurn(format, conversation, false, "scripted-tools") ?? "";
    const calls = SCRIPTED_BASH_COMMANDS.map((command) => ({
      name: "functions.exec",
      argumentsJson: JSON.stringify({ input: scriptedCodeModeScript(command) }),
    }));
    expect(scriptedCodeModeScript("echo frontier-one")).toBe(
      'const r = await tools.exec_command({ cmd: "echo frontier-one" });\ntext(r.output);',
    );
    expect(gbnfMatches(grammar, toolCallsText(markup, calls))).toBe(true);
    const chosen = [{ name: "functions.exec", argumentsJson: JSON.stringify({ input: "exit();" }) }];
    expect(gbnfMatches(grammar, toolCallsText(markup, chosen))).toBe(false);
  });

  it("answers a user turn carrying the no-tools marker in plain text", () => {
    const turn = codexTurn(user(text(`Just answer. ${SCRIPTED_NO_TOOLS_MARKER}`)));
    const grammar = grammarForTurn(format, turn, false, "scripted-tools") ?? "";
    expect(gbnfMatches(grammar, "Hello world.")).toBe(true);
    const calls = SCRIPTED_BASH_COMMANDS.map((cmd) => ({
      name: "exec_command",
      argumentsJson: JSON.stringify({ cmd }),
    }));
    expect(gbnfMatches(grammar, toolCallsText(markup, calls))).toBe(false);
  });

  it("answers in plain text after the tool results, and is off without the policy", () => {
    const after = codexTurn(user(toolResult("call_1", "frontier-one")));
    expect(gbnfMatches(grammarForTurn(format, after, false, "scripted-tools") ?? "", "Hello world.")).toBe(true);
    expect(grammarForTurn(format, codexTurn(user(text("hi"))), false, undefined)).toBeUndefined();
  });
});
