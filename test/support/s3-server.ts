/** A real S3-compatible server for tests: s3rver on a free loopback port, objects in a temp directory. */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass;

/** s3rver's built-in account. */
export const S3_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" };

export interface TestS3 {
  /** Endpoint plus bucket: `http://127.0.0.1:<port>/<bucket>`. */
  url: string;
  stop(): Promise<void>;
}

export async function startS3(bucket = "frontier-checkpoints"): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), "frontier-s3-"));
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  return {
    url: `http://127.0.0.1:${port}/${bucket}`,
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
