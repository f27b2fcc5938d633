// Retries, as gRPC's retry guidance says and as boaf's Python client does them: only "unavailable"
// (kernels still compiling, the model loading) and "resource_exhausted" (busy), each wait at least
// the server's Retry-After, and never past the call's deadline. Every boaf RPC is free of side
// effects, so a retry is always safe.

import { Code } from "@connectrpc/connect";

import { BoafError, invalidArgument } from "./errors.js";

export interface RetryPolicy {
  /** Attempts in all, the first included; 1 turns retries off. Default 4. */
  attempts?: number;
  /** The backoff before the first retry, in ms. Default 100. */
  initialBackoffMs?: number;
  /** The backoff's growth from one retry to the next. Default 2. */
  multiplier?: number;
  /** The longest backoff, in ms. Default 5,000. */
  maxBackoffMs?: number;
  /** Each wait is `backoff * (1 - jitter * U)`, U uniform in [0, 1); 1 is gRPC's full jitter. Default 1. */
  jitter?: number;
}

export const DEFAULT_RETRY: Required<RetryPolicy> = {
  attempts: 4,
  initialBackoffMs: 100,
  multiplier: 2,
  maxBackoffMs: 5_000,
  jitter: 1,
};

const RETRIED = new Set([Code.Unavailable, Code.ResourceExhausted]);

/** `policy` with its defaults, each value checked (INVALID_ARGUMENT naming it). */
export function checkedPolicy(policy: RetryPolicy = {}): Required<RetryPolicy> {
  const full = { ...DEFAULT_RETRY, ...policy };
  const bad = Object.entries(full).find(([, value]) => typeof value !== "number" || !(value >= 0));
  if (bad !== undefined) throw invalidArgument("createBoafClient", `retry.${bad[0]}: expected a number >= 0`);
  if (!Number.isInteger(full.attempts) || full.attempts < 1) {
    throw invalidArgument("createBoafClient", `retry.attempts: expected an integer >= 1, got ${full.attempts}`);
  }
  if (full.jitter > 1) throw invalidArgument("createBoafClient", `retry.jitter: expected at most 1, got ${full.jitter}`);
  return full;
}

/** How long to wait before retrying after `error`, the `attempt`th failure (1-based), in ms; undefined: do not. */
export function retryDelayMs(policy: Required<RetryPolicy>, attempt: number, error: BoafError): number | undefined {
  if (!RETRIED.has(error.code) || attempt >= policy.attempts) return undefined;
  const backoff = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * policy.multiplier ** (attempt - 1));
  const jittered = backoff * (1 - policy.jitter * Math.random());
  return Math.max(jittered, retryAfterMs(error));
}

function retryAfterMs(error: BoafError): number {
  const seconds = Number(error.metadata.get("retry-after") ?? "0");
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

/** Resolves after `ms`; rejects with a "canceled" BoafError of `procedure` when `signal` aborts first. */
export function pause(ms: number, procedure: string, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const canceled = () => new BoafError("the call was canceled while waiting to retry", Code.Canceled, procedure);
    if (signal?.aborted) return reject(canceled());
    const onAbort = () => {
      clearTimeout(timer);
      reject(canceled());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
