/**
 * A local stand-in for the web in tests: a SearXNG-compatible JSON search endpoint
 * (`GET /search?q=…&format=json`) and a few pages (HTML, plain text, a redirect to a private
 * address, a binary file). It records the queries it answered. Loopback only.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeWeb {
  url: string;
  queries: string[];
  close(): Promise<void>;
}

export const FAKE_PAGE_TITLE = "Frontier test page";
export const FAKE_PAGE_TEXT = "The frontier test page says hello.";

export async function startFakeWeb(): Promise<FakeWeb> {
  const queries: string[] = [];
  let base = "";
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", base);
    if (url.pathname === "/search") {
      const q = url.searchParams.get("q") ?? "";
      queries.push(q);
      if (url.searchParams.get("format") !== "json") {
        res.writeHead(403).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          query: q,
          results: [
            {
              url: `${base}/page.html`,
              title: FAKE_PAGE_TITLE,
              content: `A page about ${q.slice(0, 40)}.`,
              publishedDate: "2026-11-30T00:00:00",
            },
            { url: "https://example.org/other", title: "Other result", content: "Another snippet." },
          ],
        }),
      );
      return;
    }
    if (url.pathname === "/page.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        `<html><head><title>${FAKE_PAGE_TITLE}</title><style>p{}</style><script>var secret=1;</script></head>` +
          `<body><h1>Hello</h1><p>${FAKE_PAGE_TEXT}</p><p>Second &amp; last.</p></body></html>`,
      );
      return;
    }
    if (url.pathname === "/plain.txt") {
      res.writeHead(200, { "content-type": "text/plain" }).end("plain text body");
      return;
    }
    if (url.pathname === "/to-private") {
      res.writeHead(302, { location: "http://10.0.0.1/secret" }).end();
      return;
    }
    if (url.pathname === "/to-metadata") {
      res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      return;
    }
    if (url.pathname === "/to-page") {
      res.writeHead(302, { location: "/page.html" }).end();
      return;
    }
    if (url.pathname === "/big.txt") {
      res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(100_000));
      return;
    }
    if (url.pathname === "/binary") {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.from([0, 1, 2, 3]));
      return;
    }
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    queries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
