// Enum values by name: the proto value's name without its enum's prefix, in lower case, with
// hyphens for underscores (ALGORITHM_UNSPECIFIED -> "unspecified", BEST_N -> "best-n",
// VERDICT_WINNABLE -> "winnable"), as boaf's Python client and `boaf solve --algorithm` spell them.
// The names are read from the generated descriptors, so a value added to proto/ has its name here.

import type { DescEnum } from "@bufbuild/protobuf";

import type { Algorithm, SolveStatus } from "./gen/boaf/v1/boaf_pb.js";
import type { Verdict } from "./gen/boaf/v1/game_pb.js";

type Kebab<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}-${Kebab<Tail>}` : S;
type WithoutPrefix<S extends string, Prefix extends string> = S extends `${Prefix}_${infer Rest}` ? Rest : S;
/** The names of a generated TypeScript enum's values (`typeof Algorithm`) whose proto prefix is `Prefix`. */
type NamesOf<Enum extends object, Prefix extends string> = Lowercase<Kebab<WithoutPrefix<keyof Enum & string, Prefix>>>;

/** `Solve`'s algorithms: "ordered", "compatible", "constrained", "best-n", "island-merge"; "unspecified" is the server's default. */
export type AlgorithmName = NamesOf<typeof Algorithm, "ALGORITHM">;
/** A `Solve` answer's status: "solvable", "unsolvable" or "unknown" (a budget ran out; see its reason). */
export type SolveStatusName = NamesOf<typeof SolveStatus, "SOLVE_STATUS">;
/** A `Hint` verdict: "winnable" or "loses" (exact), or "estimate" (see pWinnable). */
export type VerdictName = NamesOf<typeof Verdict, "VERDICT">;

/** The name type of a generated enum type; `never` for an enum this table does not know. */
export type EnumName<T> = T extends Algorithm
  ? AlgorithmName
  : T extends SolveStatus
    ? SolveStatusName
    : T extends Verdict
      ? VerdictName
      : never;

/** The enums `EnumName` knows, by full proto name (the package's tests check every RPC reaches only these). */
export const NAMED_ENUMS: readonly string[] = ["boaf.v1.Algorithm", "boaf.v1.SolveStatus", "boaf.v1.Verdict"];

function screamingSnake(camel: string): string {
  return camel.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

/** The client's name of one proto enum value name (`"SOLVE_STATUS_UNKNOWN"` of `SolveStatus` -> `"unknown"`). */
export function valueName(desc: DescEnum, protoName: string): string {
  const prefix = `${screamingSnake(desc.name)}_`;
  const bare = protoName.startsWith(prefix) ? protoName.slice(prefix.length) : protoName;
  return bare.toLowerCase().replaceAll("_", "-");
}

const tables = new WeakMap<DescEnum, { byName: Map<string, number>; byNumber: Map<number, string> }>();

function table(desc: DescEnum) {
  let found = tables.get(desc);
  if (found === undefined) {
    const pairs = desc.values.map((value) => [valueName(desc, value.name), value.number] as const);
    found = { byName: new Map(pairs), byNumber: new Map(pairs.map(([name, number]) => [number, name])) };
    tables.set(desc, found);
  }
  return found;
}

/** Every name of `desc`'s values, in proto order. */
export function enumNames(desc: DescEnum): string[] {
  return [...table(desc).byName.keys()];
}

/** The number of the value named `name`, or undefined when `desc` has no such value. */
export function enumNumber(desc: DescEnum, name: string): number | undefined {
  return table(desc).byName.get(name);
}

/** The name of value `number`; a number this client does not know (a newer server) stays a number's text. */
export function enumName(desc: DescEnum, number: number): string {
  return table(desc).byNumber.get(number) ?? String(number);
}
