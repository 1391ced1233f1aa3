/**
 * The text a model reads for a hosted tool's result (web_search, web_fetch). One function per
 * result kind, used twice: by the worker when it runs the tool inside a turn, and by the edge when
 * a client replays the turn (Frontier's own results come back from their sealed `encrypted_content`,
 * foreign ones from their visible fields). Deterministic, so a replay of Frontier's own exchange
 * renders exactly the bytes the model read; never includes ciphertext.
 */

/** One search hit. `text` is what the model read of it; undefined for a foreign hit (its content is
 * someone else's ciphertext), which renders as title, URL and age only. */
export interface SearchHit {
  readonly url: string;
  readonly title: string;
  readonly pageAge?: string | undefined;
  readonly text?: string | undefined;
}

/** A fetched document. `text` is the extracted text; undefined when it is foreign ciphertext or absent. */
export interface FetchedPage {
  readonly url: string;
  readonly title?: string | undefined;
  readonly retrievedAt?: string | undefined;
  readonly text?: string | undefined;
}

/** Hits as numbered entries, blank line between them; `(no results)` for none. */
export function searchResultText(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return "(no results)";
  return hits
    .map((hit, i) => {
      const lines = [`[${i + 1}] ${oneLine(hit.title)}`, `URL: ${oneLine(hit.url)}`];
      if (hit.pageAge !== undefined && hit.pageAge !== "") lines.push(`Age: ${oneLine(hit.pageAge)}`);
      if (hit.text !== undefined && hit.text !== "") lines.push(hit.text);
      return lines.join("\n");
    })
    .join("\n\n");
}

export function fetchResultText(page: FetchedPage): string {
  const lines = [`URL: ${oneLine(page.url)}`];
  if (page.title !== undefined && page.title !== "") lines.push(`Title: ${oneLine(page.title)}`);
  if (page.retrievedAt !== undefined && page.retrievedAt !== "") lines.push(`Retrieved: ${oneLine(page.retrievedAt)}`);
  lines.push("", page.text === undefined || page.text === "" ? "(content not available)" : page.text);
  return lines.join("\n");
}

/** A hosted tool's error result (Anthropic's `error_code`: max_uses_exceeded, unavailable, ...). */
export function serverToolErrorText(errorCode: string): string {
  return `[error] ${oneLine(errorCode)}`;
}

/** Header fields stay on one line, so a title cannot fake another entry. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, " ");
}
