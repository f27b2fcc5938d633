// The enum names the client speaks: every enum an RPC reaches has its type in names.ts (EnumName),
// and the names are the documented ones. Runs on the build: `npm test` after `npm run build`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { NAMED_ENUMS, SERVICES, enumNames } from "../dist/index.js";

function enumsOf(message, seen = new Set(), found = new Map()) {
  if (seen.has(message.typeName)) return found;
  seen.add(message.typeName);
  for (const field of message.fields) {
    if (field.enum) found.set(field.enum.typeName, field.enum);
    // google.protobuf.Struct comes as a plain JSON object (its NullValue is JSON's null).
    if (field.message && !field.message.typeName.startsWith("google.protobuf.")) enumsOf(field.message, seen, found);
  }
  return found;
}

const reached = new Map();
for (const service of SERVICES) {
  for (const method of service.methods) {
    for (const [name, desc] of [...enumsOf(method.input), ...enumsOf(method.output)]) reached.set(name, desc);
  }
}

test("every enum an RPC reaches is one names.ts types", () => {
  assert.deepEqual([...reached.keys()].sort(), [...NAMED_ENUMS].sort());
});

test("the names are the proto names without the enum's prefix, lower case, hyphens for underscores", () => {
  assert.deepEqual(enumNames(reached.get("boaf.v1.Algorithm")), [
    "unspecified", "ordered", "compatible", "constrained", "best-n", "island-merge",
  ]);
  assert.deepEqual(enumNames(reached.get("boaf.v1.SolveStatus")), ["unspecified", "solvable", "unsolvable", "unknown"]);
  assert.deepEqual(enumNames(reached.get("boaf.v1.Verdict")), ["unspecified", "winnable", "loses", "estimate"]);
});
