/**
 * The per-call URL rules of the hosted tools: a client's allowed / blocked domains (a domain covers
 * its subdomains), and web_fetch's "only URLs the conversation holds", which matches whole URLs:
 * the URL must stand in the text as a token of its own, not as the prefix of a longer URL or the
 * tail of one (`https://example.com/a` is not in "https://example.com/abc", nor in
 * "https://x.test/?u=https://example.com/a").
 */

export interface DomainRules {
  allowedDomains: readonly string[];
  blockedDomains: readonly string[];
}

/** A URL's host against the rules: blocked domains win; an empty allow list allows every other host. */
export function domainAllowed(url: string | URL, rules: DomainRules): boolean {
  let host: string;
  try {
    host = (typeof url === "string" ? new URL(url) : url).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return false;
  }
  const covers = (domain: string) => {
    const d = domain
      .toLowerCase()
      .replace(/^\*?\./, "")
      .replace(/\.$/, "");
    return d !== "" && (host === d || host.endsWith(`.${d}`));
  };
  if (rules.blockedDomains.some(covers)) return false;
  return rules.allowedDomains.length === 0 || rules.allowedDomains.some(covers);
}

/**
 * Characters that continue a URL before its scheme (letters, digits and RFC 3986's delimiters that
 * would make this occurrence the inside of another URL).
 */
const CONTINUES_BEFORE = /[A-Za-z0-9\-._~:/?#@!$&+%=]/;
/** Characters that may be part of a URL at all (RFC 3986 unreserved, reserved and `%`). */
const URL_CHAR = /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/;
/** Punctuation that usually closes the sentence or brackets around a URL rather than belonging to it. */
const CLOSING = /[.,;:!?)\]'*]/;

/**
 * Whether `url` occurs in `text` as a whole URL: the character before it does not continue a URL,
 * and what follows it up to the first character that cannot be in a URL is closing punctuation
 * only ("see https://example.com/a." holds https://example.com/a). Linear in the text: each
 * occurrence looks at one character before it and the punctuation run after it.
 */
export function urlInContext(url: string, text: string): boolean {
  // A URL starts with its scheme; this also keeps the punctuation scans below from overlapping.
  if (!/^[A-Za-z]/.test(url)) return false;
  for (let at = text.indexOf(url); at >= 0; at = text.indexOf(url, at + 1)) {
    const before = at > 0 ? text.charAt(at - 1) : "";
    if (before !== "" && CONTINUES_BEFORE.test(before)) continue;
    let end = at + url.length;
    while (end < text.length && CLOSING.test(text.charAt(end))) end++;
    const next = end < text.length ? text.charAt(end) : "";
    // Closing punctuation then the end of the URL: a whole token. Anything else continues the URL.
    if (next === "" || !URL_CHAR.test(next)) return true;
  }
  return false;
}
