/**
 * Server-sent events encoder (https://html.spec.whatwg.org/multipage/server-sent-events.html).
 * Every event carries an `event:` line: some clients (Claude Code, the Anthropic SDK) drop or
 * distrust events without one.
 */

export interface SseEvent {
  /** The `event:` field. */
  event: string;
  /** The `data:` payload; embedded newlines become several `data:` lines. */
  data: string;
  id?: string;
  /** Reconnection time in ms (`retry:`). */
  retry?: number;
}

const LINE_BREAK = /\r\n|\r|\n/;

/** Encode one event as SSE text, ending with the blank line that dispatches it. */
export function encodeSseEvent(event: SseEvent): string {
  let out = `event: ${singleLine(event.event, "event")}\n`;
  if (event.id !== undefined) out += `id: ${singleLine(event.id, "id")}\n`;
  if (event.retry !== undefined) out += `retry: ${Math.max(0, Math.floor(event.retry))}\n`;
  for (const line of event.data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** Encode `event` with `payload` serialised as JSON on one `data:` line. */
export function encodeSseJson(event: string, payload: unknown): string {
  return encodeSseEvent({ event, data: JSON.stringify(payload) });
}

/** An SSE comment line (ignored by every client; useful as a keep-alive). */
export function encodeSseComment(text: string): string {
  return text
    .split(LINE_BREAK)
    .map((line) => `: ${line}\n`)
    .join("")
    .concat("\n");
}

function singleLine(value: string, field: string): string {
  if (LINE_BREAK.test(value)) throw new Error(`SSE ${field} must not contain line breaks`);
  return value;
}
