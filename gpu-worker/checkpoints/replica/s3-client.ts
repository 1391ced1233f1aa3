/**
 * A minimal S3 client (path-style URLs, AWS SigV4 via aws4fetch): put, get, delete and list a
 * prefix. Enough for the checkpoint replica; works against AWS S3 and S3-compatible stores (MinIO,
 * R2, s3rver). Credentials stay inside the signer; nothing here logs them.
 */
import { AwsClient } from "aws4fetch";

/** Where the bucket is and how to sign for it. */
export interface S3Location {
  /** Endpoint plus bucket, path-style: `http://127.0.0.1:4569/frontier-checkpoints`. */
  readonly url: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** One listed object. */
export interface S3Object {
  readonly key: string;
  /** Epoch milliseconds. */
  readonly lastModified: number;
  readonly size: number;
}

/** An S3 request that failed with an unexpected status. */
export class S3Error extends Error {
  override readonly name = "S3Error";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class S3Client {
  readonly #aws: AwsClient;
  readonly #base: string;

  constructor(location: S3Location) {
    this.#base = location.url.replace(/\/+$/, "");
    this.#aws = new AwsClient({
      accessKeyId: location.accessKeyId,
      secretAccessKey: location.secretAccessKey,
      region: location.region,
      service: "s3",
      retries: 2,
      initRetryMs: 50,
    });
  }

  /** Store `body` under `key` (replacing any object there). */
  async put(key: string, body: Uint8Array<ArrayBuffer>, signal?: AbortSignal): Promise<void> {
    const res = await this.#aws.fetch(this.#url(key), { method: "PUT", body, signal });
    await expectOk(res, "PUT", key);
  }

  /** The object's bytes, or undefined when there is no such object. */
  async get(key: string, signal?: AbortSignal): Promise<Buffer | undefined> {
    const res = await this.#aws.fetch(this.#url(key), { method: "GET", signal });
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    await expectOk(res, "GET", key, true);
    return Buffer.from(await res.arrayBuffer());
  }

  /** Delete `key`; a missing object is fine. */
  async delete(key: string, signal?: AbortSignal): Promise<void> {
    const res = await this.#aws.fetch(this.#url(key), { method: "DELETE", signal });
    if (res.status === 404) {
      await res.body?.cancel();
      return;
    }
    await expectOk(res, "DELETE", key);
  }

  /**
   * Objects under `prefix` (ListObjectsV2), at most `maxPages` pages of 1,000. `complete` is false
   * when more remained.
   */
  async list(prefix: string, maxPages = 10, signal?: AbortSignal): Promise<{ objects: S3Object[]; complete: boolean }> {
    const objects: S3Object[] = [];
    let token: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const query = new URLSearchParams({ "list-type": "2", prefix });
      if (token) query.set("continuation-token", token);
      const res = await this.#aws.fetch(`${this.#base}?${query}`, { method: "GET", signal });
      await expectOk(res, "LIST", prefix, true);
      const xml = await res.text();
      for (const [, body] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
        const key = xmlText(body ?? "", "Key");
        if (key === undefined) continue;
        const lastModified = Date.parse(xmlText(body ?? "", "LastModified") ?? "");
        objects.push({
          key,
          lastModified: Number.isNaN(lastModified) ? 0 : lastModified,
          size: Number(xmlText(body ?? "", "Size") ?? 0),
        });
      }
      token = xmlText(xml, "IsTruncated") === "true" ? xmlText(xml, "NextContinuationToken") : undefined;
      if (!token) return { objects, complete: true };
    }
    return { objects, complete: false };
  }

  #url(key: string): string {
    return `${this.#base}/${key.split("/").map(encodeURIComponent).join("/")}`;
  }
}

async function expectOk(res: Response, op: string, key: string, keepBody = false): Promise<void> {
  if (res.ok) {
    if (!keepBody) await res.body?.cancel();
    return;
  }
  const detail = (await res.text().catch(() => "")).match(/<Code>([^<]*)<\/Code>/)?.[1] ?? "";
  throw new S3Error(res.status, `S3 ${op} ${key}: ${res.status} ${detail}`.trim());
}

function xmlText(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return match?.[1]?.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => XML_ENTITIES[e] ?? "");
}

const XML_ENTITIES: Record<string, string> = { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" };
