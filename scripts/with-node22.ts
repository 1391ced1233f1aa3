/**
 * `tsx scripts/with-node22.ts <bin> [args…]`: runs an npm bin with Node 22 as its `node`
 * (scripts/node22.ts). `npm run edge` (wrangler dev) and `npm run check` (depcruise) go through it.
 */
import { spawn } from "node:child_process";
import { envWithNode22 } from "./node22.ts";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: tsx scripts/with-node22.ts <bin> [args…]\n");
  process.exit(2);
}
const child = spawn(command, args, { stdio: "inherit", env: envWithNode22(process.env) });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.once("error", (error) => {
  process.stderr.write(`${command}: ${error.message}\n`);
  process.exit(1);
});
child.once("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
