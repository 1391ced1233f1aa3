/**
 * A turn's SSE body as the JSON payloads a WebSocket sends: one per event (its `data:` lines joined),
 * comments and keep-alives skipped. The pipeline renders Responses events once, as SSE; a socket
 * reads them back here rather than rendering them a second way.
 */
export async function* socketEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end = buffered.indexOf("\n\n");
    while (end >= 0) {
      const data = eventData(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      if (data !== undefined) yield data;
      end = buffered.indexOf("\n\n");
    }
  }
  const last = eventData(buffered + decoder.decode());
  if (last !== undefined) yield last;
}

/** The `data:` payload of one SSE block (undefined for a comment or an empty block). */
function eventData(block: string): string | undefined {
  const lines: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("data: ")) lines.push(line.slice(6));
    else if (line.startsWith("data:")) lines.push(line.slice(5));
  }
  return lines.length > 0 ? lines.join("\n") : undefined;
}
