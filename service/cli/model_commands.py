"""Commands of the learned half: classify, dataset generation, training, cutoff tuning, retraining."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from boaf.game import InvalidState, parse_state
from boaf.service.cli.app import app
from boaf.service.cli.input import read_state_file
from boaf.service.cli.options import Scheduler, Workers
from boaf.service.cli.usage import BoafTyper

ModelDir = Annotated[
    Path | None,
    typer.Option("--model", help="Model version directory or model root (default: the committed model)."),
]

dataset_app = BoafTyper(no_args_is_help=True, help="Labelled datasets (random, decisions, deals).")
app.add_typer(dataset_app, name="dataset")


@app.command("classify")
def classify_command(
    grid: Annotated[str | None, typer.Argument(help="Grid text or JSON.")] = None,
    *,
    input_file: Annotated[Path | None, typer.Option("--input", help="File of grid text or JSON lines.")] = None,
    output: Annotated[Path | None, typer.Option("--output", help="Write JSON lines here (default stdout).")] = None,
    model: ModelDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for a single GRID.")] = False,
) -> None:
    """P(solvable), for one state or a file of many (one JSON object per line).

    Exact (p 1 or 0, "exact": true) where a search within the model's node budget settles the state;
    otherwise the ONNX classifier's estimate. "nodes" is what that search expanded.
    """
    # Imported here for start-up time: only this command pays for onnxruntime, LightGBM and matplotlib.
    from boaf.models.classifier import load_classifier

    if (grid is None) == (input_file is None):
        raise InvalidState("give exactly one of GRID or --input FILE")
    classifier = load_classifier(model)
    states = [parse_state(grid)] if grid is not None else [s for _, s in read_state_file(input_file)]  # type: ignore[arg-type]
    answers = classifier.classify(states)
    rows = [
        {
            "p_solvable": p,
            "solvable": p >= classifier.threshold,
            "exact": exact,
            "nodes": nodes,
            "model_version": classifier.version,
        }
        for p, exact, nodes in zip(
            answers.p_solvable.tolist(), answers.exact.tolist(), answers.nodes.tolist(), strict=True
        )
    ]
    if grid is not None and not as_json:
        row = rows[0]
        verdict = "solvable" if row["solvable"] else "unsolvable"
        how = f"exact, {row['nodes']:,} nodes" if row["exact"] else f"estimate, P(solvable) = {row['p_solvable']:.4f}"
        typer.echo(f"{verdict} ({how}, model {row['model_version']})")
        return
    _write_lines(rows, output)


@dataset_app.command("generate")
def dataset_generate_command(
    *,
    generator: Annotated[str, typer.Option("--generator", help="random, decisions or deals.")],
    count: Annotated[int, typer.Option("--count", min=1, help="States (random) or deals (decisions, deals).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for data.parquet and manifest.json.")],
    seed: Annotated[int | None, typer.Option("--seed", help="Seed (default 0; decisions start at deal 1100).")] = None,
    rows: Annotated[int, typer.Option("--rows", min=1)] = 4,
    cols: Annotated[int, typer.Option("--cols", min=1)] = 4,
    workers: Workers = None,
    scheduler: Scheduler = None,
) -> None:
    """Generate a labelled dataset on Dask (resumable) and print its manifest."""
    # Imported here for start-up time: only this command pays for Dask, onnxruntime, LightGBM and matplotlib.
    from boaf.jobs.dataset import generate_dataset
    from boaf.jobs.runner import Cluster
    from boaf.models.datasets import DECISIONS_FIRST_SEED, DatasetSpec

    if seed is None:
        seed = DECISIONS_FIRST_SEED if generator == "decisions" else 0
    spec = DatasetSpec(generator, seed, count, rows, cols)
    manifest = generate_dataset(spec, out, Cluster(workers, scheduler))
    typer.echo(json.dumps(manifest, indent=2))


@app.command("train")
def train_command(
    data: Annotated[list[Path], typer.Option("--data", help="Dataset directory (repeat to combine).")],
    out: Annotated[Path, typer.Option("--out", help="Model version directory to write.")],
    paper: Annotated[bool, typer.Option("--paper", help="Use the paper's configuration instead of tuning.")] = False,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Train, evaluate on a held-out 10%, export ONNX with a parity check, and write a model card."""
    # Imported here for start-up time: only this command pays for onnxruntime, LightGBM and matplotlib.
    from boaf.models.retrain_steps import train_classifier

    card = train_classifier(data, out, tuned=not paper, seed=seed, log=lambda line: typer.echo(line, err=True))
    typer.echo(json.dumps({"model": str(out), "evaluation": card["evaluation"], "parity": card["parity"]}, indent=2))


@app.command("tune-cutoff")
def tune_cutoff_command(
    model: Annotated[Path, typer.Option("--model", help="Model version directory to write ordering.json into.")],
    states: Annotated[int, typer.Option("--states", min=100, help="Random states to fit on.")] = 20_000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Fit the subset-H ordering model and sweep the ordering cutoff 2…16; write ordering.json and the plot."""
    # Imported here for start-up time: only this command pays for onnxruntime, LightGBM and matplotlib.
    from boaf.models.retrain_steps import labelled_random_states, tune_cutoff

    fit_rows = labelled_random_states(states, seed)
    result = tune_cutoff(
        model, fit_rows, sweep_states=min(states, 2000), seed=seed, log=lambda t: typer.echo(t, err=True)
    )
    typer.echo(json.dumps(result, indent=2))


def _grid_names(text: str) -> str:
    """``--grids``, checked: each name a grid with latency targets (``boaf.models.budget.TARGETS``)."""
    # Imported here for start-up time: models.budget brings matplotlib, which only this command needs.
    from boaf.models.budget import TARGETS

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in TARGETS]
    if not names or unknown:
        raise typer.BadParameter(f"{', '.join(unknown) or 'none'}: not a grid with targets ({', '.join(TARGETS)})")
    return ",".join(dict.fromkeys(names))


@app.command("tune-budget")
def tune_budget_command(
    *,
    model: Annotated[Path, typer.Option("--model", help="Model version directory to write exact_path.json into.")],
    grids: Annotated[
        str,
        typer.Option(
            "--grids",
            help="Grids to set a budget for, each measured on its own held-out states (4x4, 5x5, 6x6, 4x13).",
            callback=_grid_names,
        ),
    ] = "4x4,4x13",
    random_count: Annotated[int, typer.Option("--random-states", min=100, help="Held-out random 4x4 states.")] = 5000,
    decision_deals: Annotated[int, typer.Option("--decision-deals", min=1, help="Deals of held-out decisions.")] = 40,
    grid_states: Annotated[
        int, typer.Option("--grid-states", min=100, help="Held-out random states of each grid but 4x4.")
    ] = 1000,
    singles: Annotated[
        int | None,
        typer.Option("--singles", min=100, help="States per set timed one by one, drawn from all of it (default: all)"),
    ] = None,
    budgets: Annotated[str | None, typer.Option("--budgets", help="Candidates, e.g. 500,1000,2000.")] = None,
    deal_nodes: Annotated[
        int | None,
        typer.Option(
            "--deal-nodes",
            min=0,
            help="Second search of a 4x4 deal left open that looks like an FFUD (0: none; default: the model's).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Choose Classify's exact-path node budget of each grid by measuring it against that grid's latency targets.

    The 4x4 budget is the one every grid without its own gets; the budgets and each grid's latency figures
    are saved with the model (exact_path.json, model_card.json) and printed.
    """
    # Imported here for start-up time: only this command pays for onnxruntime, LightGBM and matplotlib.
    from boaf.models.budget import CANDIDATES, grid_tuning_sets, tune_budget

    candidates = [int(b) for b in budgets.split(",")] if budgets else list(CANDIDATES)
    sets = grid_tuning_sets(grids.split(","), random_count, decision_deals, grid_states, seed=seed)
    entry = tune_budget(
        model, sets, candidates, singles, log=lambda line: typer.echo(line, err=True), deal_nodes=deal_nodes
    )
    measured = set(grids.split(","))
    report = {g: {k: v for k, v in r.items() if k != "sweep"} for g, r in entry["grids"].items() if g in measured}
    budget = {k: entry[k] for k in ("max_nodes", "by_grid", "deal_nodes", "algorithm")}
    typer.echo(json.dumps({**budget, "grids": report}, indent=2))


@app.command("train-hard")
def train_hard_command(
    *,
    out: Annotated[Path, typer.Option("--out", help="Model root: versions and CURRENT go here.")] = Path("boaf-models"),
    model: ModelDir = None,
    per_stack: Annotated[int, typer.Option("--per-stack", min=10, help="Random states per stack count 9-16.")] = 4000,
    decision_deals: Annotated[int, typer.Option("--decision-deals", min=1, help="Deals of decision states.")] = 800,
    deals: Annotated[int, typer.Option("--deals", min=1, help="Deals searched for open ones (and FFUDs).")] = 50_000,
    ffud_like: Annotated[
        int, typer.Option("--ffud-like", min=0, help="Random 16-card deals sieved for FFUD-like hard states.")
    ] = 1_000_000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Train the learned model on the hard remainder (states the exact path leaves open); install it if no worse.

    Every FFUD of deals -1,000,000..-1 and past the --deals range up to 999,999 joins as a hard negative.
    """
    # Imported here for start-up time: only this command pays for onnxruntime, LightGBM and matplotlib.
    from boaf.models.hard import retrain_hard

    installed = retrain_hard(
        out,
        model,
        per_stack=per_stack,
        decision_deals=decision_deals,
        deals=deals,
        seed=seed,
        log=_log,
        ffud_like=ffud_like,
    )
    typer.echo(str(installed))


@app.command("train-residue")
def train_residue_command(
    out: Annotated[Path, typer.Option("--out", help="Model root: versions and CURRENT go here.")] = Path("boaf-models"),
    model: ModelDir = None,
    cache: Annotated[
        Path | None, typer.Option("--cache", help="Residue sets are kept and reused here (default: OUT/residue-sets).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Train the learned model on residue sets (states the exact path leaves open); install it if the gate passes.

    The gate: on held-out residue sets of every distribution, the new version's whole-set log loss is no
    worse than the installed one's, and on its residue it beats the base-rate constant.
    """
    # Imported here for start-up time: only this command pays for onnxruntime, LightGBM and matplotlib.
    from boaf.models.residue_model import retrain_residue

    installed = retrain_residue(out, cache or out / "residue-sets", model, seed=seed, log=_log)
    typer.echo(str(installed))


@app.command("retrain")
def retrain_command(
    *,
    rows: Annotated[int, typer.Option("--rows", min=100, help="Random states to generate and train on.")] = 500_000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Model root: versions and CURRENT go here.")] = Path("boaf-models"),
    decision_deals: Annotated[int, typer.Option("--decision-deals", min=1, help="Deals for the decisions set.")] = 2000,
    folds: Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds.")] = 10,
    residue: Annotated[
        bool, typer.Option("--residue/--no-residue", help="Then train on residue sets (boaf train-residue).")
    ] = True,
    workers: Workers = None,
    scheduler: Scheduler = None,
) -> None:
    """Regenerate data, train, evaluate, export, sweep the cutoff, and install a new model version.

    With --residue (the default) the installed version then gets its exact-path budget by measurement, and a
    model trained on residue sets (boaf train-residue) replaces it when it passes the residue gate.
    """
    # Imported here for start-up time: only this command pays for Dask, onnxruntime, LightGBM and matplotlib.
    from boaf.jobs.retrain import RetrainConfig, retrain
    from boaf.jobs.runner import Cluster
    from boaf.models.budget import tune_budget, tuning_sets
    from boaf.models.errors import ModelError
    from boaf.models.residue_model import retrain_residue

    config = RetrainConfig(
        out=out,
        rows=rows,
        decision_deals=decision_deals,
        seed=seed,
        cv_folds=folds,
        cluster=Cluster(workers, scheduler),
    )
    installed = retrain(config, log=_log)
    if residue:
        tune_budget(installed, tuning_sets(5000, 40, seed), log=_log)
        try:
            installed = retrain_residue(out, out / "residue-sets", installed, seed=seed, log=_log)
        except ModelError as exc:
            _log(f"kept {installed.name}: {exc}")
    typer.echo(str(installed))


def _log(line: str) -> None:
    typer.echo(line, err=True)


def _write_lines(rows: list[dict[str, Any]], output: Path | None) -> None:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
