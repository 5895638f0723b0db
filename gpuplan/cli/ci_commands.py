"""Commands for CI, Terraform and deployment: ``render``, ``check``, ``diff``, ``graph``, ``tf-external`` and
``deploy``.

They parse flags and call the library (:mod:`gpuplan.planning.saved`, :mod:`gpuplan.ci.check`,
:mod:`gpuplan.ci.diff`); output goes through :func:`gpuplan.cli.common.emit`, so every file is rendered
first and then written atomically, never over an input. Registered on the app by the import at the
end of :mod:`gpuplan.cli.commands`; heavy modules are imported inside the commands.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from gpuplan.cli.common import (
    EXIT_GATE,
    AllowOutsideOpt,
    CatalogOpt,
    ExitZeroOpt,
    NoColorOpt,
    OutOpt,
    OutputsOpt,
    QuietOpt,
    VerboseOpt,
    app,
    catalog_inputs,
    check_formats,
    emit,
    load_catalog_cli,
    note,
    note_table_only,
    phases_of,
)
from gpuplan.cli.run import read_profile

if TYPE_CHECKING:
    from gpuplan.hardware.loader import Catalog
    from gpuplan.core.contract import Plan

#: Keys of the query object ``gpuplan tf-external`` reads on stdin.
TF_QUERY_KEYS = ("profile", "phase", "catalog")


def _plan_profile(path: Path, catalog: "Catalog", phases: tuple[str, ...], *, quiet: bool,
                  color: bool = True, inputs: list[str] | None = None, allow_outside_paths: bool = False,
                  workloads: list[Any] | None = None, require: bool = False, command: str) -> "Plan":
    """Plan a profile; the files it reads (the profile's ``hf_config``) are added to ``inputs``, its
    workload to ``workloads``. ``require``: a phase the profile has no table for is an input error
    (as ``recommend --phase``), not a plan with nothing in it. A JSON document is refused naming
    ``command`` (read as TOML it was 'line 1, column 1: TOML syntax error')."""
    from gpuplan.core.errors import InputError
    from gpuplan.planning.compose import plan_workload
    from gpuplan.model.profile import load_profile_text
    from gpuplan.render import progress

    workload = load_profile_text(read_profile(path, command), str(path), catalog,
                                 allow_outside_paths=allow_outside_paths)
    if inputs is not None:
        inputs.extend(workload.input_files)
    if workloads is not None:
        workloads.append(workload)
    if require and (missing := [p for p in phases if getattr(workload, p) is None]):
        raise InputError(f"the profile has no [{missing[0]}] table to plan", file=str(path), field="phase")
    with progress(f"planning {path}", quiet=quiet, color=color):
        return plan_workload(workload, catalog, phases=phases)


def _saved_or_planned(source: Path, catalog: Optional[list[Path]], phases: tuple[str, ...], out: Optional[Path], *,
                      quiet: bool, command: str, allow_outside_paths: bool = False,
                      workloads: list[Any] | None = None) -> tuple["Plan", list[str]]:
    """The plan a single-source command reads (a saved plan JSON, or a profile planned for
    ``phases``) and the files it read (``inputs``, which ``out`` must not overwrite)."""
    from gpuplan.core.io import check_output
    from gpuplan.planning.saved import is_plan_file, load_plan

    inputs = [str(source), *catalog_inputs(catalog)]
    if out is not None:
        check_output(out, inputs)
    if is_plan_file(source):
        return load_plan(source), inputs
    return _plan_profile(source, load_catalog_cli(catalog), phases, quiet=quiet, inputs=inputs,
                         allow_outside_paths=allow_outside_paths, workloads=workloads, command=command), inputs


def _write_text(text: str, out: Optional[Path], inputs: list[str]) -> None:
    """``text`` to stdout, or to ``out`` (never over one of ``inputs``)."""
    from gpuplan.core.io import write_output, write_stdout

    if out is None:
        write_stdout(text)
    else:
        write_output(out, text, protect=inputs)


@app.command(
    "render",
    help="\b\nExample:  gpuplan render plan.json --format markdown -o plan.md\n\n"
         "Re-render a saved plan JSON (from 'recommend --format json') in any format, without re-planning. "
         "Plans outside the supported schema_version window are refused.\n\n"
         "Formats: table, json, markdown, tfvars, tf-external, sarif, junit, github, html.",
    short_help="Re-render a saved plan JSON in any format, without re-planning.",
)
def render_command(
    plan_file: Path = typer.Argument(..., metavar="PLAN.json", help="A plan written by --format json."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, markdown, tfvars, tf-external, sarif, "
                                                             "junit, github, html."),
    out: Optional[Path] = OutOpt,
    outputs: list[str] = OutputsOpt,
    quiet: bool = QuietOpt,
    verbose: int = VerboseOpt,
    no_color: bool = NoColorOpt,
    allow_outside_paths: bool = AllowOutsideOpt,
) -> None:
    from gpuplan.planning.saved import load_plan, saved_profile_lines
    from gpuplan.render import FORMATS

    check_formats(fmt, outputs, tuple(FORMATS))
    plan = load_plan(plan_file)
    lines = saved_profile_lines(plan, str(plan_file), allow_outside=allow_outside_paths)
    emit(plan, fmt, out, outputs, inputs=[str(plan_file)], color=not no_color, verbose=verbose, field_lines=lines)
    note_table_only(fmt, outputs, verbose, [], quiet=quiet)


@app.command(
    "check",
    help="\b\nExample:  gpuplan check examples/llama-70b-train-serve.toml --against examples/clusters/h100-training.toml "
         "--format github\n\n"
         "Check a proposed cluster (TOML or JSON: phase, gpu, gpus or nodes, fabric, nic_gbit_per_gpu, "
         "oversubscription, budget_usd, power_limit_kw) against the workload: fits in memory, meets the deadline "
         "or the latency targets, enough GPUs and network, within budget and power (docs/ci.md).\n\n"
         "Exit codes: 0 every gate passed, 1 a gate failed (see --fail-on, --exit-zero), 2 bad input, "
         "3 internal error.",
    short_help="Check a proposed cluster against the workload's targets (CI gate).",
)
def check_command(
    profile: Path = typer.Argument(..., help="Workload profile (TOML)."),
    against: Path = typer.Option(..., "--against", help="Proposed cluster (TOML or JSON)."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, markdown, sarif, junit, github."),
    out: Optional[Path] = OutOpt,
    outputs: list[str] = OutputsOpt,
    fail_on: str = typer.Option("error", "--fail-on", help="error or warning: failed gates of this severity or "
                                                           "worse exit 1."),
    exit_zero: bool = ExitZeroOpt,
    catalog: Optional[list[Path]] = CatalogOpt,
    quiet: bool = QuietOpt,
    verbose: int = VerboseOpt,
    no_color: bool = NoColorOpt,
    allow_outside_paths: bool = AllowOutsideOpt,
) -> None:
    from gpuplan.ci.check import failed, run_check
    from gpuplan.core.errors import InputError
    from gpuplan.core.io import read_text
    from gpuplan.model.profile import load_profile_text
    from gpuplan.render import CHECK_FORMATS, progress

    if fail_on not in ("error", "warning"):
        raise InputError(f"expected error or warning, got {fail_on!r}", field="--fail-on")
    check_formats(fmt, outputs, CHECK_FORMATS)
    cat = load_catalog_cli(catalog)
    workload = load_profile_text(read_profile(profile, "check"), str(profile), cat, allow_outside_paths=allow_outside_paths)
    cluster_text = read_text(against)
    with progress(f"planning {profile} on {against}", quiet=quiet, color=not no_color):
        result = run_check(workload, cat, cluster_text, str(against), fail_on=fail_on)  # type: ignore[arg-type]
    inputs = [str(profile), str(against), *workload.input_files, *catalog_inputs(catalog)]
    emit(result, fmt, out, outputs, inputs=inputs, color=not no_color, verbose=verbose)
    for g in result.gates:
        if not g.passed:
            note(f"{g.phase} {g.name} {'failed' if g.severity == 'error' else 'warning'}: {g.message}", quiet=quiet)
    if failed(result, fail_on) and not exit_zero:
        raise typer.Exit(EXIT_GATE)


@app.command(
    "diff",
    help="\b\nExample:  gpuplan diff examples/default.toml examples/llama-70b-train-serve.toml --format markdown -o comment.md\n\n"
         "Compare two plans (profiles are planned, plan JSONs are read) and show the SKU, count, cost, power and "
         "BOM changes. --format markdown is a pull-request comment: under 65,000 characters, details folded, "
         "and a hidden '<!-- gpuplan-diff -->' marker line to find it again.\n\n"
         "Exit codes: 0 done, 1 the new plan has an error finding or capex grew more than "
         "--max-capex-increase-pct, 2 bad input, 3 internal error.",
    short_help="Show what changed between two plans or profiles (PR comment).",
)
def diff_command(
    base: Path = typer.Argument(..., help="Base: a profile (TOML) or a plan (JSON)."),
    new: Path = typer.Argument(..., help="New: a profile (TOML) or a plan (JSON)."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, markdown."),
    out: Optional[Path] = OutOpt,
    outputs: list[str] = OutputsOpt,
    phase: str = typer.Option("both", "--phase", help="training, serving or both: the phases compared (a profile "
                                                     "is planned for these only)."),
    max_capex_increase_pct: Optional[float] = typer.Option(
        None, "--max-capex-increase-pct", min=0, help="Exit 1 when total capex grows by more than this percentage."),
    exit_zero: bool = ExitZeroOpt,
    catalog: Optional[list[Path]] = CatalogOpt,
    quiet: bool = QuietOpt,
    no_color: bool = NoColorOpt,
    allow_outside_paths: bool = AllowOutsideOpt,
) -> None:
    from gpuplan.ci.diff import diff_plans
    from gpuplan.planning.saved import is_plan_file, load_plan
    from gpuplan.render import DIFF_FORMATS

    check_formats(fmt, outputs, DIFF_FORMATS)
    phases = phases_of(phase)
    cat: Catalog | None = None
    plans = []
    inputs = [str(base), str(new), *catalog_inputs(catalog)]
    for path in (base, new):
        if is_plan_file(path):
            plans.append(load_plan(path))
        else:
            cat = cat or load_catalog_cli(catalog)
            plans.append(_plan_profile(path, cat, phases, quiet=quiet, color=not no_color, inputs=inputs,
                                       allow_outside_paths=allow_outside_paths, command="diff"))
    result = diff_plans(plans[0], plans[1], base_name=str(base), new_name=str(new), phases=phases)
    emit(result, fmt, out, outputs, inputs=inputs, color=not no_color, verbose=0)
    gate = result.new_errors > 0
    if result.new_errors:
        note(f"the new plan has {result.new_errors} error finding(s)", quiet=quiet)
    if max_capex_increase_pct is not None:
        ratio = result.capex_delta_ratio
        if ratio is None and result.capex_base_usd is None and result.capex_new_usd is None:
            note("capex is unknown in both plans (unpriced or infeasible): --max-capex-increase-pct has nothing "
                 "to compare", quiet=quiet)
        elif ratio is None and result.capex_delta_usd != 0:
            note("capex is not comparable (unpriced or zero base); --max-capex-increase-pct fails closed", quiet=quiet)
            gate = True
        elif ratio is not None and ratio * 100 > max_capex_increase_pct:
            note(f"capex grew {ratio * 100:.1f}%, more than --max-capex-increase-pct {max_capex_increase_pct:g}",
                 quiet=quiet)
            gate = True
    if gate and not exit_zero:
        raise typer.Exit(EXIT_GATE)


@app.command(
    "graph",
    help="\b\nExample:  gpuplan graph plan.json --phase training --format graphml -o fabric.graphml\n\n"
         "Export one phase's network topology as a graph: GraphML (yEd, Gephi, Cytoscape) or networkx "
         "node-link JSON. One vertex per server and switch; parallel links are one edge with 'multiplicity' "
         "and 'capacity_gbit' (docs/fabric-model.md). Reads a saved plan JSON, or plans a profile.",
    short_help="Export a phase's network topology as GraphML or node-link JSON.",
)
def graph_command(
    source: Path = typer.Argument(..., metavar="PLAN_OR_PROFILE", help="A plan (JSON) or a profile (TOML)."),
    phase: str = typer.Option(..., "--phase", help="training or serving."),
    fmt: str = typer.Option("graphml", "--format", "-f", help="graphml or node-link."),
    out: Optional[Path] = OutOpt,
    catalog: Optional[list[Path]] = CatalogOpt,
    quiet: bool = QuietOpt,
    allow_outside_paths: bool = AllowOutsideOpt,
) -> None:
    import json

    from gpuplan.core.errors import InputError
    from gpuplan.fabric.graph import graphml_text, node_link

    check_formats(fmt, [], ("graphml", "node-link"))
    if phase not in ("training", "serving"):
        raise InputError(f"expected training or serving, got {phase!r}", field="--phase")
    plan, inputs = _saved_or_planned(source, catalog, (phase,), out, quiet=quiet, command="graph",
                                     allow_outside_paths=allow_outside_paths)
    planned = getattr(plan, phase)
    topology = planned.topology if planned is not None else None
    if topology is None or topology.clos is None:
        raise InputError(f"the plan has no {phase} network topology to export", file=str(source), field=phase)
    from gpuplan.render.safe import json_text

    text = graphml_text(topology) if fmt == "graphml" else json_text(json.dumps(node_link(topology), sort_keys=True) + "\n")
    _write_text(text, out, inputs)


@app.command(
    "tf-external",
    help='\b\nExample:  echo \'{"profile": "examples/chat-8b-serving.toml", "phase": "serving"}\' | gpuplan tf-external\n\n'
         "The program of a Terraform 'external' data source: reads the query JSON object on stdin (string keys "
         "profile, phase = training|serving|both, catalog = overlay directories separated by the path "
         "separator, ':' on Linux and macOS), plans, and writes one flat JSON object of strings on stdout "
         "(docs/terraform.md). "
         "On error: one line on stderr and a non-zero exit. Writes no files.",
    short_help="Terraform external data source program: query on stdin, flat strings on stdout.",
)
def tf_external_command() -> None:
    from gpuplan.core.errors import InputError, did_you_mean
    from gpuplan.core.io import MAX_INPUT_BYTES, parse_json
    from gpuplan.render import render

    if sys.stdin is None or sys.stdin.isatty():
        raise InputError("expects the query JSON object on stdin (it is run by Terraform's external data source)")
    text = sys.stdin.read(MAX_INPUT_BYTES + 1)
    if len(text) > MAX_INPUT_BYTES:
        raise InputError(f"query is larger than the {MAX_INPUT_BYTES}-byte limit", file="<stdin>")
    query = parse_json(text, "<stdin>") if text.strip() else None
    if not isinstance(query, dict):
        raise InputError("expected a JSON object with the key profile", file="<stdin>")
    for key, value in query.items():
        if key not in TF_QUERY_KEYS:
            raise InputError(f"unknown query key{did_you_mean(key, TF_QUERY_KEYS)}; expected "
                             f"{', '.join(TF_QUERY_KEYS)}", file="<stdin>", field=key)
        if not isinstance(value, str):
            raise InputError("expected a string (Terraform's external query values are strings)", file="<stdin>",
                             field=key)
    if not query.get("profile"):
        raise InputError("required key is missing", file="<stdin>", field="profile")
    phase = query.get("phase") or "both"  # "" is the default, as an absent key (a Terraform variable left empty)
    phases = phases_of(phase, file="<stdin>", field="phase")
    overlays = [Path(p) for p in (query.get("catalog") or "").split(os.pathsep) if p]
    cat = load_catalog_cli(overlays)
    plan = _plan_profile(Path(query["profile"]), cat, phases, quiet=True, require=phase != "both",
                         command="tf-external")
    sys.stdout.write(render(plan, "tf-external"))


@app.command(
    "deploy",
    help="\b\nExample:  gpuplan deploy examples/chat-8b-serving.toml --engine vllm  |  "
         "gpuplan deploy examples/chat-8b-serving.toml --engine sglang --k8s --format yaml\n\n"
         "Write the launch command of the plan's serving layout for an engine (vllm, sglang, trtllm), with the "
         "flag names of the engine release named in docs/deploy.md: tensor, pipeline and expert parallel sizes, "
         "maximum sequences, maximum model length, KV-cache dtype and memory fraction, quantization, "
         "chunked-prefill size. --k8s writes a Deployment and a HorizontalPodAutoscaler instead. Reads a saved "
         "plan JSON, or plans a profile. Notes on what the plan cannot say go to stderr.",
    short_help="Engine launch command or Kubernetes objects of the serving plan.",
)
def deploy_command(
    source: Path = typer.Argument(..., metavar="PLAN_OR_PROFILE", help="A plan (JSON) or a profile (TOML)."),
    engine: Optional[str] = typer.Option(None, "--engine", help="vllm, sglang or trtllm; default: the profile's "
                                                                 "[serving] engine, else vllm."),
    k8s: bool = typer.Option(False, "--k8s", help="A Kubernetes Deployment and HorizontalPodAutoscaler."),
    fmt: str = typer.Option("text", "--format", "-f", help="text, json or yaml (with --k8s text is YAML)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model to serve (repository id or path); default: "
                                                              "the plan's Hugging Face repository."),
    image: Optional[str] = typer.Option(None, "--image", help="Container image (--k8s); default: the engine "
                                                              "release's image."),
    out: Optional[Path] = OutOpt,
    catalog: Optional[list[Path]] = CatalogOpt,
    quiet: bool = QuietOpt,
) -> None:
    from gpuplan.render.deploy import DEPLOY_FORMATS, deploy, render_deploy
    from gpuplan.serving.deploy_engines import engine as engine_named

    check_formats(fmt, [], DEPLOY_FORMATS)
    if engine is not None:
        engine_named(engine)
    workloads: list[Any] = []
    plan, inputs = _saved_or_planned(source, catalog, ("serving",), out, quiet=quiet, workloads=workloads,
                                     command="deploy")
    if engine is None:  # the engine the plan was made for (a saved plan before schema 2.2: the profile's, else vLLM)
        spec = workloads[0].serving if workloads else None
        planned = plan.serving.engine if plan.serving is not None else None
        engine = planned or (spec.engine if spec is not None else None) or "vllm"
    result = deploy(plan, engine, k8s=k8s, model=model, image=image)
    text = render_deploy(result, fmt)
    for line in result.notes:
        note(line, quiet=quiet)
    _write_text(text, out, inputs)
