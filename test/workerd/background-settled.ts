/**
 * Setup of every in-workerd test file: after its last test, wait for the Worker's `waitUntil` work
 * (metrics reports, session records) to settle. Without it a file can end while that work still
 * calls a Durable Object, and the runner's teardown fails it ("Closing rpc while … was pending").
 * The plugin tracks those promises but exports no public wait for the ones behind `exports.default`.
 */
import { waitForGlobalWaitUntil } from "cloudflare:test-internal";
import { afterAll } from "vitest";

afterAll(() => waitForGlobalWaitUntil());
