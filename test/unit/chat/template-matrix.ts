/** The conversations every family is rendered with, by its own template and by Frontier. */
import type { Conversation } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, text, thinking, toolResult, toolUse, user } from "./fixtures.ts";

const BASH_LS = '{"command": "ls", "timeout": 5}';
const BASH_PWD = '{"command": "pwd"}';
const READ = '{"path": "a.txt"}';

export interface MatrixCase {
  name: string;
  conversation: Conversation;
}

/** Each shape with thinking on and off. */
export function matrix(options: { sameToolParallel?: boolean } = {}): MatrixCase[] {
  const second = options.sameToolParallel ? toolUse("toolu_2", "Bash", BASH_PWD) : toolUse("toolu_2", "Read", READ);
  const shapes: [string, (mode: ThinkingMode) => Conversation][] = [
    ["system, no tools", (mode) => conversation([user(text("Hello there."))], { tools: false, thinking: mode })],
    ["no system, tools", (mode) => conversation([user(text("List files."))], { system: [], thinking: mode })],
    ["system and tools", (mode) => conversation([user(text("List files."))], { thinking: mode })],
    [
      "one call, its result",
      (mode) =>
        conversation(
          [
            user(text("List files.")),
            assistant(thinking("I should run ls."), toolUse("toolu_1", "Bash", BASH_LS)),
            user(toolResult("toolu_1", "a.txt\nb.txt")),
          ],
          { thinking: mode },
        ),
    ],
    [
      "parallel calls, results in completion order",
      (mode) =>
        conversation(
          [
            user(text("Look around.")),
            assistant(thinking("Two things at once."), toolUse("toolu_1", "Bash", BASH_LS), second),
            user(toolResult("toolu_2", "second done"), toolResult("toolu_1", "first done")),
          ],
          { thinking: mode },
        ),
    ],
    [
      "a new user turn after end_turn",
      (mode) =>
        conversation([user(text("Hi.")), assistant(text("Hello! How can I help?")), user(text("Tell me a joke."))], {
          thinking: mode,
        }),
    ],
  ];
  return shapes.flatMap(([name, make]) => [
    { name: `${name}, thinking on`, conversation: make(ThinkingMode.ENABLED) },
    { name: `${name}, thinking off`, conversation: make(ThinkingMode.DISABLED) },
  ]);
}
