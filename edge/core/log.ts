/** One JSON line per event. Never pass API keys or message content here. */
export function log(event: string, fields: Record<string, string | number | boolean | undefined>): void {
  console.log(JSON.stringify({ event, ...fields }));
}
