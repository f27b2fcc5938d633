// The checks of checks.js in Node: one test each, against the server at BOAF_HTTP_URL (its token in
// BOAF_TOKEN). scripts/check-js-client starts the server and runs this with `npm test`.

import { test } from "node:test";

import { checks } from "./checks.js";

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (scripts/check-js-client sets it)`);
  return value;
}

for (const [name, check] of checks(required("BOAF_HTTP_URL"), required("BOAF_TOKEN"))) {
  test(name, { timeout: 60_000 }, check);
}
