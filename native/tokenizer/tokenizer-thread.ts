/**
 * The engine's tokenizer thread (a worker_thread): loads only the model's vocabulary
 * (`vocabOnly`) and tokenizes long texts with the same TextTokenizer as the main thread, so a
 * prompt of megabytes never stalls the worker's event loop. Messages: tokenizer-protocol.ts.
 */
import { parentPort, workerData } from "node:worker_threads";
import { getLlama } from "node-llama-cpp";
import { TextTokenizer } from "./text-tokenizer.ts";
import type { ThreadReply, ThreadRequest, ThreadStart } from "./tokenizer-protocol.ts";

const port = parentPort;
if (port === null) throw new Error("tokenizer-thread.ts runs as a worker_thread");
const start = workerData as ThreadStart;
const llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
const model = await llama.loadModel({ modelPath: start.modelPath, vocabOnly: true });
const tokenizer = new TextTokenizer((text, special) => model.tokenize(text, special), start.vocabulary);

port.on("message", (request: ThreadRequest) => {
  let reply: ThreadReply;
  try {
    const tokens = Uint32Array.from(tokenizer.tokenize(request.text, request.special));
    reply = { id: request.id, ok: true, tokens };
    port.postMessage(reply, [tokens.buffer]);
  } catch (error) {
    const name = error instanceof Error ? error.name : "Error";
    reply = { id: request.id, ok: false, name, message: error instanceof Error ? error.message : String(error) };
    port.postMessage(reply);
  }
});
port.postMessage({ id: 0, ok: true, tokens: new Uint32Array(0) } satisfies ThreadReply);
