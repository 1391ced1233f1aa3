/**
 * llama.cpp's own error lines while a model or context loads. node-llama-cpp rejects with only
 * "Failed to load model" / "Failed to create context"; the reason (an unknown architecture, a
 * missing tensor, a KV type the heads cannot take) is in llama.cpp's log, so it is kept here.
 * (node-llama-cpp 3.21.1 stops delivering llama.cpp's log in a process once its first Llama is
 * disposed; a worker holds one for its life, and without a line the node-llama-cpp message stays.)
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Llama, LlamaLogLevel } from "node-llama-cpp";

const KEPT_LINES = 8;
/** llama.cpp's log reaches JS through a thread-safe callback, possibly after the failed call returned. */
const LATE_LINE_WAIT_MS = 250;
const LATE_LINE_POLL_MS = 10;

export class LlamaErrorLog {
  private lines: string[] = [];

  /** A getLlama `logger`: prints as node-llama-cpp does by default and keeps the error lines. */
  readonly logger = (level: LlamaLogLevel, message: string): void => {
    if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal) {
      const line = message.trim();
      if (line !== "" && !this.lines.includes(line)) this.lines.push(line);
      if (this.lines.length > KEPT_LINES) this.lines.shift();
    }
    Llama.defaultConsoleLogger(level, message);
  };

  /** Forget the lines logged so far (before the next step whose failure should be explained). */
  clear(): void {
    this.lines = [];
  }

  /** The first error line since the last `clear` (llama.cpp logs the cause first, then "failed to load"). */
  async reason(): Promise<string | undefined> {
    for (let waited = 0; this.lines.length === 0 && waited < LATE_LINE_WAIT_MS; waited += LATE_LINE_POLL_MS) {
      await sleep(LATE_LINE_POLL_MS);
    }
    return this.lines[0];
  }
}
