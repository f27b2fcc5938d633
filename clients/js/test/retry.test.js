// Retries against a scripted fetch (no server): which codes are retried, how many times, the
// server's Retry-After, and the call's deadline. Runs on the build: `npm test` after `npm run build`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { BoafError, createBoafClient } from "../dist/index.js";

const DEAL = { rows: 1, cols: 2, cells: ["AS", "2S"], sizes: [] };

function answer(status, body, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** A fetch that answers each call with the next of `answers` (the last one again when they run out). */
function scripted(...answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url: String(url), timeout: new Headers(init.headers).get("connect-timeout-ms") });
    const [status, body, headers] = answers[Math.min(calls.length, answers.length) - 1];
    return answer(status, body, headers);
  };
  return { fetch, calls };
}

const unavailable = [503, { code: "unavailable", message: "compiling kernels" }, { "retry-after": "0" }];
const busy = [429, { code: "resource_exhausted", message: "busy" }];
const invalid = [400, { code: "invalid_argument", message: "state: bad" }];
const dealt = [200, DEAL];

async function failure(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("the call succeeded; an error was expected");
}

test("unavailable and resource_exhausted are retried until an answer", async () => {
  const { fetch, calls } = scripted(unavailable, busy, dealt);
  const boaf = createBoafClient("http://boaf.test", { fetch });
  assert.deepEqual(await boaf.deal({ seed: 1 }), DEAL);
  assert.equal(calls.length, 3);
  assert.equal(calls[0].url, "http://boaf.test/boaf.v1.Game/Deal");
});

test("retries stop after retry.attempts, the error counting them", async () => {
  const { fetch, calls } = scripted(unavailable);
  const error = await failure(createBoafClient("http://boaf.test", { fetch, retry: { attempts: 3 } }).deal());
  assert.ok(error instanceof BoafError);
  assert.equal(error.codeName, "unavailable");
  assert.equal(error.attempts, 3);
  assert.equal(calls.length, 3);
});

test("other codes are never retried", async () => {
  const { fetch, calls } = scripted(invalid, dealt);
  const error = await failure(createBoafClient("http://boaf.test", { fetch }).deal());
  assert.equal(error.codeName, "invalid_argument");
  assert.equal(error.attempts, 1);
  assert.equal(calls.length, 1);
});

test("a Retry-After past the deadline fails at once; each attempt sends what is left of it", async () => {
  const later = [503, { code: "unavailable", message: "compiling kernels" }, { "retry-after": "5" }];
  const { fetch, calls } = scripted(later, dealt);
  const started = Date.now();
  const error = await failure(createBoafClient("http://boaf.test", { fetch, timeoutMs: 1000 }).deal());
  assert.equal(error.codeName, "unavailable");
  assert.ok(Date.now() - started < 1000);
  assert.equal(calls.length, 1);
  assert.ok(Number(calls[0].timeout) <= 1000 && Number(calls[0].timeout) > 0, calls[0].timeout);
});

test("a bad retry policy or timeout is refused when the client is made", () => {
  for (const options of [{ retry: { attempts: 0 } }, { retry: { jitter: 2 } }, { timeoutMs: -1 }]) {
    assert.throws(() => createBoafClient("http://boaf.test", options), (error) => error.codeName === "invalid_argument");
  }
});
