"""``gpuplan calibrate``: fit efficiency figures to measurements and write a catalog overlay.

Registered on the app by the import at the end of :mod:`gpuplan.cli.commands`; the fit is
:mod:`gpuplan.ci.calibrate`, the readers :mod:`gpuplan.ci.measurements` (docs/calibration.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gpuplan.cli.common import CatalogOpt, OldOutOpt, QuietOpt, app, load_catalog_cli, note, out_path


@app.command(
    "calibrate",
    help="\b\nExample:  gpuplan calibrate examples/measurements/*.toml examples/measurements/nccl-h100-1node.txt --gpu h100-sxm-80gb -o my-catalog\n\n"
         "Fit the per-GPU efficiency figures (matmul, memory bandwidth, scale-up and scale-out bus bandwidth, "
         "fixed per-layer costs) to your measurements, within physical bounds, and write a catalog overlay "
         "that 'recommend', 'check' and 'validate' read with --catalog DIR. Reads validation case TOML, "
         "trtllm-bench reports, vLLM / SGLang serving benchmark JSON, nccl-tests output and Megatron / NeMo "
         "logs (docs/calibration.md). Prints the median error on the measurements before and after.\n\n"
         "Exit codes: 0 written, 2 bad input, too few or contradictory points.",
    short_help="Fit efficiency figures to your measurements; write a catalog overlay.",
)
def calibrate_command(
    measurements: list[Path] = typer.Argument(..., metavar="MEASUREMENTS...", help="Measurement files."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Directory of the catalog overlay to write "
                                                                  "(required)."),
    old_out: Optional[Path] = OldOutOpt,
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU id for tool outputs that do not name one."),
    model: Optional[str] = typer.Option(None, "--model", help="Model preset for tool outputs (catalog models)."),
    sets: list[str] = typer.Option([], "--set", help="A run field for tool outputs, key=value (tp=8, "
                                   "precision=fp8, gpus=64); repeatable."),
    catalog: Optional[list[Path]] = CatalogOpt,
    quiet: bool = QuietOpt,
) -> None:
    from gpuplan.ci.calibrate import fit, overlay_files, write_overlay
    from gpuplan.ci.measurements import Context, parse_set, read_measurements
    from gpuplan.core.errors import InputError
    from gpuplan.core.io import write_stdout

    out = out_path(out, old_out, quiet=quiet)
    if out is None:
        raise InputError("missing; expected -o DIR, the directory of the catalog overlay to write", field="--out")
    cat = load_catalog_cli(catalog)
    meas = read_measurements([str(m) for m in measurements], Context(gpu=gpu, model=model, run=parse_set(sets)))
    result = fit(meas, cat)
    files = overlay_files(result, meas)
    write_overlay(out, files, protect=[str(m) for m in measurements])
    lines = [_change(name, result.start.get(name, value), value) for name, value in sorted(result.values.items())]
    if result.before:
        lines.append(f"median error on {len(result.before)} measured figures: {result.median_before:.1%} before, "
                     f"{result.median_after:.1%} after")
    lines.append(f"wrote {', '.join(str(out / f) for f in files)}; use it with --catalog {out}")
    write_stdout("\n".join(lines) + "\n")
    for n in result.notes:
        note(n, quiet=quiet)


def _change(name: str, start: float, value: float) -> str:
    """'name: 0.71 -> 0.8066', or 'name: 2 (unchanged)' when the fit left it where it was."""
    before, after = f"{start:.4g}", f"{value:.4g}"
    return f"{name}: {after} (unchanged)" if before == after else f"{name}: {before} -> {after}"
