/** The worker's optional sections: TLS files, the ops (`/metrics`) listener, checkpoint replication to S3. */
import { secretProblem } from "../../shared/dev-secrets.ts";
import { httpUrl, intFrom, isDev } from "./env-values.ts";

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface OpsListenerConfig {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Bearer token `/metrics` requires (never logged). */
  metricsToken: string;
}

export interface CheckpointS3Config {
  /** Endpoint plus bucket, path-style (`https://s3.eu-west-1.amazonaws.com/my-bucket`). */
  url: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Key prefix inside the bucket. */
  prefix: string;
  /** Replicated checkpoints older than this are deleted. */
  maxAgeMs: number;
}

/** FRONTIER_TLS_CERT_FILE and FRONTIER_TLS_KEY_FILE, both or neither (the files are read when the listeners start). */
export function tlsFiles(env: NodeJS.ProcessEnv): TlsFiles | undefined {
  const certFile = env.FRONTIER_TLS_CERT_FILE ?? "";
  const keyFile = env.FRONTIER_TLS_KEY_FILE ?? "";
  if (certFile === "" && keyFile === "") return undefined;
  if (certFile === "" || keyFile === "") {
    throw new Error("FRONTIER_TLS_CERT_FILE and FRONTIER_TLS_KEY_FILE go together: set both (PEM files) or neither");
  }
  return { certFile, keyFile };
}

/** FRONTIER_METRICS_PORT turns the listener on; it then needs FRONTIER_METRICS_TOKEN. */
export function opsListener(env: NodeJS.ProcessEnv): OpsListenerConfig | undefined {
  if (env.FRONTIER_METRICS_PORT === undefined || env.FRONTIER_METRICS_PORT === "") return undefined;
  const metricsToken = env.FRONTIER_METRICS_TOKEN ?? "";
  if (metricsToken.length < 16) {
    throw new Error("FRONTIER_METRICS_PORT needs FRONTIER_METRICS_TOKEN (at least 16 characters)");
  }
  const problem = isDev(env) ? undefined : secretProblem(metricsToken);
  if (problem !== undefined) throw new Error(`FRONTIER_METRICS_TOKEN ${problem}; set a token of your own`);
  return {
    host: env.FRONTIER_METRICS_HOST || env.FRONTIER_WORKER_HOST || "127.0.0.1",
    port: intFrom(env, "FRONTIER_METRICS_PORT", 0),
    metricsToken,
  };
}

export function checkpointS3(env: NodeJS.ProcessEnv): CheckpointS3Config | undefined {
  const url = httpUrl(env, "FRONTIER_CHECKPOINT_S3_URL");
  if (!url) return undefined;
  const accessKeyId = env.FRONTIER_CHECKPOINT_S3_ACCESS_KEY_ID ?? "";
  const secretAccessKey = env.FRONTIER_CHECKPOINT_S3_SECRET_ACCESS_KEY ?? "";
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      "FRONTIER_CHECKPOINT_S3_URL needs FRONTIER_CHECKPOINT_S3_ACCESS_KEY_ID and FRONTIER_CHECKPOINT_S3_SECRET_ACCESS_KEY",
    );
  }
  if (new URL(url).pathname.replace(/\/+$/, "") === "") {
    throw new Error("FRONTIER_CHECKPOINT_S3_URL must name the bucket: http(s)://<endpoint>/<bucket>");
  }
  return {
    url,
    region: env.FRONTIER_CHECKPOINT_S3_REGION || "us-east-1",
    accessKeyId,
    secretAccessKey,
    prefix: env.FRONTIER_CHECKPOINT_S3_PREFIX ?? "",
    maxAgeMs: (intFrom(env, "FRONTIER_CHECKPOINT_S3_MAX_AGE_H", 168) || 168) * 3_600_000,
  };
}
