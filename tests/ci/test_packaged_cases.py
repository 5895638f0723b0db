"""The published cases ship with gpuplan: ``gpuplan validate`` with no file runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.ci.validate import PACKAGED, packaged_files

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "validation"


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/validation is not next to this checkout")
@pytest.mark.parametrize("rel", ["training.toml", "serving.toml", "fabric.toml", "frontier/training.toml",
                                 "frontier/serving.toml", "frontier/fabric.toml"])
def test_the_packaged_copy_equals_the_shared_source(rel):
    assert (PACKAGED / rel).read_bytes() == (SHARED / rel).read_bytes(), (
        f"refresh with: cp ../shared/validation/{rel} gpuplan/ci/cases/{rel}")


def test_every_shared_file_is_packaged():
    if SHARED.is_dir():
        shared = sorted(str(p.relative_to(SHARED)) for p in SHARED.rglob("*.toml"))
        assert shared == sorted(str(p.relative_to(PACKAGED)) for p in PACKAGED.rglob("*.toml"))
    assert list(packaged_files(("fabric",))) == ["<packaged>/fabric.toml", "<packaged>/frontier/fabric.toml"]


def test_validate_without_files_runs_the_packaged_cases():
    proc = subprocess.run([sys.executable, "-m", "gpuplan", "validate", "--format", "json"], capture_output=True,
                          text=True, cwd=ROOT / "docs")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["summary"]["cases"] >= 40
    files = {c["file"] for c in report["cases"]}
    assert files == {f"<packaged>/{k}.toml" for k in ("training", "serving", "fabric")} | {
        f"<packaged>/frontier/{k}.toml" for k in ("training", "serving", "fabric")}
    # The main set is the one that must always pass.
    main = [c for c in report["cases"] if "frontier" not in c["file"]]
    assert len(main) == 24 and all(c["status"] == "pass" for c in main), [c["id"] for c in main if c["status"] != "pass"]


def test_kind_selects_one_kind_and_an_unknown_kind_is_exit_2():
    proc = subprocess.run([sys.executable, "-m", "gpuplan", "validate", "--kind", "fabric", "--format", "json"],
                          capture_output=True, text=True)
    assert {c["kind"] for c in json.loads(proc.stdout)["cases"]} == {"fabric"}
    bad = subprocess.run([sys.executable, "-m", "gpuplan", "validate", "--kind", "fabrics"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--kind" in bad.stderr
