// The client's shapes of boaf's messages, and the two walks between them and protobuf-es's:
//
// - a request is a plain object of the message's fields (lowerCamelCase, all optional), enums by
//   name (see names.ts) and integers as numbers or bigints, checked against the field's range;
// - an answer is the message's fields without protobuf-es's `$typeName`, enums by name and 64-bit
//   integers as numbers (every count the server sends is far below 2^53).
//
// Both walks follow the generated descriptors, so a field added to proto/ is carried at once.

import { ScalarType, create, isMessage } from "@bufbuild/protobuf";
import type { DescEnum, DescField, DescMessage, MessageShape } from "@bufbuild/protobuf";

import { Code } from "@connectrpc/connect";

import { BoafError, invalidArgument } from "./errors.js";
import { enumName, enumNames, enumNumber } from "./names.js";
import type { EnumName } from "./names.js";

type Bytes = Uint8Array;
type Fields<T> = { [K in keyof T as K extends `$${string}` ? never : K]: T[K] };

/** The client's shape of an answer of protobuf-es type `T` (see the module notes). */
export type Answer<T> = T extends bigint
  ? number
  : T extends Bytes
    ? T
    : [0.5] extends [T] // a plain number, not an enum: an enum type has no value 0.5
      ? T
      : T extends number
        ? EnumName<T>
        : T extends readonly (infer Item)[]
          ? Answer<Item>[]
          : T extends { $typeName: string }
            ? { [K in keyof Fields<T>]: Answer<Fields<T>[K]> }
            : T;

/** The client's shape of a request of protobuf-es type `T`: every field optional (see the module notes). */
export type Ask<T> = T extends bigint
  ? number | bigint
  : T extends Bytes
    ? T
    : [0.5] extends [T]
      ? T
      : T extends number
        ? EnumName<T>
        : T extends readonly (infer Item)[]
          ? readonly Ask<Item>[]
          : T extends { $typeName: string }
            ? { [K in keyof Fields<T>]?: Ask<Fields<T>[K]> }
            : T;

const INTEGER_RANGES: Partial<Record<ScalarType, readonly [bigint, bigint]>> = {
  [ScalarType.INT32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.SINT32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.SFIXED32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.UINT32]: [0n, 2n ** 32n - 1n],
  [ScalarType.FIXED32]: [0n, 2n ** 32n - 1n],
  [ScalarType.INT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SINT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SFIXED64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.UINT64]: [0n, 2n ** 64n - 1n],
  [ScalarType.FIXED64]: [0n, 2n ** 64n - 1n],
};
const WIDE = new Set([ScalarType.INT64, ScalarType.SINT64, ScalarType.SFIXED64, ScalarType.UINT64, ScalarType.FIXED64]);
const TYPE_OF: Partial<Record<ScalarType, string>> = {
  [ScalarType.STRING]: "string",
  [ScalarType.BOOL]: "boolean",
  [ScalarType.DOUBLE]: "number",
  [ScalarType.FLOAT]: "number",
};

/** Where a bad value sits, for messages: "state.cells[3]". */
type Path = string;

function quote(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) {
    return String(value);
  }
  const text = typeof value === "string" ? JSON.stringify(value) : `a ${typeof value}`;
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

/** A request's protobuf-es message from the client's shape; refuses a bad value naming its field. */
export function requestMessage<Desc extends DescMessage>(
  procedure: string,
  desc: Desc,
  request: unknown,
): MessageShape<Desc> {
  return create(desc, messageInit(procedure, desc, request ?? {}, "request") as never);
}

function messageInit(procedure: string, desc: DescMessage, value: unknown, path: Path): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidArgument(procedure, `${path}: expected an object of ${desc.typeName} fields, got ${quote(value)}`);
  }
  const init: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const field = desc.fields.find((f) => f.localName === key);
    if (field === undefined) {
      const known = desc.fields.map((f) => f.localName).join(", ");
      throw invalidArgument(procedure, `${path}: ${desc.typeName} has no field ${quote(key)} (its fields: ${known})`);
    }
    if (item !== undefined && item !== null) init[key] = fieldInit(procedure, field, item, joined(path, key));
  }
  return init;
}

function joined(path: Path, key: string): Path {
  return path === "request" ? key : `${path}.${key}`;
}

function fieldInit(procedure: string, field: DescField, value: unknown, path: Path): unknown {
  switch (field.fieldKind) {
    case "scalar":
      return scalarInit(procedure, field.scalar, value, path);
    case "enum":
      return enumInit(procedure, field.enum, value, path);
    case "message":
      return isMessage(value) ? value : messageInit(procedure, field.message, value, path);
    case "list":
      if (!Array.isArray(value)) throw invalidArgument(procedure, `${path}: expected an array, got ${quote(value)}`);
      return value.map((item, i) => {
        const at = `${path}[${i}]`;
        if (field.listKind === "scalar") return scalarInit(procedure, field.scalar, item, at);
        if (field.listKind === "enum") return enumInit(procedure, field.enum, item, at);
        return messageInit(procedure, field.message, item, at);
      });
    case "map":
      throw invalidArgument(procedure, `${path}: map fields are not supported by this client`);
  }
}

function scalarInit(procedure: string, scalar: ScalarType, value: unknown, path: Path): unknown {
  const range = INTEGER_RANGES[scalar];
  if (range !== undefined) {
    const integer = integerOf(procedure, value, range, path);
    return WIDE.has(scalar) ? integer : Number(integer);
  }
  const expected = TYPE_OF[scalar];
  if (expected !== undefined && typeof value !== expected) {
    throw invalidArgument(procedure, `${path}: expected a ${expected}, got ${quote(value)}`);
  }
  return value;
}

function integerOf(procedure: string, value: unknown, [low, high]: readonly [bigint, bigint], path: Path): bigint {
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    const why = Number.isInteger(value) ? "past Number.MAX_SAFE_INTEGER: pass a bigint" : "not an integer";
    throw invalidArgument(procedure, `${path}: ${quote(value)} is ${why}`);
  }
  if (typeof value !== "number" && typeof value !== "bigint") {
    throw invalidArgument(procedure, `${path}: expected an integer (a number or a bigint), got ${quote(value)}`);
  }
  const integer = BigInt(value);
  if (integer < low || integer > high) {
    throw invalidArgument(procedure, `${path}: ${quote(value)} is out of range [${low}, ${high}]`);
  }
  return integer;
}

function enumInit(procedure: string, desc: DescEnum, value: unknown, path: Path): number {
  const number = typeof value === "string" ? enumNumber(desc, value) : undefined;
  if (number === undefined) {
    const names = enumNames(desc).map((name) => JSON.stringify(name)).join(", ");
    throw invalidArgument(procedure, `${path}: ${quote(value)} is not one of ${names}`);
  }
  return number;
}

/** The client's shape of an answer message (see the module notes). */
export function answerOf<Desc extends DescMessage>(procedure: string, desc: Desc, message: MessageShape<Desc>) {
  return messageAnswer(procedure, desc, message, "answer") as Answer<MessageShape<Desc>>;
}

function messageAnswer(procedure: string, desc: DescMessage, message: unknown, path: Path): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  const fields = message as Record<string, unknown>;
  for (const field of desc.fields) {
    answer[field.localName] = fieldAnswer(procedure, field, fields[field.localName], `${path}.${field.localName}`);
  }
  return answer;
}

function fieldAnswer(procedure: string, field: DescField, value: unknown, path: Path): unknown {
  if (value === undefined) return undefined;
  switch (field.fieldKind) {
    case "scalar":
      return scalarAnswer(procedure, value, path);
    case "enum":
      return enumName(field.enum, value as number);
    case "message":
      // A well-known type protobuf-es unwraps (google.protobuf.Struct: a JSON object) stays as it is.
      return isMessage(value, field.message) ? messageAnswer(procedure, field.message, value, path) : value;
    case "list":
      return (value as unknown[]).map((item, i) => {
        if (field.listKind === "scalar") return scalarAnswer(procedure, item, `${path}[${i}]`);
        if (field.listKind === "enum") return enumName(field.enum, item as number);
        return messageAnswer(procedure, field.message, item, `${path}[${i}]`);
      });
    case "map":
      return value;
  }
}

function scalarAnswer(procedure: string, value: unknown, path: Path): unknown {
  if (typeof value !== "bigint") return value;
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    const message = `${path}: ${value} does not fit a JavaScript number; ask with a value below 2^53`;
    throw new BoafError(message, Code.OutOfRange, procedure);
  }
  return Number(value);
}
