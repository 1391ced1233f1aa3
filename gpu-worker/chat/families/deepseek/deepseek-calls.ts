/**
 * DeepSeek's tool-call block markers, shared by `deepseek` (V3/R1, ```json fenced arguments) and
 * `deepseek-v3.1` (bare JSON):
 *   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{head}<｜tool▁sep｜>...{args}...<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 */
export const CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
export const CALLS_END = "<｜tool▁calls▁end｜>";
export const CALL_BEGIN = "<｜tool▁call▁begin｜>";
export const CALL_END = "<｜tool▁call▁end｜>";
export const TOOL_SEP = "<｜tool▁sep｜>";

/** The calls block around a turn's calls. */
export const CALLS_SECTION = { open: CALLS_BEGIN, close: CALLS_END } as const;
