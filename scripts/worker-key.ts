/**
 * `npm run worker-key -- <worker id>`: print the worker's FRONTIER_CAPABILITY_KEY, base64url of
 * HMAC-SHA256(ID_SECRET, "frontier/worker/" + id) — the key the edge signs that worker's
 * capabilities with (shared/capability.ts `workerKey`). For operators setting up a worker; the
 * worker gets this key, never ID_SECRET.
 *   ID_SECRET  the edge's secret, from the environment, else from stdin (one line). Never argv:
 *              command lines end up in shell history and process lists.
 * Outside local development (FRONTIER_DEV=1) a development or placeholder secret is refused, as the
 * edge refuses it.
 */
import { text } from "node:stream/consumers";
import { parseArgs } from "node:util";
import { toBase64Url, workerKey } from "../shared/capability.ts";
import { DEV_MODE_FLAG, secretProblem } from "../shared/dev-secrets.ts";

const USAGE = "usage: ID_SECRET=… npm run worker-key -- <worker id>   (or the secret on stdin)\n";
/** The ids a worker may report (edge/pool/worker-report.ts). */
const WORKER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

function fail(message: string, code = 1): never {
  process.stderr.write(`worker-key: ${message}\n`);
  process.exit(code);
}

const { positionals } = parseArgs({ allowPositionals: true, options: {}, strict: true });
const id = positionals[0];
if (positionals.length !== 1 || id === undefined) {
  process.stderr.write(USAGE);
  process.exit(2);
}
if (!WORKER_ID.test(id)) fail(`"${id}" is not a worker id (letters, digits, . _ : -; at most 64)`, 2);

let secret = process.env.ID_SECRET ?? "";
if (secret === "") {
  if (process.stdin.isTTY) process.stderr.write("ID_SECRET (one line, then Enter and Ctrl-D): ");
  secret = (await text(process.stdin)).replace(/\r?\n$/, "");
}
if (secret === "") fail("no ID_SECRET: set it in the environment or pass it on stdin");
if (secret.length < 16) fail("ID_SECRET must be at least 16 characters");
const problem = process.env[DEV_MODE_FLAG] === "1" ? undefined : secretProblem(secret);
if (problem !== undefined) fail(`ID_SECRET ${problem} (${DEV_MODE_FLAG}=1 allows the development one)`);

process.stdout.write(`${toBase64Url(await workerKey(secret, id))}\n`);
