// What the app checks, the same in Node (node.test.js) and in a browser (page.js): every RPC of
// boaf.v1.Boaf and boaf.v1.Game through @boaf/client as installed from its tarball, its answers in
// the client's shapes (enum names, numbers), its errors with their code names, and its options
// (token, headers, fetch, timeoutMs, signal, binary, GET).
//
// checks(baseUrl, token) lists [name, async function]; a function throws when its check fails.

import { BoafError, ConnectError, createBoafClient } from "@boaf/client";

// Deterministic inputs: seeded deals, small budgets.
const DEAL_1 = "JD 2D 9H JC 5D 7H 7C 5H KD KC 9S 5S AD QC KH 3H".split(" ");
const THREE = { rows: 1, cols: 3, cells: ["AC", "2C", "3C"] };
const HARD = { rows: 4, cols: 4, cells: "2D JS AS 5C 9D JD 4H 6S 4C TS QS 8S 7D KD 9S TD".split(" ") };
const BAD_STATE = { rows: 1, cols: 2, cells: ["AS", "ZZ"] };

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

function same(actual, expected, what) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  expect(a === e, `${what}: got ${a}, expected ${e}`);
}

function isProbability(p) {
  return typeof p === "number" && p >= 0 && p <= 1;
}

async function failure(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("the call succeeded; an error was expected");
}

function expectError(error, codeName, pattern) {
  expect(error instanceof BoafError && error instanceof ConnectError, `not a BoafError: ${error}`);
  expect(error.codeName === codeName, `code ${error.codeName}, expected ${codeName}: ${error.message}`);
  expect(pattern.test(error.rawMessage), `message ${JSON.stringify(error.rawMessage)} does not match ${pattern}`);
}

export function checks(baseUrl, token) {
  const boaf = createBoafClient(baseUrl, { token, timeoutMs: 60_000 });
  return [
    ["getServerInfo: limits as numbers, algorithms by name", async () => {
      const info = await boaf.getServerInfo();
      expect(typeof info.version === "string" && info.version.length > 0, "no version");
      expect(info.algorithms.includes("island-merge") && info.algorithms.includes("best-n"), `algorithms ${info.algorithms}`);
      expect(info.algorithms.includes(info.defaultAlgorithm), `default ${info.defaultAlgorithm}`);
      expect(Number.isSafeInteger(info.limits.solveMaxNodes) && info.limits.solveMaxNodes > 0, "solveMaxNodes");
      expect(typeof info.modelCard === "object" && info.modelCard !== null, "modelCard is not a JSON object");
      expect(info.featureNames.length > 0 && isProbability(info.classifyThreshold), "features or threshold");
    }],
    ["deal: seed 1 is the known deal, as a number or a bigint", async () => {
      const state = await boaf.deal({ seed: 1 });
      same(state, { rows: 4, cols: 4, cells: DEAL_1, sizes: [] }, "deal 1");
      same(await boaf.deal({ seed: 1n }), state, "deal 1n");
      const wide = await boaf.deal({ seed: 2, rows: 2, cols: 3 });
      expect(wide.rows === 2 && wide.cols === 3 && wide.cells.length === 6, "a 2 x 3 deal");
    }],
    ["solve: deal 1 is solvable, and play replays its moves to a win", async () => {
      const state = await boaf.deal({ seed: 1 });
      const solution = await boaf.solve({ state, algorithm: "compatible" });
      expect(solution.status === "solvable" && solution.algorithm === "compatible", `status ${solution.status}`);
      expect(solution.moves.length === 15 && Number.isInteger(solution.nodes), `${solution.moves.length} moves`);
      const played = await boaf.play({ state, moves: solution.moves });
      expect(played.won && played.legalMoves.length === 0, "the solution does not win");
      const unknown = await boaf.solve({ state: HARD, algorithm: "compatible", maxNodes: 10 });
      expect(unknown.status === "unknown" && unknown.reason === "max_nodes", `${unknown.status} ${unknown.reason}`);
    }],
    ["play: two moves from deal 1 leave legal moves, each with its state", async () => {
      const played = await boaf.play({ state: await boaf.deal({ seed: 1 }), moves: ["9H-9S", "5H-5S"] });
      expect(!played.won && played.legalMoves.length > 0, "no legal moves");
      expect(played.state.cells.filter((cell) => cell !== "").length === 14, "14 stacks after two moves");
      const first = played.legalMoves[0];
      expect(/^[2-9TJQKA][CDHS]-[2-9TJQKA][CDHS]$/.test(first.move) && first.result.cells.length === 16, first.move);
    }],
    ["classify: a probability in [0, 1] per state", async () => {
      const { predictions, modelVersion, threshold } = await boaf.classify({ states: [{ rows: 4, cols: 4, cells: DEAL_1 }, THREE] });
      expect(predictions.length === 2 && modelVersion.length > 0 && isProbability(threshold), "answer");
      for (const p of predictions) expect(isProbability(p.pSolvable) && typeof p.solvable === "boolean", JSON.stringify(p));
      expect(predictions[1].exact && predictions[1].pSolvable === 1 && predictions[1].solvable, "three in a suit is exactly solvable");
    }],
    ["features: one value per name", async () => {
      const { names, vectors, schemaVersion } = await boaf.features({ states: [THREE] });
      expect(schemaVersion.length > 0 && names.length > 0, "no schema or names");
      expect(vectors.length === 1 && vectors[0].values.length === names.length, "vector length");
    }],
    ["analyzePuzzle: three in a suit is solvable, exactly, ratios in [0, 1]", async () => {
      const analysis = await boaf.analyzePuzzle({ state: THREE, seed: 1 });
      expect(analysis.solvable && analysis.exact && analysis.stacks === 3, "answer");
      expect(analysis.solution.length === 2 && isProbability(analysis.halfwayRatio), "solution or halfway ratio");
      expect(analysis.byDepth.every((d) => isProbability(d.ratio) && d.method === "exact"), "by depth");
      expect(analysis.byDepth[0].states === 1 && Number.isInteger(analysis.statesEnumerated), "counts as numbers");
    }],
    ["generatePuzzle: 4 cards, its seed back as a number, its solution wins", async () => {
      const puzzle = await boaf.generatePuzzle({ cards: 4, seed: 1, iterations: 50 });
      expect(puzzle.seed === 1 && puzzle.state.cells.filter((cell) => cell !== "").length === 4, "seed or cards");
      const played = await boaf.play({ state: puzzle.state, moves: puzzle.solution });
      expect(played.won, "the solution does not win");
    }],
    ["hint: each legal move with a verdict by name", async () => {
      const hints = await boaf.hint({ state: await boaf.deal({ seed: 1 }), maxNodesPerMove: 3 });
      const verdicts = new Set(["winnable", "loses", "estimate"]);
      expect(hints.moves.length > 0 && verdicts.has(hints.verdict) && isProbability(hints.pWinnable), "answer");
      expect(hints.moves.every((m) => verdicts.has(m.verdict) && isProbability(m.pWinnable)), "moves' verdicts");
      const three = await boaf.hint({ state: THREE });
      expect(three.verdict === "winnable" && three.pWinnable === 1, `three in a suit: ${three.verdict}`);
    }],
    ["a bad state is the server's invalid_argument, naming the card", async () => {
      expectError(await failure(boaf.solve({ state: BAD_STATE })), "invalid_argument", /ZZ/);
      const error = await failure(boaf.play({ state: BAD_STATE }));
      expectError(error, "invalid_argument", /ZZ/);
      expect(error.procedure === "boaf.v1.Game/Play" && error.details.length === 1, "procedure or details");
    }],
    ["a budget past the server's limit is out_of_range", async () => {
      const { limits } = await boaf.getServerInfo();
      const over = { state: THREE, maxNodes: limits.solveMaxNodes + 1 };
      expectError(await failure(boaf.solve(over)), "out_of_range", /BOAF_SOLVE_MAX_NODES/);
    }],
    ["seeds that are not integers in range are refused before sending", async () => {
      expectError(await failure(boaf.deal({ seed: 1.5 })), "invalid_argument", /^seed: 1\.5 is not an integer$/);
      expectError(await failure(boaf.deal({ seed: 2 ** 60 })), "invalid_argument", /^seed: .* pass a bigint$/);
      expectError(await failure(boaf.deal({ seed: 2n ** 63n })), "invalid_argument", /^seed: .* out of range/);
      expectError(await failure(boaf.generatePuzzle({ cards: 4, seed: -1 })), "invalid_argument", /^seed: -1 is out/);
      expectError(await failure(boaf.deal({ seed: "1" })), "invalid_argument", /^seed: expected an integer/);
    }],
    ["an unknown enum name or field is refused, listing the right ones", async () => {
      const state = { rows: 1, cols: 3, cells: THREE.cells };
      expectError(await failure(boaf.solve({ state, algorithm: "fastest" })), "invalid_argument", /"island-merge"/);
      expectError(await failure(boaf.solve({ state, maxnodes: 5 })), "invalid_argument", /no field "maxnodes".*maxNodes/);
    }],
    ["timeoutMs: a search longer than the deadline is deadline_exceeded", async () => {
      const error = await failure(boaf.solve({ state: HARD, algorithm: "compatible" }, { timeoutMs: 50 }));
      expectError(error, "deadline_exceeded", /./);
    }],
    ["an aborted signal cancels the call", async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await failure(boaf.deal({ seed: 1 }, { signal: controller.signal }));
      expectError(error, "canceled", /./);
    }],
    ["without the token the server says unauthenticated", async () => {
      const anonymous = createBoafClient(baseUrl, { timeoutMs: 30_000 });
      expectError(await failure(anonymous.deal({ seed: 1 })), "unauthenticated", /bearer token/);
    }],
    ["headers and fetch: the given fetch makes every call, with the client's headers or the call's", async () => {
      // x-request-id: a header the server echoes, and one its CORS lets a page send.
      const echoed = [];
      const recording = async (input, init) => {
        const response = await fetch(input, init);
        echoed.push(response.headers.get("x-request-id"));
        return response;
      };
      const client = createBoafClient(baseUrl, { token, fetch: recording, headers: { "x-request-id": "e2e-client" } });
      await client.deal({ seed: 1 });
      await client.deal({ seed: 1 }, { headers: { "x-request-id": "e2e-call" } });
      same(echoed, ["e2e-client", "e2e-call"], "the request ids the server echoed");
    }],
    ["binary and GET give the same answers as JSON over POST", async () => {
      const state = await boaf.deal({ seed: 7 });
      for (const format of [{ useBinaryFormat: true }, { useHttpGet: true }, { useBinaryFormat: true, useHttpGet: true }]) {
        const client = createBoafClient(baseUrl, { token, ...format });
        same(await client.deal({ seed: 7 }), state, JSON.stringify(format));
        const hints = await client.hint({ state, maxNodesPerMove: 3 });
        same(hints, await boaf.hint({ state, maxNodesPerMove: 3 }), `hint, ${JSON.stringify(format)}`);
      }
    }],
  ];
}
