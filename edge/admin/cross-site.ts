/**
 * Admin routes are for operators' tools and the status page, never for another site's page running
 * in an operator's browser. A browser replays HTTP Basic credentials (and would replay cookies) on
 * any request to the edge, cross-site ones included, so:
 * - a state-changing route (any method but GET/HEAD) refuses a request whose `Origin` is not the
 *   edge's own, or whose `Sec-Fetch-Site` is `cross-site` or `same-site` (403), and a body that is not
 *   JSON (415: an HTML form can only send form-encoded, multipart or text/plain bodies);
 * - a read (GET/HEAD) refuses `Sec-Fetch-Site: cross-site` / `same-site` too (no embedding, no
 *   timing probes from another page), except a top-level navigation to the HTML status page: a link
 *   an operator follows opens the page, whose own requests are then same-origin.
 * Command-line clients (scripts/drain.ts, curl, Prometheus) send neither header and pass.
 */
import { ApiError } from "../core/errors.ts";

const READ_METHODS = new Set(["GET", "HEAD"]);

export function isStateChanging(request: Request): boolean {
  return !READ_METHODS.has(request.method.toUpperCase());
}

export function refuseCrossSite(request: Request, options: { page?: boolean } = {}): void {
  const site = request.headers.get("sec-fetch-site")?.toLowerCase();
  const foreignSite = site === "cross-site" || site === "same-site";
  if (!isStateChanging(request)) {
    const navigation =
      request.headers.get("sec-fetch-mode") === "navigate" && request.headers.get("sec-fetch-dest") === "document";
    if (foreignSite && !(options.page && navigation)) throw refused(`Sec-Fetch-Site: ${site}`);
    return;
  }
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== new URL(request.url).origin) throw refused(`Origin: ${origin}`);
  if (foreignSite) throw refused(`Sec-Fetch-Site: ${site}`);
  refuseNonJsonBody(request.headers);
}

function refused(what: string): ApiError {
  return new ApiError(
    "permission_error",
    `Admin routes refuse cross-site requests (${what}); call them from the edge's own origin or a command-line client`,
  );
}

/** No body, or a JSON one. */
function refuseNonJsonBody(headers: Headers): void {
  const type = headers.get("content-type");
  if (type === null) {
    const length = headers.get("content-length");
    const hasBody = headers.has("transfer-encoding") || (length !== null && length.trim() !== "0");
    if (!hasBody) return;
  } else if (/^application\/json\s*(;|$)/i.test(type.trim())) {
    return;
  }
  throw new ApiError(
    "invalid_request_error",
    `Admin routes take no body or a JSON one (content-type: application/json), got ${type === null ? "a body without a content-type" : `content-type: ${type}`}`,
    { status: 415 },
  );
}
