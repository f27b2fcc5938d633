// @boaf/client: a typed client for boaf over the Connect protocol, in Node (20+) and in browsers.

export { createBoafClient, DEFAULT_TIMEOUT_MS, SERVICES } from "./client.js";
export type { BoafAnswer, BoafClient, BoafRequest, CallOptions, ClientOptions } from "./client.js";
export type { Answer, Ask } from "./convert.js";
export { BoafError, codeName } from "./errors.js";
export { DEFAULT_RETRY } from "./retry.js";
export type { RetryPolicy } from "./retry.js";
export type { CodeName } from "./errors.js";
export { NAMED_ENUMS, enumNames, valueName } from "./names.js";
export type { AlgorithmName, SolveStatusName, VerdictName } from "./names.js";
export { Code, ConnectError } from "@connectrpc/connect";

import type { BoafAnswer } from "./client.js";
/** A grid as the server sends it (`deal`, `play`, ...) and takes it: `{ rows, cols, cells, sizes }`. */
export type State = BoafAnswer<"deal">;
