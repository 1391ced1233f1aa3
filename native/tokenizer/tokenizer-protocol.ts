/** Messages between the engine and its tokenizer thread. */
import type { VocabularySummary } from "./text-tokenizer.ts";

export interface ThreadStart {
  modelPath: string;
  vocabulary: VocabularySummary;
}

export interface ThreadRequest {
  /** > 0; the thread answers id 0 once its vocabulary is loaded. */
  id: number;
  text: string;
  special: boolean;
}

export type ThreadReply =
  | { id: number; ok: true; tokens: Uint32Array }
  | { id: number; ok: false; name: string; message: string };
