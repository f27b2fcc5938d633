// The boaf playground: every rule and answer comes from the server's HTTP/JSON API
// (POST /boaf.v1.<Service>/<Method>, proto3 JSON); this file only draws and asks.
"use strict";

const TIMEOUT_MS = 300000; // sent as Connect-Timeout-Ms: the server stops searching when it passes
const MOVE_CHECK_NODES = 20000; // node budget of the exact check of each legal move
const STEP_MS = 500; // pause between the moves of a played solution
const RANKS = { A: "ace", T: "ten", J: "jack", Q: "queen", K: "king" };
const SUITS = { C: ["♣", "clubs"], D: ["♦", "diamonds"], H: ["♥", "hearts"], S: ["♠", "spades"] };
const TOKEN_KEY = "boaf-token"; // the bearer token, when the server asks for one (BOAF_API_TOKENS); this tab only

const $ = (id) => document.getElementById(id);
let game = null; // the last PlayResponse: {state, legalMoves, won}
let history = []; // states before each move, for undo
let selected = null; // cell index of the chosen source stack
let solution = null; // moves of the last Solve, from the current state
let tokenWaiters = []; // calls waiting for a token to be entered

// A call refused for want of a valid token waits until one is entered, then goes again.
async function call(method, body) {
  for (;;) {
    const headers = { "Content-Type": "application/json", "Connect-Timeout-Ms": String(TIMEOUT_MS) };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(`/boaf.v1.${method}`, { method: "POST", headers, body: JSON.stringify(body) });
    const answer = await response.json();
    if (response.status === 401 && answer.code === "unauthenticated") {
      await askForToken(token ? "That token was refused; enter another." : "This server needs an access token.");
      continue;
    }
    if (!response.ok) throw new Error(answer.message || `${response.status} ${response.statusText}`);
    return answer;
  }
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

function cardName(text) {
  const rank = RANKS[text[0]] || text[0];
  return `${rank} of ${SUITS[text[1]][1]}`;
}

function cellLabel(state, index) {
  const row = Math.floor(index / state.cols) + 1, col = (index % state.cols) + 1;
  const height = state.sizes.length ? state.sizes[index] : 1;
  const stack = height > 1 ? `, a stack of ${height} cards` : "";
  return `${cardName(state.cells[index])}${stack}, row ${row}, column ${col}`;
}

function say(text, won = false) {
  $("status").textContent = text;
  $("status").className = won ? "won" : "";
}

function fail(error) {
  $("error").textContent = error.message;
}

function drawBoard() {
  const { state } = game;
  const board = $("board");
  const focused = board.contains(document.activeElement) ? document.activeElement.dataset.index : undefined;
  board.style.gridTemplateColumns = `repeat(${state.cols}, auto)`;
  board.replaceChildren(
    ...state.cells.map((text, index) => {
      if (!text) {
        const empty = document.createElement("div");
        empty.className = "empty";
        empty.setAttribute("aria-hidden", "true");
        return empty;
      }
      const button = document.createElement("button");
      const height = state.sizes.length ? state.sizes[index] : 1;
      button.type = "button";
      button.className = `card${"DH".includes(text[1]) ? " red" : ""}`;
      button.dataset.card = text;
      button.dataset.index = String(index);
      button.setAttribute("aria-label", cellLabel(state, index));
      button.setAttribute("aria-pressed", String(selected === index));
      button.innerHTML = `${text[0]}${SUITS[text[1]][0]}` + (height > 1 ? `<span class="height">×${height}</span>` : "");
      button.addEventListener("click", () => choose(index));
      return button;
    }),
  );
  if (focused !== undefined) board.querySelector(`[data-index="${focused}"]`)?.focus(); // keyboard play keeps its place
  board.dataset.played = String(history.length);
  $("undo").disabled = history.length === 0;
  $("solve").disabled = game.won;
  $("play-solution").disabled = !solution || solution.length === 0;
}

function drawMoves() {
  const list = $("moves");
  list.replaceChildren(
    ...game.legalMoves.map((legal) => {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = legal.move;
      const [from, to] = legal.move.split("-");
      button.setAttribute("aria-label", `move ${cardName(from)} onto ${cardName(to)}`);
      button.addEventListener("click", () => play(legal.move));
      const verdict = document.createElement("span");
      verdict.className = "verdict";
      verdict.textContent = "checking…";
      item.append(button, verdict);
      return item;
    }),
  );
  if (game.legalMoves.length === 0 && !game.won) list.innerHTML = "<li>No legal move: the deal is lost.</li>";
  const verdicts = [...list.querySelectorAll(".verdict")];
  judgeMoves(verdicts).catch((error) => verdicts.forEach((v) => { v.textContent = `not checked: ${error.message}`; }));
}

// For each legal move: exact where a small search settles it, the classifier's probability otherwise.
async function judgeMoves(verdicts) {
  const moves = game.legalMoves;
  const results = await Promise.all(
    moves.map((legal) => call("Boaf/Solve", { state: legal.result, maxNodes: MOVE_CHECK_NODES }).catch(() => null)),
  );
  const open = moves.map((_, i) => i).filter((i) => !results[i] || results[i].status === "UNKNOWN");
  const guesses = open.length ? await call("Boaf/Classify", { states: open.map((i) => moves[i].result) }) : null;
  if (moves !== game.legalMoves) return; // the position changed meanwhile
  results.forEach((result, i) => {
    if (result && result.status !== "UNKNOWN") {
      const yes = result.status === "SOLVABLE";
      verdicts[i].textContent = yes ? "keeps it winnable (exact)" : "loses the deal (exact)";
      verdicts[i].classList.add(yes ? "yes" : "no");
    }
  });
  open.forEach((i, k) => {
    const p = guesses.predictions[k].pSolvable;
    verdicts[i].textContent = `P(winnable) ≈ ${p.toFixed(3)} (classifier estimate)`;
  });
}

function show(answer, message) {
  game = answer;
  selected = null;
  $("error").textContent = "";
  drawBoard();
  drawMoves();
  if (game.won) say("You won: one stack left.", true);
  else say(message || `${game.legalMoves.length} legal moves.`);
}

async function start(state, message) {
  const answer = await call("Game/Play", { state, moves: [] });
  history = [];
  solution = null;
  $("grid").value = gridText(answer.state);
  show(answer, message);
}

async function play(move) {
  try {
    const answer = await call("Game/Play", { state: game.state, moves: [move] });
    history.push(game.state);
    solution = solution && solution[0] === move ? solution.slice(1) : null;
    show(answer, `Played ${move}.`);
  } catch (error) {
    selected = null;
    drawBoard();
    fail(error);
  }
}

function choose(index) {
  $("error").textContent = "";
  if (selected === null || selected === index) {
    selected = selected === index ? null : index;
    drawBoard();
    if (selected !== null) say(`${cardName(game.state.cells[index])} chosen: now its target.`);
    return;
  }
  play(`${game.state.cells[selected]}-${game.state.cells[index]}`);
}

function gridText(state) {
  const rows = [];
  for (let r = 0; r < state.rows; r++) {
    rows.push(state.cells.slice(r * state.cols, (r + 1) * state.cols).map((c) => c || "--").join(" "));
  }
  return rows.join("/");
}

function parseGrid(text) {
  const rows = text.trim().split(/\s*[/\n]\s*/).map((row) => row.split(/\s+/));
  const cells = rows.flat().map((cell) => (cell === "--" || cell === "." ? "" : cell));
  return { rows: rows.length, cols: rows[0].length, cells };
}

async function solve() {
  say("Searching…");
  const answer = await call("Boaf/Solve", { state: game.state });
  const nodes = Number(answer.nodes).toLocaleString("en");
  if (answer.status === "SOLVABLE") {
    solution = answer.moves;
    say(`Winnable: ${solution.length} moves (${nodes} nodes). Play the solution to watch it.`);
  } else if (answer.status === "UNSOLVABLE") {
    solution = null;
    say(`Unsolvable: no sequence of moves wins (${nodes} nodes searched).`);
  } else {
    say(`Unknown: the search stopped (${answer.reason}) after ${nodes} nodes.`);
  }
  drawBoard();
}

async function playSolution() {
  for (const move of [...solution]) {
    await play(move);
    await new Promise((resolve) => setTimeout(resolve, STEP_MS));
  }
}

function undo() {
  const previous = history.pop();
  const before = history;
  start(previous, "Move undone.").then(() => { history = before; drawBoard(); }, fail);
}

async function generatePuzzle() {
  const cards = Number($("cards").value);
  say(`Generating a ${cards}-card puzzle…`);
  const puzzle = await call("Boaf/GeneratePuzzle", { cards, seed: String(Math.floor(Math.random() * 1e9)) });
  await start(puzzle.state, `A ${cards}-card puzzle; halfway ratio ${puzzle.halfwayRatio.toPrecision(3)}.`);
  const analysis = await call("Boaf/AnalyzePuzzle", { state: puzzle.state });
  drawChart(analysis);
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

function guarded(action) {
  return (event) => {
    if (event) event.preventDefault();
    $("error").textContent = "";
    action().catch(fail);
  };
}

document.addEventListener("DOMContentLoaded", () => {
  const dealSeed = async (seed) => start(await call("Game/Deal", { seed }), `Deal ${seed}.`);
  $("deal-form").addEventListener("submit", guarded(() => dealSeed($("seed").value.trim())));
  $("random").addEventListener("click", guarded(() => {
    $("seed").value = String(Math.floor(Math.random() * 1000000));
    return dealSeed($("seed").value);
  }));
  $("grid-form").addEventListener("submit", guarded(() => start(parseGrid($("grid").value), "Grid loaded.")));
  $("puzzle-form").addEventListener("submit", guarded(generatePuzzle));
  $("solve").addEventListener("click", guarded(solve));
  $("play-solution").addEventListener("click", guarded(playSolution));
  $("undo").addEventListener("click", () => undo());
  $("token-form").addEventListener("submit", useToken);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && selected !== null) { selected = null; drawBoard(); say("Choice cleared."); }
  });
  dealSeed("1").catch(fail);
});
