/**
 * IDs in log lines, shortened. A tool_use / call / response ID is a bearer capability inside its
 * tenant (whoever holds it can continue that conversation), so logs never hold one whole: each
 * ID-shaped token (`toolu_…`, `srvtoolu_…`, `call_…`, `resp_…`, `msg_…`, `fc_…`, `rs_…`, `sig_…`,
 * `ws_…`, `chatcmpl-…`, Frontier's or a client's) becomes its kind and an 8-hex-digit FNV-1a hash of
 * the whole ID (`toolu_#1f3a9c0e`): the same ID hashes alike in every line, so lines still correlate,
 * and 32 bits of a 280-bit ID give nothing back to replay.
 */
const ID_TOKEN =
  /\b(toolu|srvtoolu|call|resp|msg|fc|rs|sig|ws)_([A-Za-z0-9_-]{12,})|\b(chatcmpl)-([A-Za-z0-9_-]{12,})/g;

export function shortenIds(text: string): string {
  return text.replace(ID_TOKEN, (whole, kind?: string, _rest?: string, chat?: string) =>
    chat === undefined ? `${kind}_#${fnv1a(whole)}` : `${chat}-#${fnv1a(whole)}`,
  );
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}
