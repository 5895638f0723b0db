"""The same input gives the same bytes: across processes, PYTHONHASHSEED values, runs in one
process, and overlay directories whose files were created (and are listed) in different orders.

Each subprocess run writes every output format at once (``--output FORMAT:PATH``), so one run per
hash seed covers all renderers. The default run covers the example with both phases and ``check``;
the ``slow`` run covers every example, ``validate`` and ``diff``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED_VALIDATION
from tests.hostile.conftest import EXAMPLES, run_cli

SEEDS = ["0", "12345", "random"]
FORMATS = ["json", "table", "markdown", "tfvars", "tf-external", "sarif", "junit", "github", "html"]
FAST_EXAMPLES = ["llama-70b-train-serve.toml"]
ALL_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.toml"))


def _env(seed: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPLAN_", "PYTHONHASHSEED", "NO_COLOR"))}
    env.update(PYTHONHASHSEED=seed, COLUMNS="100", TERM="dumb")
    return env


def _run_seeds(argv: list[str], tmp_path: Path, outputs: list[str]) -> dict[str, dict[str, bytes]]:
    """Run ``gpuplan ARGV`` once per seed, in parallel, each in its own directory; collect outputs."""
    procs = {}
    for seed in SEEDS:
        cwd = tmp_path / f"seed-{seed}"
        cwd.mkdir()
        procs[seed] = (cwd, subprocess.Popen([sys.executable, "-m", "gpuplan", *argv], cwd=cwd, env=_env(seed),
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    results = {}
    for seed, (cwd, proc) in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 1), (seed, proc.returncode, err.decode()[-2000:])
        files = {name: (cwd / name).read_bytes() for name in outputs}
        results[seed] = {"stdout": out, "stderr": err, **files}
    return results


def _assert_identical(results: dict[str, dict[str, bytes]]) -> None:
    first = results[SEEDS[0]]
    for seed in SEEDS[1:]:
        for name, data in first.items():
            assert results[seed][name] == data, f"{name} differs between PYTHONHASHSEED={SEEDS[0]} and {seed}"


def _recommend(example: str, tmp_path: Path) -> None:
    outputs = [f"out.{fmt}" for fmt in FORMATS]
    argv = ["recommend", str(EXAMPLES / example), "--format", "json"]
    for fmt, name in zip(FORMATS, outputs):
        argv += ["--output", f"{fmt}:{name}"]
    results = _run_seeds(argv, tmp_path, outputs)
    _assert_identical(results)
    assert results["0"]["stdout"] == results["0"]["out.json"]
    json.loads(results["0"]["stdout"])


@pytest.mark.parametrize("example", FAST_EXAMPLES)
def test_recommend_is_byte_identical_across_hash_seeds(example, tmp_path):
    _recommend(example, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(set(ALL_EXAMPLES) - set(FAST_EXAMPLES)))
def test_recommend_is_byte_identical_across_hash_seeds_all_examples(example, tmp_path):
    _recommend(example, tmp_path)


def test_check_is_byte_identical_across_hash_seeds(tmp_path):
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('phase = "training"\ngpu = "h100"\nnodes = 512\nfabric = "ib-ndr"\nnic_gbit_per_gpu = 400\n'
                       'budget_usd = 5e8\npower_limit_kw = 20000\n')
    outputs = ["check.md", "check.sarif", "check.xml"]
    argv = ["check", str(EXAMPLES / "llama-70b-train-serve.toml"), "--against", str(cluster), "--format", "json",
            "--output", "markdown:check.md", "--output", "sarif:check.sarif", "--output", "junit:check.xml"]
    _assert_identical(_run_seeds(argv, tmp_path, outputs))


@pytest.mark.slow
def test_validate_and_diff_are_byte_identical_across_hash_seeds(tmp_path):
    cases = sorted(str(p) for p in SHARED_VALIDATION.glob("*.toml"))
    (tmp_path / "v").mkdir()
    _assert_identical(_run_seeds(["validate", *cases, "--format", "json"], tmp_path / "v", []))
    (tmp_path / "d").mkdir()
    argv = ["diff", str(EXAMPLES / "default.toml"), str(EXAMPLES / "llama-70b-train-serve.toml"),
            "--format", "markdown"]
    _assert_identical(_run_seeds(argv, tmp_path / "d", []))


def test_same_process_twice_gives_the_same_bytes(tmp_path):
    profile = str(EXAMPLES / "moe-serving.toml")
    first = run_cli("recommend", profile, "--format", "json", cwd=tmp_path)
    second = run_cli("recommend", profile, "--format", "json", cwd=tmp_path)
    assert first.code in (0, 1) and first.out == second.out and first.err == second.err


# -- overlays whose files were created, and are listed, in different orders -----------------------

OVERLAY_FILES = {
    "gpus/prices.toml": '[[gpu]]\nid = "h100-sxm-80gb"\nprice_usd = 21000.0\nprice_date = "2026-11"\n'
                        'sources = { price = "acme-quote" }\n',
    "sources.toml": '[[source]]\nid = "acme-quote"\ntitle = "ACME quote"\ndate = "2026-11"\nconfidence = "V"\n',
    "network/switch.toml": '[[switch]]\nid = "qm9700"\nprice_usd = 30000.0\n',
    "a.toml": "",
    "z/zz/deep.toml": '[[gpu]]\nid = "mi300x-oam-192gb"\ncloud_usd_per_gpu_hour = 2.5\n',
}


def _overlay(root: Path, order: list[str]) -> Path:
    for rel in order:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(OVERLAY_FILES[rel])
    return root


def test_overlay_file_order_does_not_change_the_catalog(tmp_path, monkeypatch):
    from gpuplan.hardware import load_catalog

    names = sorted(OVERLAY_FILES)
    a = _overlay(tmp_path / "a", names)
    b = _overlay(tmp_path / "b", list(reversed(names)))
    cat_a, cat_b = load_catalog([a]), load_catalog([b])
    assert cat_a.sha256 == cat_b.sha256
    assert cat_a.gpus == cat_b.gpus and cat_a.switches == cat_b.switches
    assert list(cat_a.gpus) == list(cat_b.gpus)
    # and whatever order the file system lists entries in
    real_walk = os.walk

    def reversed_walk(top, *args, **kwargs):
        for dirpath, dirnames, filenames in real_walk(top, *args, **kwargs):
            dirnames.reverse()
            yield dirpath, dirnames, list(reversed(filenames))

    monkeypatch.setattr(os, "walk", reversed_walk)
    assert load_catalog([a]).sha256 == cat_a.sha256


def test_overlay_file_order_gives_identical_plans(tmp_path):
    names = sorted(OVERLAY_FILES)
    a = _overlay(tmp_path / "a", names)
    b = _overlay(tmp_path / "b", list(reversed(names)))
    profile = str(EXAMPLES / "chat-8b-serving.toml")
    ra = run_cli("recommend", profile, "--format", "json", "--catalog", str(a), cwd=tmp_path)
    rb = run_cli("recommend", profile, "--format", "json", "--catalog", str(b), cwd=tmp_path)
    assert ra.code in (0, 1) and ra.out == rb.out
    rc = run_cli("recommend", profile, "--format", "json", cwd=tmp_path)
    assert json.loads(rc.out)["catalog_sha256"] != json.loads(ra.out)["catalog_sha256"]
