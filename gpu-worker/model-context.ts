/**
 * How many KV cells per sequence a worker gives its model: FRONTIER_CONTEXT_SIZE when set, else the
 * file's `<arch>.context_length` up to a cap that keeps the KV cache memory-sane (it grows with
 * sequences x context x layers x KV heads).
 */

/** A real GGUF's cap: an 8B model's f16 KV at 8192 cells is 1 GiB per sequence. */
export const MODEL_FILE_CONTEXT_CAP = 8192;
/**
 * The generated test model's cap: its KV is 256 bytes a cell (tiny) to 16 KiB (mid), and its
 * byte-heavy vocabulary makes Claude Code's first prompt ~51k tokens.
 */
export const TEST_MODEL_CONTEXT_CAP = 65536;

export type ContextSizeSource = "flag" | "file" | "cap";

export interface ResolvedContextSize {
  size: number;
  /** flag: FRONTIER_CONTEXT_SIZE; file: the file's context_length; cap: the file allows more than the cap. */
  source: ContextSizeSource;
}

export function resolveContextSize(input: {
  flag: number | undefined;
  fileContextLength: number;
  cap: number;
}): ResolvedContextSize {
  if (input.flag !== undefined) return { size: input.flag, source: "flag" };
  if (input.fileContextLength <= input.cap) return { size: input.fileContextLength, source: "file" };
  return { size: input.cap, source: "cap" };
}

/** The log's words for where the size came from. */
export function describeContextSource(resolved: ResolvedContextSize, fileContextLength: number): string {
  switch (resolved.source) {
    case "flag":
      return resolved.size > fileContextLength
        ? `FRONTIER_CONTEXT_SIZE (above the file's context_length ${fileContextLength})`
        : "FRONTIER_CONTEXT_SIZE";
    case "file":
      return "file context_length";
    case "cap":
      return `cap (file context_length ${fileContextLength})`;
  }
}
