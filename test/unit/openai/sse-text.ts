/** Parse SSE text whose events carry one JSON `data:` line each (what the edge writes). */
export function decodeSseText(text: string): unknown[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      const data = block.split("\n").find((line) => line.startsWith("data: "));
      if (!data) throw new Error(`an SSE event without data: ${block}`);
      return JSON.parse(data.slice("data: ".length)) as unknown;
    });
}
