"""Malformed files of every kind gpuplan reads, through the CLI: one clear error line (exit 2), or,
for a valid file at an extreme magnitude, a plan that says plainly why it is infeasible (exit 1).

Kinds: workload profile (``recommend``), Hugging Face config (``model.hf_config``), catalog overlay
(``catalog gpus --catalog``), cluster file (``check --against``), saved plan JSON (``render``) and
validation case file (``validate``). The byte-level damage is the same for all of them (encodings,
byte-order marks, NUL bytes, size limit, nesting, duplicate keys, 5,000-digit numbers, truncation,
devices); the magnitudes are per kind, and include the issue's own examples (1e30 parameters,
1e9 QPS, a one-token context) end to end through the CLI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.core.io import MAX_INPUT_BYTES, MAX_NESTING
from tests.hostile.conftest import EXAMPLES, assert_outcome, run_cli

#: The chat example on two GPUs (its [constraints] table is the last one): cheap to plan.
SERVING_PROFILE = (EXAMPLES / "chat-8b-serving.toml").read_text(encoding="utf-8") + 'allow_gpus = ["h100", "l40s"]\n'
HF_CONFIG = json.dumps({"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512,
                        "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 1408,
                        "vocab_size": 32000, "hidden_act": "silu"}, indent=1)
HF_PROFILE = '[model]\nhf_config = "config.json"\n[serving]\nqps = 1\n[constraints]\nallow_gpus = ["h100", "mi300x"]\n'
OVERLAY = '[[gpu]]\nid = "h100-sxm-80gb"\nprice_usd = 25000.0\nprice_date = "2026-11"\n'
CLUSTER = 'name = "row-a"\nphase = "serving"\ngpu = "h100-sxm-80gb"\ngpus = 16\n'
CASES = ('[[case]]\nid = "x"\nkind = "serving"\nsource = "s"\ntolerance = 0.2\n[case.model]\npreset = "llama-2-7b"\n'
         '[case.run]\ngpu = "a100-sxm-80gb"\ngpus = 1\ntp = 1\nprecision = "bf16"\nbatch = 1\nprompt_tokens = 5\n'
         'output_tokens = 200\n[case.measured]\ndecode_tokens_per_s = 104.9\n')


def _plan_json() -> str:
    from gpuplan.render.json_ import to_json
    from tests.render.fixtures import synthetic_plan

    return to_json(synthetic_plan())


class Kind:
    """One kind of input file: its valid content, how to run gpuplan on it, and its syntax."""

    def __init__(self, name: str, filename: str, content: Callable[[], str], json_syntax: bool,
                 argv: Callable[[Path, Path], list[str]]):
        self.name, self.filename, self.content, self.json = name, filename, content, json_syntax
        self.argv = argv

    def run(self, tmp: Path, data: bytes | None, *, setup: Callable[[Path], None] | None = None):
        target = tmp / self.filename
        if self.filename != "p.toml":
            (tmp / "p.toml").write_text(SERVING_PROFILE if self.name != "hf-config"
                                        else HF_PROFILE)
        if data is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if setup is not None:
            setup(target)
        return run_cli(*self.argv(tmp, target), cwd=tmp)


KINDS = {
    "profile": Kind("profile", "p.toml", lambda: SERVING_PROFILE, False,
                    lambda tmp, f: ["recommend", str(f), "--format", "json"]),
    "hf-config": Kind("hf-config", "config.json", lambda: HF_CONFIG, True,
                      lambda tmp, f: ["recommend", str(tmp / "p.toml"), "--format", "json"]),
    "overlay": Kind("overlay", "overlay/gpus/prices.toml", lambda: OVERLAY, False,
                    lambda tmp, f: ["catalog", "gpus", "--format", "json", "--catalog", str(tmp / "overlay")]),
    "cluster": Kind("cluster", "cluster.toml", lambda: CLUSTER, False,
                    lambda tmp, f: ["check", str(tmp / "p.toml"), "--against", str(f), "--format", "json"]),
    "cluster-json": Kind("cluster-json", "cluster.json",
                         lambda: json.dumps({"phase": "serving", "gpu": "h100", "gpus": 16}), True,
                         lambda tmp, f: ["check", str(tmp / "p.toml"), "--against", str(f), "--format", "json"]),
    "plan": Kind("plan", "plan.json", _plan_json, True, lambda tmp, f: ["render", str(f), "--format", "json"]),
    "cases": Kind("cases", "cases.toml", lambda: CASES, False, lambda tmp, f: ["validate", str(f), "--format", "json"]),
}


def _insert_json(text: str, member: str) -> str:
    i = text.index("{")
    return text[: i + 1] + member + ", " + text[i + 1:]


def _pad(data: bytes, size: int, is_json: bool) -> bytes:
    """``data`` padded to exactly ``size`` bytes with whitespace (JSON) or a comment (TOML)."""
    if is_json:
        return data + b" " * (size - len(data))
    filler = b"\n#" + b"x" * (size - len(data) - 3) + b"\n"
    return data + filler


# (label, damage(content bytes, is_json) -> bytes or None for no file, expected)
# expected: "ok" = a clean result (exit 0 or 1), "any" = any clean outcome, else a substring of the one error line.
DAMAGE: list[tuple[str, Callable[[bytes, bool], bytes], str]] = [
    ("utf8-bom", lambda b, j: b"\xef\xbb\xbf" + b, "ok"),
    ("crlf", lambda b, j: b.replace(b"\n", b"\r\n"), "ok"),
    ("exactly-max-bytes", lambda b, j: _pad(b, MAX_INPUT_BYTES, j), "ok"),
    ("one-byte-over-max", lambda b, j: _pad(b, MAX_INPUT_BYTES + 1, j), f"larger than the {MAX_INPUT_BYTES}-byte limit"),
    ("utf16-be-bom", lambda b, j: b"\xfe\xff" + b.decode().encode("utf-16-be"), "UTF-16"),
    ("utf16-le-bom", lambda b, j: b"\xff\xfe" + b.decode().encode("utf-16-le"), "UTF-16"),
    ("utf32-le-bom", lambda b, j: b"\xff\xfe\x00\x00" + b.decode().encode("utf-32-le"), "UTF-16"),
    ("utf16-without-bom", lambda b, j: b.decode().encode("utf-16-le"), "NUL bytes"),
    ("latin1-byte", lambda b, j: b.replace(b"\n", b"\n" + ("" if j else "# caf\xe9\n").encode("latin-1"), 1)
     if not j else b[:-1] + b"\xe9" + b[-1:], "not valid UTF-8"),
    ("nul-byte", lambda b, j: b + b"\x00", "NUL bytes"),
    ("double-bom", lambda b, j: b"\xef\xbb\xbf\xef\xbb\xbf" + b, "syntax error"),
    ("deep-nesting", lambda b, j: (_insert_json(b.decode(), '"deep": ' + "[" * (MAX_NESTING + 8) + "]" * (MAX_NESTING + 8))
                                   if j else "deep = " + "[" * (MAX_NESTING + 8) + "]" * (MAX_NESTING + 8) + "\n"
                                   + b.decode()).encode(), f"nesting deeper than {MAX_NESTING} levels"),
    ("very-deep-nesting", lambda b, j: (_insert_json(b.decode(), '"deep": ' + "[" * 100_000 + "]" * 100_000) if j
                                        else "deep = " + "{a = " * 20_000 + "1" + "}" * 20_000 + "\n"
                                        + b.decode()).encode(), "nesting deeper"),
    ("duplicate-key", lambda b, j: (_insert_json(b.decode(), '"k": 1, "k": 2') if j
                                    else "k = 1\nk = 2\n" + b.decode()).encode(), "duplicate key"),
    ("5000-digit-number", lambda b, j: (_insert_json(b.decode(), '"k": ' + "9" * 5000) if j
                                        else "k = " + "9" * 5000 + "\n" + b.decode()).encode(), "4300 digits"),
    ("empty", lambda b, j: b"", "any"),
    ("whitespace-only", lambda b, j: b" \n\t\n", "any"),
    ("truncated", lambda b, j: b[: len(b) // 2], "any"),
]
# TOML reports a duplicate key as a syntax error; JSON names it.
DUP_TOML = "syntax error"


@pytest.mark.parametrize("label,damage,expected", DAMAGE, ids=[d[0] for d in DAMAGE])
@pytest.mark.parametrize("kind_name", list(KINDS))
def test_damaged_file(tmp_path, kind_name, label, damage, expected):
    kind = KINDS[kind_name]
    data = damage(kind.content().encode("utf-8"), kind.json)
    started = time.monotonic()
    r = kind.run(tmp_path, data)
    assert time.monotonic() - started < 60, f"{kind_name}/{label} took too long"
    if label == "duplicate-key" and not kind.json:
        expected = DUP_TOML
    if expected == "ok":
        assert_outcome(r, allowed=(0, 1), json_out=True)
    elif expected == "any":
        assert_outcome(r, json_out=True)
    else:
        assert_outcome(r, allowed=(2,))
        assert expected in r.err, r
        assert r.out == "", r
    # nothing but our inputs in the directory: no partial output, no temporary file
    leftovers = sorted(p.name for p in tmp_path.rglob("*") if p.name.endswith(".tmp"))
    assert not leftovers


DEVICES = [
    ("dev-zero", lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
    ("dev-urandom", lambda p: p.symlink_to("/dev/urandom"), "not a regular file"),
    ("dev-null", lambda p: p.symlink_to("/dev/null"), "not a regular file"),
    ("dangling-symlink", lambda p: p.symlink_to(p.parent / "nowhere"), "file not found"),
    ("directory", lambda p: p.mkdir(), "directory"),
    ("missing", lambda p: None, "not found"),
]


@pytest.mark.parametrize("label,setup,expected", DEVICES, ids=[d[0] for d in DEVICES])
@pytest.mark.parametrize("kind_name", ["profile", "hf-config", "cluster", "plan", "cases"])
def test_device_or_missing_file_is_refused_quickly(tmp_path, kind_name, label, setup, expected):
    """A committed symlink to /dev/zero must not read forever (nor fill memory)."""
    kind = KINDS[kind_name]
    (tmp_path / kind.filename).parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    r = kind.run(tmp_path, None, setup=setup)
    assert time.monotonic() - started < 10
    assert_outcome(r, allowed=(2,))
    if kind_name == "hf-config" and label.startswith("dev-"):
        expected = "is outside the directory"  # the link leaves the profile's tree (test_special_files.py)
    assert expected in r.err


# -- magnitudes, per kind --------------------------------------------------------------------------

PROFILE_VALUES = [
    # (label, profile text, expected: substring of the error, "plan" for a plan (exit 0/1), "any" for either)
    # the magnitudes named in the issue, end to end (one line, the field, the limit)
    ("params-1e30", '[model]\nparams = 1e30\n[serving]\nqps = 1\n',
     "model.params: input should be less than or equal to 100000000000000"),
    ("qps-1e9", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 1e9\n',
     "serving.qps: input should be less than or equal to 1000000"),
    ("one-token-context", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 1\ncontext_length = 1\n',
     "serving.context_length: input should be greater than or equal to 128"),
    ("one-token-sequence", '[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e12\nsequence_length = 1\n',
     "training.sequence_length: input should be greater than or equal to 128"),
    ("tokens-1e30", '[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e30\n',
     "training.tokens: input should be less than or equal to"),
    ("qps-zero", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 0\n', "serving.qps: input should be greater than 0"),
    ("qps-negative", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = -5\n', "greater than 0"),
    ("qps-nan", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = nan\n', "serving.qps"),
    ("qps-inf", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = inf\n', "serving.qps"),
    ("params-negative-inf", '[model]\nparams = -inf\n[serving]\nqps = 1\n', "model.params"),
    # valid, but more GPUs than any fabric in the catalog reaches: an infeasible plan that says so
    ("max-training-gpus", '[model]\npreset = "llama-3.1-405b"\n[training]\ntokens = 1e12\ngpus = 1048576\n', "any"),
    ("moe-1e6-qps-long-prompt", '[model]\npreset = "deepseek-v3"\n[serving]\nqps = 1e6\nprompt_tokens = 100000\n'
     'output_tokens = 30000\ncontext_length = 131072\n', "any"),
    ("one-token-prompt-and-output", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 1\nprompt_tokens = 1\n'
     'output_tokens = 1\n[constraints]\nallow_gpus = ["h100", "l40s"]\n', "plan"),
    ("negative-zero-qps", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = -0.0\n', "greater than 0"),
    ("overflowing-float", '[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e400\n', "finite"),
    ("int64-overflow", '[model]\npreset = "llama-2-7b"\n[training]\ntokens = 1e12\ngpus = 9223372036854775808\n',
     "less than or equal"),
    ("5000-digit-params", '[model]\nparams = ' + "9" * 5000 + '\n[serving]\nqps = 1\n', "4300 digits"),
    ("hex-and-underscores", '[model]\nparams = 0x1_0000_0000\n[serving]\nqps = 1_0\n', "plan"),
    ("date-for-number", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 1979-05-27\n', "valid number"),
    ("bool-for-int", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 1\nspare_replicas = true\n', "valid integer"),
    ("absurd-layers", '[model]\nlayers = 1099511627776\nhidden = 512\nheads = 8\n[serving]\nqps = 1\n',
     "larger than the limit"),
    ("absurd-experts", '[model]\nlayers = 4\nhidden = 512\nheads = 8\nexperts = 10000000000\nactive_experts = 1\n'
                       'dense_layers = 4\n[serving]\nqps = 1\n', "larger than the limit"),
    ("architecture-over-1e14", '[model]\nlayers = 1000\nhidden = 1048576\nheads = 8192\nffn = 1\n[serving]\nqps = 1\n',
     "more than the limit of 1e14"),
    ("long-unknown-key", '[model]\npreset = "llama-2-7b"\n' + "k" * 50_000 + ' = 1\n[serving]\nqps = 1\n',
     "unknown field"),
    ("long-gpu-name", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 1\n[constraints]\nallow_gpus = ["'
     + "h" * 100_000 + '"]\n', "unknown GPU"),
    ("many-gpu-names", '[model]\npreset = "llama-2-7b"\n[serving]\nqps = 1\n[constraints]\nallow_gpus = ['
     + ", ".join(['"h100"'] * 50_000) + "]\n", "plan"),
    # the largest valid magnitudes: a plan that says why it is (in)feasible
    ("max-tokens-tiny-deadline", '[model]\nparams = 1e14\n[training]\ntokens = 1e16\ndeadline_days = 0.001\n', "plan"),
    ("max-qps-405b", '[model]\npreset = "llama-3.1-405b"\n[serving]\nqps = 1e6\nttft_ms = 1\ntpot_ms = 1\n', "plan"),
    ("max-context", '[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 1\ncontext_length = 2097152\n'
                    'prompt_tokens = 2000000\noutput_tokens = 97152\n', "plan"),
    ("405b-on-one-gpu", '[model]\npreset = "llama-3.1-405b"\n[training]\ntokens = 1e12\ngpus = 1\n', "plan"),
    ("one-dollar-budget", '[model]\npreset = "llama-3.1-8b"\n[training]\ntokens = 1e9\nbudget_usd = 1\n', "plan"),
    ("one-watt-power", '[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 1\n[constraints]\npower_limit_kw = 0.001\n',
     "plan"),
    ("smallest-everything", '[model]\nparams = 5e8\n[training]\ntokens = 1e6\nsequence_length = 128\n'
                            'global_batch_tokens = 1000\ngpus = 1\n[serving]\nqps = 1e-300\nprompt_tokens = 1\n'
                            'output_tokens = 1\ncontext_length = 128\nttft_ms = 1e-300\ntpot_ms = 1e-300\n', "plan"),
    ("tiny-architecture", '[model]\nlayers = 1\nhidden = 1\nheads = 1\nvocab = 1\n[training]\ntokens = 1e6\n'
                          '[serving]\nqps = 1\n', "plan"),
]


@pytest.mark.parametrize("label,text,expected", PROFILE_VALUES, ids=[v[0] for v in PROFILE_VALUES])
def test_profile_magnitudes(tmp_path, label, text, expected):
    path = tmp_path / "p.toml"
    path.write_text(text)
    r = run_cli("recommend", str(path), "--format", "json", cwd=tmp_path)
    if expected == "any":
        assert_outcome(r, json_out=True)
        return
    if expected != "plan":
        assert_outcome(r, allowed=(2,))
        assert expected in r.err and len(r.err) < 1000, r
        return
    assert_outcome(r, allowed=(0, 1), json_out=True)
    plan = json.loads(r.out)
    for f in plan["findings"]:
        if f["severity"] == "error":
            assert f["message"].strip() and f["message"] in r.err, r
    if r.code == 1:
        assert any(line.startswith(("gpuplan: training:", "gpuplan: serving:")) for line in r.err.splitlines()), r


HF_VALUES = [
    ("hidden-1e400", {"hidden_size": "RAW:1e400"}, "out of range"),
    ("layers-1e30", {"num_hidden_layers": 10**30}, "larger than the limit"),
    ("layers-zero", {"num_hidden_layers": 0}, "greater than 0"),
    ("layers-negative", {"num_hidden_layers": -5}, "greater than 0"),
    ("hidden-string", {"hidden_size": "4096", "intermediate_size": None}, "valid integer"),
    ("hidden-float", {"hidden_size": 512.0, "intermediate_size": None}, "valid integer"),
    ("hidden-list", {"hidden_size": [512], "intermediate_size": None}, "valid integer"),
    ("heads-bool", {"num_attention_heads": True}, "valid integer"),
    ("nan", {"vocab_size": "RAW:NaN"}, "non-finite"),
    ("experts-numeric-string", {"num_local_experts": "8", "num_experts_per_tok": 2}, "ok"),  # lax int, as documented
    ("experts-word", {"num_local_experts": "eight", "num_experts_per_tok": 2}, "valid integer"),
    ("shared-expert-size-string", {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
                                   "shared_expert_intermediate_size": "big"}, "ok"),
    ("text-config-list", {"text_config": []}, "ok"),
    ("moe-1e6-experts-dense", {"num_local_experts": 10**6, "num_experts_per_tok": 1, "first_k_dense_replace": 4},
     "ok"),
]


@pytest.mark.parametrize("label,change,expected", HF_VALUES, ids=[v[0] for v in HF_VALUES])
def test_hf_config_magnitudes(tmp_path, label, change, expected):
    cfg = json.loads(HF_CONFIG)
    raw = {}
    for k, v in change.items():
        if v is None:
            cfg.pop(k, None)
        elif isinstance(v, str) and v.startswith("RAW:"):
            cfg[k] = 0
            raw[k] = v[4:]
        else:
            cfg[k] = v
    text = json.dumps(cfg)
    for k, v in raw.items():
        text = text.replace(f'"{k}": 0', f'"{k}": {v}')
    (tmp_path / "config.json").write_text(text)
    (tmp_path / "p.toml").write_text(HF_PROFILE)
    r = run_cli("recommend", str(tmp_path / "p.toml"), "--format", "json", cwd=tmp_path)
    if expected == "ok":
        assert_outcome(r, allowed=(0, 1), json_out=True)
    else:
        assert_outcome(r, allowed=(2,))
        assert expected in r.err and "config.json" in r.err, r


OVERLAY_VALUES = [
    ("price-nan", 'price_usd = nan', "finite"),
    ("price-1e400", 'price_usd = 1e400', "finite"),
    ("price-negative", 'price_usd = -1.0', "greater than 0"),
    ("memory-tiny", 'memory_label_gb = 1e-30', "gpu[h100-sxm-80gb].memory_label_gb: outside the plausible range"),
    # issue 14: schema-valid magnitudes that overflowed a planner (exit 3, four lines)
    ("memory-1e300", 'memory_label_gb = 1e300', "gpu[h100-sxm-80gb].memory_label_gb: outside the plausible range 1 to 4,096"),
    ("bf16-1e300", 'bf16_dense_tflops = 1e300', "gpu[h100-sxm-80gb].bf16_dense_tflops: outside the plausible"),
    ("bandwidth-1e300", 'mem_bw_tb_per_s = 1e300', "gpu[h100-sxm-80gb].mem_bw_tb_per_s: outside the plausible range"),
    ("bandwidth-1e-300", 'mem_bw_tb_per_s = 1e-300', "gpu[h100-sxm-80gb].mem_bw_tb_per_s: outside the plausible range"),
    ("tdp-1e300", 'tdp_w = 1e300', "gpu[h100-sxm-80gb].tdp_w: outside the plausible range"),
    ("price-1e300", 'price_usd = 1e300', "gpu[h100-sxm-80gb].price_usd: outside the plausible range"),
    ("cloud-1e-300", 'cloud_usd_per_gpu_hour = 1e-300', "cloud_usd_per_gpu_hour: outside the plausible range"),
    ("efficiency-1e-300", 'efficiency = { matmul_bf16 = 1e-300 }', "efficiency.matmul_bf16: outside the plausible"),
    ("scaleup-1e300", 'scaleup_uni_gb_per_s = 1e300', "scaleup_uni_gb_per_s: outside the plausible range"),
    ("domain-zero", 'scaleup_domain = 0', "greater than 0"),
    ("tflops-string", 'bf16_dense_tflops = "989"', "valid number"),
    ("efficiency-over-one", 'efficiency = { mem_bw = 1.5 }', "less than or equal to 1"),
    ("unknown-source", 'sources = { price = "no-such-source" }', "unknown source"),
    ("alias-collision", 'aliases = ["a100"]', "collides"),
    ("unknown-field", 'price_usdd = 1.0', "did you mean 'price_usd'"),
]


@pytest.mark.parametrize("label,line,expected", OVERLAY_VALUES, ids=[v[0] for v in OVERLAY_VALUES])
def test_overlay_magnitudes(tmp_path, label, line, expected):
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "x.toml").write_text(f'[[gpu]]\nid = "h100-sxm-80gb"\n{line}\n')
    r = run_cli("catalog", "gpus", "--catalog", str(tmp_path / "overlay"))
    assert_outcome(r, allowed=(2,))
    assert expected in r.err and "x.toml" in r.err, r
    # the same one line when planning with the overlay, never exit 3
    (tmp_path / "p.toml").write_text(SERVING_PROFILE)
    r = run_cli("recommend", str(tmp_path / "p.toml"), "--format", "json", "--catalog", str(tmp_path / "overlay"))
    assert_outcome(r, allowed=(2,))
    assert expected in r.err and r.err.count("\n") == 1, r


CALIBRATION_VALUES = [
    ("string", "collectives", 'pcie_step_latency_us = "fast"', "expected a number, got a string"),
    ("array", "collectives", "scaleout_hops = []", "expected a number, got a array"),
    ("nan", "collectives", "scaleup_step_latency_us = nan", "finite number"),
    ("negative", "collectives", "scaleout_hops = -3", "finite number >= 0"),
    ("unknown-key", "collectives", "scaleout_hopz = 3", "did you mean 'scaleout_hops'"),
    ("unknown-table", "colectives", "scaleout_hops = 3", "unknown calibration table"),
    ("table-for-number", "serving", "layer_latency_us = { a = 1 }", "expected a number, got a table"),
]


@pytest.mark.parametrize("label,stem,line,expected", CALIBRATION_VALUES, ids=[v[0] for v in CALIBRATION_VALUES])
def test_overlay_calibration_keeps_the_shipped_shape(tmp_path, label, stem, line, expected):
    """Planners read calibration tables directly: an overlay may not put a string or NaN there."""
    (tmp_path / "overlay" / "calibration").mkdir(parents=True)
    (tmp_path / "overlay" / "calibration" / f"{stem}.toml").write_text(line + "\n")
    r = run_cli("catalog", "gpus", "--catalog", str(tmp_path / "overlay"))
    assert_outcome(r, allowed=(2,))
    assert expected in r.err and f"{stem}.toml" in r.err, r


def test_overlay_calibration_override_is_accepted(tmp_path):
    (tmp_path / "overlay" / "calibration").mkdir(parents=True)
    (tmp_path / "overlay" / "calibration" / "collectives.toml").write_text("scaleout_hops = 5\n")
    assert_outcome(run_cli("catalog", "gpus", "--catalog", str(tmp_path / "overlay")), allowed=(0,))


CLUSTER_VALUES = [
    ("gpus-zero", "gpus = 0", "greater than or equal to 1"),
    ("gpus-negative", "gpus = -8", "greater than or equal to 1"),
    ("gpus-int64", "gpus = 9223372036854775808", "less than or equal"),
    ("gpus-1e30", "gpus = 1e30", "valid integer"),
    ("budget-1e30", "gpus = 8\nbudget_usd = 1e30", "less than or equal"),
    ("power-zero", "gpus = 8\npower_limit_kw = 0", "greater than 0"),
    ("gpus-float", "gpus = 1.5", "valid integer"),
    ("gpus-nan", "gpus = nan", "valid integer"),
    ("gpus-and-nodes", "gpus = 8\nnodes = 1", "exactly one of gpus or nodes"),
    ("unknown-gpu", 'gpus = 8\ngpu = "h1000"', "did you mean"),
    ("oversubscription-below-one", "gpus = 8\noversubscription = 0.5", "greater than or equal to 1"),
    ("budget-inf", "gpus = 8\nbudget_usd = inf", "finite"),
    ("unknown-key", "gpus = 8\ngpuss = 8", "unknown field"),
    ("max-gpus", "gpus = 1048576", "plan"),
    ("one-gpu", "gpus = 1", "plan"),
]


@pytest.mark.parametrize("label,lines,expected", CLUSTER_VALUES, ids=[v[0] for v in CLUSTER_VALUES])
def test_cluster_magnitudes(tmp_path, label, lines, expected):
    text = 'phase = "serving"\n' + ("" if "gpu =" in lines else 'gpu = "h100-sxm-80gb"\n') + lines + "\n"
    (tmp_path / "cluster.toml").write_text(text)
    (tmp_path / "p.toml").write_text(SERVING_PROFILE)
    r = run_cli("check", str(tmp_path / "p.toml"), "--against", str(tmp_path / "cluster.toml"), "--format", "json",
                cwd=tmp_path)
    if expected == "plan":
        assert_outcome(r, allowed=(0, 1), json_out=True)
    else:
        assert_outcome(r, allowed=(2,))
        assert expected in r.err and "cluster.toml" in r.err, r


def _plan_with(change: Callable[[dict], None]) -> str:
    data = json.loads(_plan_json())
    change(data)
    return json.dumps(data)


PLAN_VALUES = [
    ("future-schema", lambda d: d.update(schema_version="99.0"), "not supported"),
    ("no-schema", lambda d: d.pop("schema_version"), "schema_version missing"),
    ("schema-int", lambda d: d.update(schema_version=1), "schema_version missing or malformed"),
    ("wrong-type", lambda d: d.update(model="llama"), "model"),
    ("nan", lambda d: d["serving"].update(qps="RAW:NaN"), "non-finite"),
    ("overflow", lambda d: d["serving"].update(qps="RAW:1e400"), "out of range"),
    ("extra-field", lambda d: d.update(injected="x"), "injected"),
    ("top-level-list", None, "expected a JSON object"),
]


@pytest.mark.parametrize("label,change,expected", PLAN_VALUES, ids=[v[0] for v in PLAN_VALUES])
def test_plan_json_magnitudes(tmp_path, label, change, expected):
    if change is None:
        text = "[" + _plan_json() + "]"
    else:
        text = _plan_with(change)
        text = text.replace('"RAW:NaN"', "NaN").replace('"RAW:1e400"', "1e400")
    (tmp_path / "plan.json").write_text(text)
    r = run_cli("render", str(tmp_path / "plan.json"), "--format", "markdown", cwd=tmp_path)
    assert_outcome(r, allowed=(2,))
    assert expected in r.err and "plan.json" in r.err, r


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/stdin", "/proc/self/environ", "../../../../etc/passwd"])
def test_plan_naming_a_device_as_its_profile_renders_quickly(tmp_path, target):
    """``render`` reads the plan's ``profile`` for line numbers: a hostile plan may name anything."""
    (tmp_path / "plan.json").write_text(_plan_with(lambda d: d.update(profile=target)))
    started = time.monotonic()
    for fmt in ("sarif", "github", "markdown"):
        r = run_cli("render", str(tmp_path / "plan.json"), "--format", fmt, cwd=tmp_path)
        assert_outcome(r, allowed=(0,))
        assert "PATH=" not in r.out and "root:x:0:0" not in r.out
    assert time.monotonic() - started < 20


CASE_VALUES = [
    ("measured-nan", "decode_tokens_per_s = 104.9", "decode_tokens_per_s = nan", "finite"),
    ("measured-inf", "decode_tokens_per_s = 104.9", "decode_tokens_per_s = inf", "finite"),
    ("measured-negative-inf", "decode_tokens_per_s = 104.9", "decode_tokens_per_s = -inf", "finite"),
    ("tolerance-nan", "tolerance = 0.2", "tolerance = nan", "finite"),
    ("gpus-string", "gpus = 1\n", 'gpus = "one"\n', "any"),
    ("tp-huge", "tp = 1\n", "tp = 1000000000\n", "any"),
    ("batch-negative", "batch = 1\n", "batch = -1\n", "any"),
    ("prompt-1e30", "prompt_tokens = 5\n", "prompt_tokens = 1e30\n", "any"),
]


@pytest.mark.parametrize("label,old,new,expected", CASE_VALUES, ids=[v[0] for v in CASE_VALUES])
def test_validation_case_magnitudes(tmp_path, label, old, new, expected):
    (tmp_path / "cases.toml").write_text(CASES.replace(old, new))
    r = run_cli("validate", str(tmp_path / "cases.toml"), "--format", "json", cwd=tmp_path)
    if expected == "any":
        assert_outcome(r, json_out=True)
    else:
        assert_outcome(r, allowed=(2,))
        assert expected in r.err, r


@pytest.mark.parametrize("args", [("recommend", "{p}"), ("check", "{p}", "--against", "examples/clusters/h100-training.toml"),
                                  ("sweep", "{p}", "--set", "serving.qps=5,10")])
def test_a_json_document_given_as_the_profile_says_so(cli, tmp_path, args):
    """A saved plan handed to recommend, check or sweep failed with 'line 1, column 1: TOML syntax
    error: invalid statement'; it says what the file is and what reads it."""
    plan = tmp_path / "plan.json"
    plan.write_text('{"schema_version": "2.2"}\n')
    r = cli(*[a.format(p=plan) for a in args])
    assert r.code == 2 and r.out == ""
    assert r.err == (f"gpuplan: error: {plan}: a saved plan (the JSON of 'gpuplan recommend --format json'), not a "
                     f"workload profile (TOML with a [model] table); '{args[0]}' plans a profile (a saved plan is "
                     "re-rendered by 'gpuplan render PLAN.json')\n")
