// The checks of checks.js in a browser page, bundled by esbuild into bundle.js. The server and its
// token come in the page's query (?server=http://127.0.0.1:8080&token=...). Each result is listed on
// the page and kept in window.boafResults; <body data-done> says that every check has run.

import { checks } from "./checks.js";

const CHECK_TIMEOUT_MS = 60_000;

function withinTime(promise) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function run() {
  const query = new URLSearchParams(location.search);
  const results = [];
  window.boafResults = results;
  for (const [name, check] of checks(query.get("server"), query.get("token"))) {
    try {
      await withinTime(check());
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: String(error?.stack ?? error) });
    }
    const item = document.createElement("li");
    item.textContent = `${results.at(-1).ok ? "ok" : "FAILED"}: ${name}`;
    document.getElementById("results").append(item);
  }
  document.body.dataset.done = "true";
}

run().catch((error) => {
  // Failing outside any check (the bundle's imports, say): the driver reads why and stops waiting.
  document.body.dataset.error = String(error?.stack ?? error);
  document.body.dataset.done = "true";
});
