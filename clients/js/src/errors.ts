// Every failure of a call is a BoafError: a ConnectError (so `instanceof ConnectError` and Connect's
// own helpers still work) that also carries its code's name and the method it came from.

import { Code, ConnectError } from "@connectrpc/connect";

type Snake<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${Snake<Tail>}`
  : S;

/**
 * A status code's name as the Connect protocol writes it on the wire: "invalid_argument",
 * "out_of_range", "deadline_exceeded", "unauthenticated", "resource_exhausted", "canceled", ...
 */
export type CodeName = Snake<Uncapitalize<keyof typeof Code & string>>;

/** The wire name of a Connect code (`Code.InvalidArgument` -> `"invalid_argument"`). */
export function codeName(code: Code): CodeName {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase() as CodeName;
}

export class BoafError extends ConnectError {
  /** The code's wire name, e.g. "invalid_argument"; `code` is Connect's number for it. */
  readonly codeName: CodeName;
  /** The RPC that failed, e.g. "boaf.v1.Boaf/Solve". */
  readonly procedure: string;
  /** Calls made to the server, retries included; 0 when the client refused the request itself. */
  readonly attempts: number;

  constructor(rawMessage: string, code: Code, procedure: string, attempts = 0, metadata?: HeadersInit, cause?: unknown) {
    super(rawMessage, code, metadata, undefined, cause);
    this.codeName = codeName(code);
    this.procedure = procedure;
    this.attempts = attempts;
    // ConnectError's own instanceof test knows its subclasses by this name.
    this.name = "ConnectError";
  }

  /** `reason` (whatever a Connect call threw) as a BoafError of `procedure` after `attempts`, its details kept. */
  static fromCall(reason: unknown, procedure: string, attempts: number): BoafError {
    const error = ConnectError.from(reason);
    const boaf = new BoafError(error.rawMessage, error.code, procedure, attempts, error.metadata, error.cause ?? reason);
    boaf.details = error.details;
    return boaf;
  }

  // ConnectError's test accepts any ConnectError-shaped value; a BoafError is only what was made as one.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && Object.prototype.isPrototypeOf.call(BoafError.prototype, value);
  }
}

/** An argument the client refuses before sending: INVALID_ARGUMENT, its message naming the field. */
export function invalidArgument(procedure: string, message: string): BoafError {
  return new BoafError(message, Code.InvalidArgument, procedure);
}
