// The boaf playground: every rule and answer comes from the server's HTTP/JSON API
// (POST /boaf.v1.<Service>/<Method>, proto3 JSON); this file only draws and asks.
//
// One action at a time: deal, load, move, undo, redo, solve, replay and puzzle generation each
// start with begin(), which aborts the action in flight; an aborted action's answers are never
// applied (call() throws once its signal is aborted). The verdicts of a position are looked up
// in the background and dropped as soon as the position changes.
"use strict";

const TIMEOUT_MS = 300000; // sent as Connect-Timeout-Ms: the server stops searching when it passes
const STEP_MS = 500; // pause between the moves of a played solution
const PROGRESS_AFTER_MS = 1000; // an action running longer shows its elapsed time and a Cancel
const RANKS = { A: "ace", T: "ten", J: "jack", Q: "queen", K: "king" };
const SUITS = { C: ["♣", "clubs"], D: ["♦", "diamonds"], H: ["♥", "hearts"], S: ["♠", "spades"] };
const TOKEN_KEY = "boaf-token"; // the bearer token, when the server asks for one (BOAF_API_TOKENS); this tab only
const DOING = { deal: "Dealing", load: "Loading", move: "Playing", goto: "Going back", solve: "Solving",
  replay: "Playing the solution", generate: "Generating the puzzle" };
const SEEDS = [-2147483648n, 2147483647n]; // a seed is a 32-bit signed number (the server's range)
const DECK = 52; // a grid holds at most one deck: rows × columns ≤ 52
const SIZES = { "4x4": [4, 4], "5x5": [5, 5], "4x13": [4, 13] }; // the grid presets; any other is "custom"
const READY_POLL_MS = 1000; // how often a call waiting for the solver asks /readyz
const CARD = /^(?:10|[A2-9TJQK])[CDHS]$/i; // a card name as the server reads it ("10" is a ten too)

const $ = (id) => document.getElementById(id);
let origin = null; // where the line starts: {seed} or {grid}, and its first state
let line = []; // every move played from the origin (redo keeps the ones after `at`)
let positions = []; // positions[i]: the PlayResponse after line[0..i), filled as they are seen
let at = 0; // moves of `line` played to reach the position shown
let action = null; // the action in flight: {kind, controller, began}
let looking = null; // AbortController of the current position's background verdicts
let chartLooking = null; // AbortController of the current puzzle's analysis
const facts = new Map(); // what is known of a state (keyed by stateKey): {solve, judged}
let selected = null; // cell index of the chosen source stack
let focusIndex = null; // the board's roving tab stop
let tokenWaiters = []; // calls waiting for a token to be entered
let progressTimer = null;
let hinted = null; // the hint drawn on the board for the position shown: {move, said, note}
let waitingForSolver = 0; // calls waiting until the server is ready (a first start compiling its kernels)

class Refused extends Error {
  constructor(message, code) { super(message); this.code = code; }
}

// A call refused for want of a valid token waits until one is entered, then goes again.
async function call(method, body, signal) {
  for (;;) {
    const headers = { "Content-Type": "application/json", "Connect-Timeout-Ms": String(TIMEOUT_MS) };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(`/boaf.v1.${method}`, { method: "POST", headers, body: JSON.stringify(body), signal });
    const answer = await response.json();
    signal?.throwIfAborted();
    if (response.status === 401 && answer.code === "unauthenticated") {
      await askForToken(token ? "That token was refused; enter another." : "This server needs an access token.");
      signal?.throwIfAborted();
      continue;
    }
    if (response.status === 503 && answer.code === "unavailable") {
      await solverReady(signal, 1000 * (Number(response.headers.get("Retry-After")) || 5));
      continue;
    }
    if (!response.ok) throw new Refused(answer.message || `${response.status} ${response.statusText}`, answer.code);
    return answer;
  }
}

// A call refused because the server is not ready (a first start compiling its kernels, the model loading) waits
// until /readyz says SERVING, showing how far it is, and then goes again by itself. A server that is SERVING
// already (a rarely used kernel still compiling in the background) gets the pause its Retry-After asks for.
async function solverReady(signal, pauseMs) {
  waitingForSolver += 1;
  try {
    if (await isServing(signal)) {
      await sleep(pauseMs, signal);
      return;
    }
    do await sleep(READY_POLL_MS, signal); while (!(await isServing(signal)));
  } finally {
    waitingForSolver -= 1;
    if (!waitingForSolver) $("getting-ready").hidden = true;
  }
}

async function isServing(signal) {
  let ready = null;
  try {
    const response = await fetch("/readyz", { cache: "no-store", signal });
    ready = await response.json();
  } catch (error) {
    signal.throwIfAborted(); // else the server is out of reach for now: ask again
  }
  drawReadiness(ready);
  return ready?.status === "SERVING";
}

function drawReadiness(ready) {
  const counted = ready?.kernels_total > 0;
  const text = counted
    ? `The solver is getting ready (first start only): ${ready.kernels_compiled} of ${ready.kernels_total} parts ` +
      "compiled. What you asked for follows by itself when it is ready."
    : ready?.status === "SERVING"
      ? "Part of the solver is still getting ready (first start only): asking again in a moment."
      : "The solver is getting ready (first start only). What you asked for follows by itself when it is ready.";
  if ($("ready-text").textContent !== text) $("ready-text").textContent = text; // the live region speaks on change
  const bar = $("ready-progress");
  if (counted) {
    bar.max = ready.kernels_total;
    bar.value = ready.kernels_compiled;
  } else {
    bar.removeAttribute("value"); // indeterminate
  }
  $("getting-ready").hidden = false;
}

function askForToken(note) {
  $("token-note").textContent = note;
  if ($("token-form").hidden) {
    $("token-form").hidden = false;
    $("token").focus();
  }
  return new Promise((resolve) => tokenWaiters.push(resolve));
}

function useToken(event) {
  event.preventDefault();
  const token = $("token").value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("token").value = "";
  $("token-form").hidden = true;
  const waiting = tokenWaiters;
  tokenWaiters = [];
  waiting.forEach((resume) => resume());
}

// --- actions: one at a time ---

function begin(kind) {
  action?.controller.abort();
  const controller = new AbortController();
  action = { kind, controller, began: performance.now() };
  clearInterval(progressTimer);
  $("progress").hidden = true;
  progressTimer = setInterval(showProgress, 100);
  drawActions();
  return controller.signal;
}

function finish(signal) {
  if (action?.controller.signal !== signal) return; // a newer action took over
  action = null;
  clearInterval(progressTimer);
  $("progress").hidden = true;
  drawActions();
}

function showProgress() {
  if (!action) return;
  const elapsed = performance.now() - action.began;
  if (elapsed < PROGRESS_AFTER_MS || action.kind === "replay") return;
  $("progress").hidden = false;
  $("elapsed").textContent = `${DOING[action.kind]}… ${(elapsed / 1000).toFixed(1)} s`;
}

function cancel() {
  if (!action) return;
  const kind = action.kind;
  action.controller.abort();
  finish(action.controller.signal);
  say(kind === "replay" ? "Replay stopped." : `${DOING[kind]}: cancelled.`);
}

// Runs `work(signal)` as the one action; its errors show unless a newer action abandoned it.
async function run(kind, work) {
  const signal = begin(kind);
  $("error").textContent = "";
  try {
    await work(signal);
  } catch (error) {
    if (!signal.aborted) fail(error);
  } finally {
    finish(signal);
  }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });
}

// --- positions ---

function stateKey(state) {
  return JSON.stringify([state.rows, state.cols, state.cells, state.sizes || []]);
}

function factsOf(state) {
  const key = stateKey(state);
  if (!facts.has(key)) facts.set(key, {});
  return facts.get(key);
}

function game() {
  return positions[at];
}

// Opens `newOrigin` and plays `moves` from it; when one of them is refused, the moves before it are played and
// the refusal is said in the error line.
async function open(newOrigin, moves, signal, message) {
  const first = await call("Game/Play", { state: newOrigin.state, moves: [] }, signal);
  let played = moves, last = first, refusal = "";
  if (moves.length) {
    try {
      last = await call("Game/Play", { state: newOrigin.state, moves }, signal);
    } catch (error) {
      if (!(error instanceof Refused) || error.code !== "invalid_argument") throw error;
      const number = Number(/^move (\d+) of \d+: /.exec(error.message)?.[1] || 1);
      played = moves.slice(0, number - 1);
      last = played.length ? await call("Game/Play", { state: newOrigin.state, moves: played }, signal) : first;
      refusal = refusedMove(moves[number - 1], number, error.message);
    }
  }
  origin = newOrigin;
  line = [...played];
  positions = [first];
  positions[played.length] = last;
  at = played.length;
  chartLooking?.abort();
  $("puzzle").hidden = true;
  showOrigin();
  show(message);
  $("error").textContent = refusal;
}

// What a link's refused move was, and why, in the words of the game: "Move 2 of the link, 5S-7D (5 of spades
// onto 7 of diamonds), cannot be played: row 1, column 1 and row 4, column 2 share no row or column. …".
function refusedMove(move, number, message) {
  const why = message.replace(/^move \d+ of \d+: /, "").replace(/^move '[^']*'(?: is not legal)?:? ?/, "");
  const [from, to] = move.toUpperCase().split("-");
  const card = /^[A2-9TJQK][CDHS]$/;
  const named = card.test(from) && card.test(to) ? ` (${cardName(from)} onto ${cardName(to)})` : "";
  return `Move ${number} of the link, ${move}${named}, cannot be played: ${why || message}. The board shows the ` +
    "position before it.";
}

// The Start forms show where the line starts: its seed and grid size, and its grid.
function showOrigin() {
  const { state } = origin;
  if (origin.seed !== undefined) {
    $("seed").value = origin.seed;
    showSize(state.rows, state.cols);
  }
  $("grid").value = gridText(state);
  $("board-title").textContent = origin.seed !== undefined ? dealTitle(origin.seed, state) : origin.title || "Grid";
}

function dealTitle(seed, { rows, cols }) {
  return rows === 4 && cols === 4 ? `Deal ${seed}` : `Deal ${seed}, ${rows}×${cols}`;
}

function showSize(rows, cols) {
  const preset = Object.keys(SIZES).find((name) => SIZES[name][0] === rows && SIZES[name][1] === cols);
  $("size").value = preset || "custom";
  $("rows").value = String(rows);
  $("cols").value = String(cols);
  $("custom-size").hidden = Boolean(preset);
}

async function reach(index, signal) {
  if (!positions[index]) {
    positions[index] = await call("Game/Play", { state: origin.state, moves: line.slice(0, index) }, signal);
  }
  at = index;
}

async function doMove(move, signal, focus) {
  const before = game();
  const legal = before.legalMoves.find((m) => m.move === move);
  // With the verdicts on, one Hint of the known result is the next position and its verdicts at once.
  const answer = legal && $("show-verdicts").checked
    ? await hintedPosition(legal.result, signal)
    : await call("Game/Play", { state: before.state, moves: [move] }, signal);
  const target = before.state.cells.indexOf(move.split("-")[1]);
  if (line[at] !== move) {
    line = line.slice(0, at).concat(move);
    positions = positions.slice(0, at + 1);
  }
  positions[at + 1] = answer;
  const known = factsOf(before.state).solve;
  if (known?.status === "SOLVABLE" && known.moves[0] === move) {
    factsOf(answer.state).solve = { ...known, moves: known.moves.slice(1) };
  }
  at += 1;
  selected = null;
  if (target >= 0) focusIndex = target;
  show(`Played ${move}.`, focus);
}

function show(message, focus = false) {
  const { state, won, legalMoves } = game();
  selected = null;
  if (focusIndex === null || !state.cells[focusIndex]) focusIndex = state.cells.findIndex(Boolean);
  $("error").textContent = "";
  hinted = null;
  drawBoard(focus);
  drawMoves();
  drawHistory();
  drawActions();
  drawHint();
  followUrl();
  if (won) say(`You won in ${at} ${at === 1 ? "move" : "moves"}: one stack left.`, "won");
  else if (legalMoves.length === 0) say("No moves left: the deal is lost. Undo to go back.", "lost");
  else say(message || `${legalMoves.length} legal moves.`);
  looking?.abort();
  looking = new AbortController();
  if ($("show-verdicts").checked) lookUp(looking.signal);
}

function say(text, outcome = "") {
  $("status").textContent = text;
  $("status").className = outcome;
}

function fail(error) {
  say("");
  $("error").textContent = error.message;
}

// --- drawing ---

function cardName(text) {
  const rank = RANKS[text[0]] || text[0];
  return `${rank} of ${SUITS[text[1]][1]}`;
}

function cardText(text) {
  return `${text[0]}${SUITS[text[1]][0]}`;
}

function cellLabel(state, index) {
  const row = Math.floor(index / state.cols) + 1, col = (index % state.cols) + 1;
  const height = state.sizes?.length ? state.sizes[index] : 1;
  const shown = cardText(state.cells[index]) + (height > 1 ? ` ×${height}` : "");
  const stack = height > 1 ? `, a stack of ${height} cards` : "";
  return `${shown}: ${cardName(state.cells[index])}${stack}, row ${row}, column ${col}`;
}

function drawBoard(focus) {
  const { state } = game();
  const board = $("board");
  const hadFocus = board.contains(document.activeElement);
  board.style.setProperty("--cols", String(state.cols));
  board.style.setProperty("--rows", String(state.rows));
  board.replaceChildren(
    ...state.cells.map((text, index) => {
      if (!text) {
        const empty = document.createElement("div");
        empty.className = "empty";
        return empty;
      }
      const button = document.createElement("button");
      const height = state.sizes?.length ? state.sizes[index] : 1;
      button.type = "button";
      button.className = `card${"DH".includes(text[1]) ? " red" : ""}`;
      button.dataset.card = text;
      button.dataset.index = String(index);
      button.tabIndex = index === focusIndex ? 0 : -1;
      button.setAttribute("aria-label", cellLabel(state, index));
      button.setAttribute("aria-pressed", String(selected === index));
      button.textContent = cardText(text);
      if (height > 1) {
        const count = document.createElement("span");
        count.className = "height";
        count.textContent = ` ×${height}`;
        button.append(count);
      }
      return button;
    }),
  );
  board.dataset.played = String(at);
  markCards();
  drawArrow();
  if (hadFocus || focus) board.querySelector(`[data-index="${focusIndex}"]`)?.focus();
}

function drawActions() {
  const current = game();
  const replaying = action?.kind === "replay";
  const solution = current && factsOf(current.state).solve;
  $("undo").disabled = !current || at === 0;
  $("redo").disabled = !current || at >= line.length;
  $("hint").disabled = !current || current.won || current.legalMoves.length === 0;
  $("solve").disabled = !current || current.won;
  $("play-solution").textContent = replaying ? "Stop" : "Play the solution";
  $("play-solution").disabled = !replaying && !(solution?.status === "SOLVABLE" && solution.moves.length);
  $("board").setAttribute("aria-busy", String(Boolean(action) && !replaying));
}

function drawMoves() {
  const list = $("moves");
  const { legalMoves, won } = game();
  list.replaceChildren(
    ...legalMoves.map((legal) => {
      const item = document.createElement("li");
      const button = document.createElement("button");
      const [from, to] = legal.move.split("-");
      button.type = "button";
      button.textContent = legal.move;
      button.dataset.move = legal.move;
      button.setAttribute("aria-label", `${legal.move}: move ${cardName(from)} onto ${cardName(to)}`);
      const tag = document.createElement("span");
      tag.className = "hint-tag";
      tag.textContent = "hint";
      tag.hidden = true;
      const verdict = document.createElement("span");
      verdict.className = "verdict";
      item.append(button, tag, verdict);
      return item;
    }),
  );
  $("no-moves").textContent = legalMoves.length ? "" : won ? "None: the deal is won." : "None: no moves left.";
  drawVerdicts();
}

function drawHistory() {
  const list = $("history");
  const start = document.createElement("li");
  start.append(historyButton(0, "start"));
  list.replaceChildren(start, ...line.map((move, i) => {
    const item = document.createElement("li");
    item.append(historyButton(i + 1, move));
    return item;
  }));
}

function historyButton(index, text) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = text;
  button.dataset.at = String(index);
  if (index === at) button.setAttribute("aria-current", "step");
  if (index > at) button.className = "undone";
  return button;
}

function gridText(state) {
  const rows = [];
  for (let r = 0; r < state.rows; r++) {
    rows.push(state.cells.slice(r * state.cols, (r + 1) * state.cols).map((c) => c || "--").join(" "));
  }
  return rows.join("/");
}

// A grid as the player typed it (rows split by "/" or new lines, "--" or "." an empty cell); a mistake is said
// with its row and column.
function parseGrid(text) {
  if (!text.trim()) throw new Error("Enter a grid: its cards row by row, rows split by /, such as 5S 7D/4C AD.");
  const rows = text.trim().split(/\s*[/\n]\s*/).map((row) => row.split(/\s+/));
  rows.forEach((row, r) => {
    if (row.length !== rows[0].length) {
      throw new Error(`Row ${r + 1} has ${row.length} cells, but row 1 has ${rows[0].length}: every row needs the ` +
        "same number (-- for an empty cell).");
    }
    row.forEach((cell, c) => {
      if (cell !== "--" && cell !== "." && !CARD.test(cell)) {
        throw new Error(`Row ${r + 1}, column ${c + 1}: “${shorter(cell)}” is not a card. A card is a rank (A, 2–9, ` +
          "T, J, Q, K) then a suit (C, D, H, S), such as 5S or TD; -- is an empty cell.");
      }
    });
  });
  const cells = rows.flat().map((cell) => (cell === "--" || cell === "." ? "" : cell.toUpperCase()));
  if (cells.length > DECK) {
    throw new Error(`This grid has ${cells.length} cells, but a deck has ${DECK} cards: at most ${DECK} cells.`);
  }
  return { rows: rows.length, cols: rows[0].length, cells };
}

// The seed as the server takes it (a decimal string), or an error in the player's words.
function parseSeed(text) {
  const seed = text.trim().replace(/^[−–]/, "-"); // a typographic minus, as pasted from a page, is a minus
  if (!seed) throw new Error("Enter a seed: a whole number such as 367297990.");
  if (!/^[+-]?\d+$/.test(seed)) {
    throw new Error(`The seed “${shorter(seed)}” is not a whole number: use digits, and a minus sign for a ` +
      "negative seed (such as 367297990 or -1).");
  }
  const value = BigInt(seed);
  if (value < SEEDS[0] || value > SEEDS[1]) {
    throw new Error(`The seed ${shorter(String(value))} is outside the range ${SEEDS[0]}…${SEEDS[1]}: ` +
      "seeds are 32-bit signed numbers.");
  }
  return String(value);
}

// The grid size of the deal form: a preset, or the custom rows and columns.
function chosenSize() {
  if ($("size").value !== "custom") return SIZES[$("size").value];
  return checkSize(parseCount($("rows").value, "Rows"), parseCount($("cols").value, "Columns"));
}

function parseCount(text, name) {
  const count = text.trim();
  if (!/^\d+$/.test(count) || Number(count) < 1 || Number(count) > DECK) {
    throw new Error(`${name} must be a whole number from 1 to ${DECK}; “${shorter(count)}” is not one.`);
  }
  return Number(count);
}

function checkSize(rows, cols) {
  if (rows * cols > DECK) {
    throw new Error(`A ${rows}×${cols} grid has ${rows * cols} cells, but a deck has ${DECK} cards: rows × ` +
      `columns must be at most ${DECK}.`);
  }
  return [rows, cols];
}

function shorter(text) {
  return text.length > 24 ? `${text.slice(0, 24)}…` : text;
}

function followUrl() {
  const params = new URLSearchParams();
  if (origin.seed !== undefined) {
    params.set("seed", origin.seed);
    params.set("rows", String(origin.state.rows));
    params.set("cols", String(origin.state.cols));
  } else {
    params.set("grid", gridText(origin.state));
  }
  if (at) params.set("moves", line.slice(0, at).join(","));
  history.replaceState(null, "", `?${params}`);
}

// --- verdicts and hints ---

// Each legal move's verdict: {move, winnable: true|false|undefined, p}, from Game/Hint; known for the
// position once. Lookups of one position share one request. Lookups of one position share one request.
async function lookUp(signal) {
  const current = game();
  const known = factsOf(current.state);
  if (!known.judged) {
    known.judging ??= judge(current, signal).finally(() => { known.judging = undefined; });
    try {
      known.judged = await known.judging;
      known.failed = undefined;
    } catch (error) {
      if (signal.aborted) return undefined;
      known.failed = `not checked: ${error.message}`;
    }
  }
  if (!signal.aborted) verdictsChanged();
  return known.judged;
}

function verdictsOfHint(answer) {
  return (answer.moves || []).map((m) => ({
    move: m.move,
    winnable: m.verdict === "VERDICT_WINNABLE" ? true : m.verdict === "VERDICT_LOSES" ? false : undefined,
    p: m.pWinnable || 0,
  }));
}

// The position at `state` as Play would answer it ({state, legalMoves, won}), from one Hint, whose
// verdicts are kept.
async function hintedPosition(state, signal) {
  const answer = await call("Game/Hint", { state, maxNodesPerMove: "0" }, signal);
  factsOf(state).judged = verdictsOfHint(answer);
  const legalMoves = (answer.moves || []).map((m) => ({ move: m.move, result: m.result }));
  return { state, legalMoves, won: Boolean(answer.won) };
}

async function judge(current, signal) {
  if (current.legalMoves.length === 0) return [];
  return verdictsOfHint(await call("Game/Hint", { state: current.state, maxNodesPerMove: "0" }, signal));
}

// Verdicts with what Solve settled laid over them: never an estimate beside a contradicting exact answer.
function verdictsOf(current) {
  const known = factsOf(current.state);
  const solve = known.solve;
  return current.legalMoves.map((legal, i) => {
    const judged = known.judged?.[i];
    if (solve?.status === "UNSOLVABLE") return { move: legal.move, winnable: false };
    if (solve?.status === "SOLVABLE" && solve.moves[0] === legal.move) return { move: legal.move, winnable: true };
    if (solve?.status === "SOLVABLE" && judged?.winnable === undefined && factsOf(legal.result).solve) {
      return { move: legal.move, winnable: factsOf(legal.result).solve.status === "SOLVABLE" };
    }
    return judged;
  });
}

function verdictText(v) {
  if (!v) return "";
  if (v.winnable === true) return "keeps it winnable (exact)";
  if (v.winnable === false) return "loses the deal (exact)";
  return `P(winnable) ≈ ${v.p.toFixed(3)} (estimate)`;
}

function drawVerdicts() {
  const current = game();
  const on = $("show-verdicts").checked;
  const verdicts = verdictsOf(current);
  const known = factsOf(current.state);
  const checking = on && !known.judged && !verdicts.every(Boolean);
  $("moves").querySelectorAll("li").forEach((item, i) => {
    const span = item.querySelector(".verdict");
    if (!span) return;
    const v = verdicts[i];
    span.textContent = !on ? "" : checking && !v ? known.failed || "checking…" : verdictText(v);
    span.className = `verdict${on && v?.winnable === true ? " yes" : on && v?.winnable === false ? " no" : ""}`;
  });
}

function bestMove(verdicts) {
  const exact = verdicts.find((v) => v?.winnable === true);
  if (exact) return { ...exact, exact: true };
  const open = verdicts.filter((v) => v && v.winnable === undefined);
  if (!open.length) return null;
  return open.reduce((best, v) => (v.p > best.p ? v : best));
}

// The hint of what is known of the position now: {move, said, note} (move is null when every move loses).
function hintOf(current) {
  const best = bestMove(verdictsOf(current));
  if (!best) return { move: null, said: "Hint: every move loses the deal (exact).", note: "" };
  const said = best.exact || best.winnable
    ? `Hint: ${best.move} keeps it winnable (exact).`
    : `Hint: ${best.move}, P(winnable) ≈ ${best.p.toFixed(3)} (an estimate: no move is settled winnable).`;
  const [from, to] = best.move.split("-");
  const where = (card) => cellLabel(current.state, current.state.cells.indexOf(card)).split(": ")[1];
  return { move: best.move, said, note: `Hint: move ${where(from)}, onto ${where(to)}.` };
}

async function hint() {
  const current = game();
  const signal = looking.signal;
  $("hint-text").textContent = "Looking for a winning move…";
  if (!factsOf(current.state).solve) await lookUp(signal);
  if (signal.aborted) return;
  if (!factsOf(current.state).solve && !factsOf(current.state).judged) {
    $("hint-text").textContent = `No hint: ${factsOf(current.state).failed}`;
    return;
  }
  hinted = hintOf(current);
  say(hinted.said);
  drawHint();
}

// New verdicts of the position shown: a hint drawn from the old ones goes unless the new ones give the same.
function verdictsChanged() {
  drawVerdicts();
  if (hinted && hintOf(game()).said !== hinted.said) {
    hinted = null;
    drawHint();
  }
}

// --- the hint on the board: its cards marked (and named so), the arrow between them, its move in the list ---

function drawHint() {
  markCards();
  $("moves").querySelectorAll("li").forEach((item) => {
    const on = item.querySelector("button[data-move]")?.dataset.move === hinted?.move;
    item.querySelector("button[data-move]")?.classList.toggle("hinted", on);
    item.querySelector(".hint-tag").hidden = !on;
    if (on) reveal(item, $("moves"));
  });
  $("hint-text").textContent = hinted?.note || "";
  drawArrow();
}

function markCards() {
  const { state } = game();
  const [from, to] = hinted?.move ? hinted.move.split("-") : [];
  $("board").querySelectorAll(".card").forEach((card) => {
    const index = Number(card.dataset.index);
    const role = card.dataset.card === from ? "from" : card.dataset.card === to ? "to" : "";
    card.classList.toggle("hint-from", role === "from");
    card.classList.toggle("hint-to", role === "to");
    const said = role === "from" ? `; the hint: move it onto ${cardName(to)}`
      : role === "to" ? `; the hint: move ${cardName(from)} onto it` : "";
    card.setAttribute("aria-label", cellLabel(state, index) + said);
  });
}

// Scrolls `list` (and only it: the page stays where it is) until `item` is in its box.
function reveal(item, list) {
  const box = list.getBoundingClientRect(), shown = item.getBoundingClientRect();
  if (shown.top < box.top) list.scrollTop -= box.top - shown.top;
  else if (shown.bottom > box.bottom) list.scrollTop += shown.bottom - box.bottom;
}

// The arrow of the hinted move over the board, from the source card's centre into the target card; the cards
// share a row or a column. It hides nothing from pointers (pointer-events: none) nor from assistive technology,
// which hears the cards' names.
function drawArrow() {
  const svg = $("hint-arrow");
  const [from, to] = (hinted?.move || "-").split("-").map((card) => $("board").querySelector(`[data-card="${card}"]`));
  if (!from || !to) {
    svg.replaceChildren();
    return;
  }
  const area = $("board-area").getBoundingClientRect(), a = from.getBoundingClientRect(), b = to.getBoundingClientRect();
  // Along a row the arrow runs in the cards' top strip, along a column in their left strip: clear of the card's
  // text (centred) and of a stack's height (bottom right). It starts at the source's centre line and its head
  // ends a third of the way into the target.
  const across = a.top === b.top;
  const [atX, atY] = across ? [0.5, 0.16] : [0.11, 0.5]; // where in a card the arrow runs, as fractions
  const x1 = a.left - area.left + a.width * atX, y1 = a.top - area.top + a.height * atY;
  const x2 = b.left - area.left + b.width * atX, y2 = b.top - area.top + b.height * atY;
  const dx = Math.sign(x2 - x1), dy = Math.sign(y2 - y1);
  const tipX = x2 - dx * b.width * 0.17, tipY = y2 - dy * b.height * 0.17;
  const width = Math.max(2.5, Math.min(a.width, a.height) / 14);
  const line = `x1="${x1}" y1="${y1}" x2="${tipX}" y2="${tipY}"`;
  svg.setAttribute("viewBox", `0 0 ${area.width} ${area.height}`);
  svg.innerHTML = `<defs><marker id="arrow-head" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="4" ` +
    `markerHeight="4" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"></path></marker></defs>` +
    `<circle class="halo" cx="${x1}" cy="${y1}" r="${width * 1.6}"></circle>` +
    `<line class="halo" ${line} stroke-width="${width + 4}"></line>` +
    `<line class="shaft" ${line} stroke-width="${width}" marker-end="url(#arrow-head)"></line>` +
    `<circle class="dot" cx="${x1}" cy="${y1}" r="${width * 1.2}"></circle>`;
  svg.dataset.move = hinted.move;
}

// --- the user's actions ---

function play(move, focus = true) {
  return run("move", (signal) => doMove(move, signal, focus));
}

function goTo(index, message) {
  return run("goto", async (signal) => {
    await reach(index, signal);
    show(message);
  });
}

function choose(index) {
  const { state } = game();
  $("error").textContent = "";
  focusIndex = index;
  if (selected === null || selected === index) {
    selected = selected === index ? null : index;
    drawBoard(true);
    say(selected !== null ? `${cardName(state.cells[index])} chosen: now its target.` : "Choice cleared.");
    return;
  }
  const move = `${state.cells[selected]}-${state.cells[index]}`;
  play(move).then(() => {
    if (game().state === state) { selected = null; drawBoard(true); } // refused: the choice goes
  });
}

function solve() {
  return run("solve", async (signal) => {
    const current = game();
    say("Searching…");
    const answer = await call("Boaf/Solve", { state: current.state }, signal);
    const nodes = Number(answer.nodes || 0).toLocaleString("en");
    if (answer.status !== "UNKNOWN") factsOf(current.state).solve = { status: answer.status, moves: answer.moves || [] };
    verdictsChanged();
    drawActions();
    if (answer.status === "SOLVABLE") {
      say(`Winnable: ${answer.moves.length} moves (${nodes} nodes). Play the solution to watch it.`);
    } else if (answer.status === "UNSOLVABLE") {
      say(`Unsolvable: no sequence of moves wins (${nodes} nodes searched).`);
    } else {
      say(`Unknown: the search stopped (${answer.reason}) after ${nodes} nodes.`);
    }
  });
}

function playSolution() {
  if (action?.kind === "replay") { cancel(); return; }
  run("replay", async (signal) => {
    for (;;) {
      const known = factsOf(game().state).solve;
      if (!known?.moves?.length) break;
      await doMove(known.moves[0], signal, false);
      if (!game().won) await sleep(STEP_MS, signal);
    }
  });
}

// Deals `seed` (the text typed or linked) on a grid of `size` ([rows, cols], or a function that reads it).
async function dealSeed(text, size, moves = []) {
  await run("deal", async (signal) => {
    const seed = parseSeed(text);
    const [rows, cols] = typeof size === "function" ? size() : size;
    const state = await call("Game/Deal", { seed, rows, cols }, signal);
    await open({ seed, state }, moves, signal, `${dealTitle(seed, state)}.`);
  });
}

function loadGrid(text, moves = [], title = "Grid", message = "Grid loaded.") {
  return run("load", (signal) => open({ state: parseGrid(text), title }, moves, signal, message));
}

function generatePuzzle() {
  const cards = Number($("cards").value);
  return run("generate", async (signal) => {
    say(`Generating a ${cards}-card puzzle…`);
    const seed = String(Math.floor(Math.random() * 1e9));
    const puzzle = await call("Boaf/GeneratePuzzle", { cards, seed }, signal);
    $("show-verdicts").checked = false; // a puzzle's verdicts stay hidden until asked for
    const ratio = puzzle.halfwayRatio.toPrecision(3);
    await open({ state: puzzle.state, title: `Puzzle of ${cards} cards` }, [], signal,
      `A ${cards}-card puzzle; halfway ratio ${ratio}.`);
    chartLooking = new AbortController();
    const chartSignal = chartLooking.signal;
    call("Boaf/AnalyzePuzzle", { state: puzzle.state }, chartSignal)
      .then((analysis) => { if (!chartSignal.aborted) drawChart(analysis); })
      .catch((error) => { if (!chartSignal.aborted) fail(error); });
  });
}

function drawChart(analysis) {
  const depths = analysis.byDepth;
  $("puzzle").hidden = false;
  $("puzzle-summary").textContent = `${analysis.exact ? "Exact" : "Sampled"}: the solvable share of the states at each
    depth, on a log scale; the lower, the harder. Halfway ratio ${analysis.halfwayRatio.toPrecision(3)}.`;
  const width = 420, height = 180, left = 34, bottom = 20, floor = -6; // log10 ratio shown from 1e-6 to 1
  const bar = (width - left) / depths.length;
  const y = (ratio) => 8 + (height - bottom - 8) * (Math.max(Math.log10(ratio || 1e-9), floor) / floor);
  const axis = [0, -3, -6].map((e) => `<text x="${left - 4}" y="${y(10 ** e) + 4}" text-anchor="end">1e${e}</text>`);
  const bars = depths.map((d, i) => {
    const top = y(d.ratio), x = left + i * bar;
    return `<rect x="${x + 2}" y="${top}" width="${bar - 4}" height="${height - bottom - top}"></rect>` +
      `<text x="${x + bar / 2}" y="${height - 6}" text-anchor="middle">${d.depth}</text>`;
  });
  $("chart").innerHTML = axis.concat(bars).join("");
  $("depths").tBodies[0].innerHTML = depths.map((d) =>
    `<tr><td>${d.depth}</td><td>${d.states ?? "–"}</td><td>${d.solvable ?? "–"}</td><td>${d.ratio.toPrecision(3)}</td></tr>`,
  ).join("");
}

// Arrow keys walk the board along rows and columns (the ways a stack can move), skipping gaps.
function walk(event) {
  const steps = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
  const step = steps[event.key];
  const from = Number(event.target.dataset?.index);
  if (!step || !game() || Number.isNaN(from)) return;
  event.preventDefault();
  const { state } = game();
  let row = Math.floor(from / state.cols), col = from % state.cols;
  for (;;) {
    row += step[0];
    col += step[1];
    if (row < 0 || col < 0 || row >= state.rows || col >= state.cols) return;
    const index = row * state.cols + col;
    if (state.cells[index]) {
      focusIndex = index;
      $("board").querySelectorAll(".card").forEach((c) => { c.tabIndex = c.dataset.index === String(index) ? 0 : -1; });
      $("board").querySelector(`[data-index="${index}"]`).focus();
      return;
    }
  }
}

function guarded(work) {
  return (event) => {
    event?.preventDefault();
    work();
  };
}

// A link's position: ?seed=N[&rows=R&cols=C] or ?grid=…, and &moves=A-B,…; the forms show what it asked for
// even when it is refused.
function openFromUrl() {
  const params = new URLSearchParams(location.search);
  const moves = (params.get("moves") || "").split(",").filter(Boolean);
  if (params.has("grid")) {
    $("grid").value = params.get("grid");
    return loadGrid(params.get("grid"), moves);
  }
  const seed = params.get("seed") ?? "1", rows = params.get("rows") ?? "4", cols = params.get("cols") ?? "4";
  $("seed").value = seed;
  showSize(Number(rows), Number(cols));
  [$("rows").value, $("cols").value] = [rows, cols];
  const size = () => checkSize(parseCount(rows, "The link's rows"), parseCount(cols, "The link's columns"));
  return dealSeed(seed, size, moves);
}

document.addEventListener("DOMContentLoaded", () => {
  $("deal-form").addEventListener("submit", guarded(() => dealSeed($("seed").value, chosenSize)));
  $("size").addEventListener("change", () => {
    const custom = $("size").value === "custom";
    $("custom-size").hidden = !custom;
    if (!custom) [$("rows").value, $("cols").value] = SIZES[$("size").value].map(String);
  });
  $("random").addEventListener("click", guarded(() => dealSeed(String(Math.floor(Math.random() * 1000000)), chosenSize)));
  new ResizeObserver(drawArrow).observe($("board"));
  $("grid-form").addEventListener("submit", guarded(() => loadGrid($("grid").value)));
  $("puzzle-form").addEventListener("submit", guarded(generatePuzzle));
  $("solve").addEventListener("click", guarded(solve));
  $("play-solution").addEventListener("click", guarded(playSolution));
  $("undo").addEventListener("click", () => goTo(at - 1, "Move undone."));
  $("redo").addEventListener("click", () => goTo(at + 1, `Redid ${line[at]}.`));
  $("hint").addEventListener("click", guarded(hint));
  $("cancel").addEventListener("click", guarded(cancel));
  $("show-verdicts").addEventListener("change", () => {
    drawVerdicts();
    if ($("show-verdicts").checked && game()) lookUp(looking.signal);
  });
  $("board").addEventListener("click", (event) => {
    const card = event.target.closest(".card");
    if (card) choose(Number(card.dataset.index));
  });
  $("board").addEventListener("keydown", walk);
  $("moves").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-move]");
    if (button && event.detail <= 1) play(button.dataset.move); // a double click's second click is no second move
  });
  $("history").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-at]");
    if (button) goTo(Number(button.dataset.at), `Back to move ${button.dataset.at}.`);
  });
  $("token-form").addEventListener("submit", useToken);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && selected !== null) { selected = null; drawBoard(true); say("Choice cleared."); }
  });
  openFromUrl();
});
