// createBoafClient: one async method per RPC of boaf.v1.Boaf and boaf.v1.Game, over the Connect
// protocol with the fetch API (Node 20+ and browsers alike), taking and returning the shapes of
// convert.ts and failing with BoafError.

import type { DescMessage, DescMethod, DescService, MessageShape } from "@bufbuild/protobuf";
import type { GenService } from "@bufbuild/protobuf/codegenv2";
import { createClient } from "@connectrpc/connect";
import type { Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";

import { answerOf, requestMessage } from "./convert.js";
import type { Answer, Ask } from "./convert.js";
import { BoafError, invalidArgument } from "./errors.js";
import { checkedPolicy, pause, retryDelayMs } from "./retry.js";
import type { RetryPolicy } from "./retry.js";
import { Boaf } from "./gen/boaf/v1/boaf_pb.js";
import { Game } from "./gen/boaf/v1/game_pb.js";

/** The services the client calls, each RPC a method of the client under its lowerCamelCase name. */
export const SERVICES: readonly DescService[] = [Boaf, Game];

/** The deadline of every call unless the client or the call says otherwise, in ms (the Python client's too). */
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface ClientOptions {
  /** Deadline of each call in ms, retries included, counted from the method's call; 0: none. Default `DEFAULT_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Headers sent with every call (e.g. `{ "x-request-id": ... }`). */
  headers?: HeadersInit;
  /** A bearer token for a server with `BOAF_API_TOKENS`: sent as `authorization: Bearer <token>`. */
  token?: string;
  /** The fetch to call the server with (default: `globalThis.fetch`), e.g. one that sets `credentials`. */
  fetch?: typeof globalThis.fetch;
  /** Send and read binary protobuf instead of JSON. Default false. */
  useBinaryFormat?: boolean;
  /** Call with GET (every boaf RPC is side-effect free) instead of POST; a URL past 8 KiB is refused. */
  useHttpGet?: boolean;
  /** Retries of "unavailable" and "resource_exhausted" (see retry.ts); `{ attempts: 1 }`: none. */
  retry?: RetryPolicy;
}

export interface CallOptions {
  /** This call's deadline in ms; 0: none. Default: the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Headers of this call, on top of the client's. */
  headers?: HeadersInit;
  /** Aborting it cancels the call (a BoafError "canceled"). */
  signal?: AbortSignal;
}

type MethodsOf<S> = S extends GenService<infer Methods> ? Methods : never;
type ClientOf<Methods> = {
  [K in keyof Methods]: Methods[K] extends { input: infer In extends DescMessage; output: infer Out extends DescMessage }
    ? (request?: Ask<MessageShape<In>>, options?: CallOptions) => Promise<Answer<MessageShape<Out>>>
    : never;
};
type Services = { Boaf: MethodsOf<typeof Boaf>; Game: MethodsOf<typeof Game> };

/** Every RPC's method: `classify`, `solve`, ... (Boaf) and `deal`, `play`, `hint` (Game). */
export type BoafClient = ClientOf<Services["Boaf"]> & ClientOf<Services["Game"]>;
/** The request of method `M`, e.g. `BoafRequest<"solve">`. */
export type BoafRequest<M extends keyof BoafClient> = NonNullable<Parameters<BoafClient[M]>[0]>;
/** The answer of method `M`, e.g. `BoafAnswer<"solve">`. */
export type BoafAnswer<M extends keyof BoafClient> = Awaited<ReturnType<BoafClient[M]>>;

/**
 * A client of the boaf server at `baseUrl`, its HTTP port (e.g. `"http://127.0.0.1:8080"`).
 * Each method takes a request object (fields as in proto/, lowerCamelCase, all optional) and
 * resolves to the answer; every failure rejects with a `BoafError`.
 */
export function createBoafClient(baseUrl: string, options: ClientOptions = {}): BoafClient {
  const timeoutMs = checkedTimeout("createBoafClient", options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const policy = checkedPolicy(options.retry);
  const transport = createConnectTransport({
    baseUrl,
    fetch: options.fetch,
    useBinaryFormat: options.useBinaryFormat ?? false,
    useHttpGet: options.useHttpGet ?? false,
    interceptors: [sending(clientHeaders(options))],
  });
  const client: Record<string, unknown> = {};
  for (const service of SERVICES) {
    const generated = createClient(service, transport) as unknown as Record<string, Generated>;
    for (const method of service.methods) {
      if (method.localName in client) throw new Error(`two services have a method ${method.localName}`);
      client[method.localName] = caller(method, generated[method.localName]!, timeoutMs, policy);
    }
  }
  return client as BoafClient;
}

function clientHeaders(options: ClientOptions): Headers {
  const headers = new Headers(options.headers);
  if (options.token !== undefined) headers.set("authorization", `Bearer ${options.token}`);
  return headers;
}

function sending(headers: Headers): Interceptor {
  return (next) => async (request) => {
    headers.forEach((value, name) => {
      if (!request.header.has(name)) request.header.set(name, value);
    });
    return await next(request);
  };
}

function procedureOf(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

function checkedTimeout(procedure: string, timeoutMs: unknown): number | undefined {
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw invalidArgument(procedure, `timeoutMs: expected a number of ms >= 0 (0: no deadline), got ${String(timeoutMs)}`);
  }
  return timeoutMs === 0 ? undefined : timeoutMs;
}

type Generated = (request: unknown, options: object) => Promise<MessageShape<DescMessage>>;

function caller(method: DescMethod, generated: Generated, clientTimeoutMs: number | undefined, policy: Required<RetryPolicy>) {
  const procedure = procedureOf(method);
  return async (request?: unknown, options: CallOptions = {}) => {
    const message = requestMessage(procedure, method.input, request);
    const timeoutMs = options.timeoutMs === undefined ? clientTimeoutMs : checkedTimeout(procedure, options.timeoutMs);
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (let attempt = 1; ; attempt++) {
      // Each attempt gets what is left of the call's deadline.
      const left = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
      try {
        const answer = await generated(message, { timeoutMs: left, headers: options.headers, signal: options.signal });
        return answerOf(procedure, method.output, answer);
      } catch (reason) {
        if (reason instanceof BoafError) throw reason; // the answer's own check, not the call
        const error = BoafError.fromCall(reason, procedure, attempt);
        const wait = retryDelayMs(policy, attempt, error);
        if (wait === undefined || (deadline !== undefined && Date.now() + wait >= deadline)) throw error;
        await pause(wait, procedure, options.signal);
      }
    }
  };
}
