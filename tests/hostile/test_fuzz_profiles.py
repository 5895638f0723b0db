"""Property: any workload profile gives a plan, a failed gate or one clear error line; never exit 3.

Four generators: structured profiles (each field mostly valid, now and then a hostile value, an
unknown key or a missing table), mutations of the shipped examples, arbitrary text and arbitrary
bytes. Most fuzz cases go through the library (``load_profile_text`` then ``plan_workload``),
which is what the CLI runs, so thousands of cases stay fast; a smaller set goes through
``gpuplan recommend`` in-process to check the exit codes and the single stderr line end to end.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.hostile.conftest import (
    assert_input_error,
    assert_outcome,
    builtin_catalog,
    example_texts,
    hostile_values,
    log_floats,
    maybe_hostile,
    plan_text,
    run_cli,
    to_toml,
    twin,
)

_CAT = builtin_catalog()
PRESETS = sorted(_CAT.models)
GPU_NAMES = sorted(_CAT.gpus) + sorted(_CAT.aliases)
TYPOS = ["presett", "token", "qsp", "deadline", "precison", "allow_gpu", "gpus_per_node", "", "model.preset"]


def _optional(draw: Any, present: float, strategy: st.SearchStrategy[Any]) -> Any:
    """Draw a field value, or the marker ``None`` (left out) with probability 1 - present."""
    if draw(st.floats(0, 1)) < present:
        return draw(maybe_hostile(strategy))
    return None


def _table(draw: Any, spec: dict[str, tuple[float, st.SearchStrategy[Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (present, strategy) in spec.items():
        value = _optional(draw, present, strategy)
        if value is not None:
            out[name] = value
    if draw(st.integers(0, 24)) == 0:
        out[draw(st.sampled_from(TYPOS))] = draw(hostile_values())
    return out


@st.composite
def model_tables(draw: Any) -> dict[str, Any]:
    way = draw(st.sampled_from(["preset"] * 6 + ["params"] * 3 + ["arch"] * 3 + ["arch-moe"] * 2 + ["two", "none", "hf"]))
    m: dict[str, Any] = {}
    if way in ("preset", "two"):
        m["preset"] = draw(maybe_hostile(st.sampled_from(PRESETS)))
    if way in ("params", "two"):
        m["params"] = draw(maybe_hostile(log_floats(5e8, 2e12)))
    if way in ("arch", "arch-moe"):
        heads = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
        m["layers"] = draw(maybe_hostile(st.integers(1, 48)))
        m["hidden"] = draw(maybe_hostile(st.integers(1, 64).map(lambda k: k * heads * 8)))
        m["heads"] = draw(maybe_hostile(st.just(heads)))
        kv = draw(st.sampled_from([None, 1, heads, max(1, heads // 2), 3]))
        if kv is not None:
            m["kv_heads"] = kv
        for name, strategy in (("ffn", st.integers(1, 65536)), ("vocab", st.integers(1, 300_000)),
                               ("gated_mlp", st.booleans()), ("tied_embeddings", st.booleans()),
                               ("head_dim", st.sampled_from([32, 64, 128, 256])),
                               ("sliding_window", st.integers(1, 1 << 20))):
            if draw(st.integers(0, 3)) == 0:
                m[name] = draw(maybe_hostile(strategy))
        if way == "arch-moe":
            experts = draw(st.integers(0, 64))
            m["experts"] = draw(maybe_hostile(st.just(experts)))
            m["active_experts"] = draw(maybe_hostile(st.integers(1, max(1, experts))))
            if draw(st.booleans()):
                m["shared_experts"] = draw(maybe_hostile(st.integers(0, 2)))
            if draw(st.booleans()):
                m["dense_layers"] = draw(maybe_hostile(st.integers(0, 3)))
        if draw(st.integers(0, 5)) == 0:  # MLA
            m["kv_lora_rank"] = draw(maybe_hostile(st.integers(16, 512)))
            m["rope_head_dim"] = draw(maybe_hostile(st.sampled_from([32, 64])))
    if way == "hf":
        m["hf_config"] = draw(st.sampled_from(["missing.json", "", ".", "..", "/", "/dev/null", "/dev/zero",
                                               "../../../../etc/passwd", "config.json/", "a" * 4097]))
    if draw(st.integers(0, 9)) == 0:
        m["name"] = draw(maybe_hostile(st.text(max_size=120)))
    return m


@st.composite
def profiles(draw: Any, small: bool = False) -> dict[str, Any]:
    """A profile dict: usually plannable, often with one hostile field. ``small``: usually restricted
    to one or two GPUs, so that planning it is cheap (the CLI twins cannot restrict afterwards)."""
    p: dict[str, Any] = {}
    if draw(st.integers(0, 9)) == 0:
        p["name"] = draw(maybe_hostile(st.text(max_size=120)))
    if draw(st.integers(0, 29)) != 0:
        p["model"] = draw(model_tables())
    phases = draw(st.sampled_from(["training"] * 3 + ["serving"] * 3 + ["both"] * 3 + ["none"]))
    if phases in ("training", "both"):
        target = draw(st.sampled_from(["deadline_days"] * 3 + ["gpus"] * 2 + ["budget_usd", None, "two"]))
        spec = {
            "tokens": (0.97, log_floats(1e6, 2e13)),
            "sequence_length": (0.6, st.sampled_from([128, 1024, 2048, 4096, 8192, 32768, 131072])),
            "precision": (0.4, st.sampled_from(["bf16", "fp16", "fp8"] * 4 + ["fp4", "int8"])),
            "global_batch_tokens": (0.3, log_floats(1e3, 1e8)),
            "deadline_days": (1.0 if target in ("deadline_days", "two") else 0.0, log_floats(0.01, 3650)),
            "gpus": (1.0 if target in ("gpus", "two") else 0.0, st.integers(1, 4096)),
            "budget_usd": (1.0 if target == "budget_usd" else 0.0, log_floats(1e3, 1e10)),
        }
        p["training"] = _table(draw, spec)
    if phases in ("serving", "both"):
        spec = {
            "qps": (0.97, log_floats(1e-3, 1e4)),
            "prompt_tokens": (0.6, st.integers(1, 32768)),
            "output_tokens": (0.6, st.integers(1, 8192)),
            "context_length": (0.6, st.sampled_from([128, 2048, 4096, 8192, 32768, 131072])),
            "precision": (0.4, st.sampled_from(["bf16", "fp16", "fp8", "int8", "int4", "fp4"])),
            "kv_precision": (0.3, st.sampled_from(["bf16", "fp16", "fp8", "int8", "int4"])),
            "ttft_ms": (0.5, log_floats(1, 60_000)),
            "tpot_ms": (0.5, log_floats(1, 1000)),
            "latency_percentile": (0.3, st.sampled_from(["p50", "p90", "p99", "mean"])),
            "spare_replicas": (0.3, st.integers(0, 4)),
        }
        p["serving"] = _table(draw, spec)
    if small or draw(st.integers(0, 2)) == 0:
        spec = {
            "allow_vendors": (0.1 if small else 0.3, st.lists(st.sampled_from(["nvidia", "amd", "intel"]), min_size=1, max_size=3)),
            "allow_gpus": (0.9 if small else 0.3,
                           st.lists(st.sampled_from(GPU_NAMES), min_size=1, max_size=2 if small else 4)),
            "exclude_gpus": (0.2, st.lists(st.sampled_from(GPU_NAMES), max_size=3)),
            "pricing": (0.4, st.sampled_from(["capex", "cloud"])),
            "budget_usd": (0.2, log_floats(1e3, 1e11)),
            "power_limit_kw": (0.2, log_floats(1, 1e6)),
        }
        p["constraints"] = _table(draw, spec)
    if draw(st.integers(0, 29)) == 0:  # a scalar where a table belongs, or an unknown table
        p[draw(st.sampled_from(["model", "training", "serving", "constraints", "trainning", "extra"]))] = \
            draw(hostile_values())
    return p


def _profile_dict(p: dict[str, Any]) -> None:
    """A structured profile (mostly valid, one field in a dozen hostile) plans or fails cleanly."""
    with tempfile.TemporaryDirectory() as tmp:  # hf_config paths resolve next to the profile
        plan_text(to_toml(p), str(Path(tmp) / "fuzz.toml"))


test_profile_dict, test_profile_dict_slow = twin(_profile_dict, profiles(), fast=250)


@st.composite
def mutated_examples(draw: Any) -> str:
    lines = draw(st.sampled_from(example_texts())).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "insert", "replace-value", "char"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, max(0, len(lines[i]) - 1)))]
        elif op == "insert":
            lines.insert(i, draw(st.text(max_size=30)) + "\n")
        elif op == "replace-value" and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            value = draw(st.sampled_from(["0", "-1", "1e30", "-1e30", "nan", "inf", "-inf", "1e400", "9" * 30,
                                          '"x"', "[]", "{}", "true", "1979-05-27", "0x10", "1_000", "0.0"]))
            lines[i] = f"{key}= {value}\n"
        else:
            s = lines[i]
            k = draw(st.integers(0, len(s)))
            lines[i] = s[:k] + draw(st.sampled_from(["[", "]", "=", '"', "'", "\\", "#", "\x00", "\ufeff", " "])) + s[k:]
    return "".join(lines)


def _mutated_example(text: str) -> None:
    """A shipped example with lines deleted, duplicated, swapped, cut or rewritten."""
    plan_text(text, "mutated.toml")


test_mutated_example, test_mutated_example_slow = twin(_mutated_example, mutated_examples(), fast=200)


def _arbitrary_text(text: str) -> None:
    """Any text at all is refused with one line (or, rarely, is a profile)."""
    plan_text(text, "text.toml")


test_arbitrary_text, test_arbitrary_text_slow = twin(
    _arbitrary_text, st.one_of(st.text(max_size=200), st.text(alphabet="[]=\"'.#\n 1eabmodel", max_size=60)),
    fast=500)


def _arbitrary_bytes(data: bytes) -> None:
    """Any bytes on disk: encoding, BOM and NUL checks come before TOML."""
    from gpuplan.core.errors import InputError
    from gpuplan.model.profile import load_workload

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bytes.toml"
        path.write_bytes(data)
        try:
            load_workload(path, builtin_catalog())
        except InputError as exc:
            assert_input_error(exc)


_PREFIXES = [b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff", b"[model]\n", b"\xef\xbb\xbf\xef\xbb\xbf"]
test_arbitrary_bytes, test_arbitrary_bytes_slow = twin(
    _arbitrary_bytes, st.tuples(st.sampled_from(_PREFIXES), st.binary(max_size=120)).map(lambda t: t[0] + t[1]),
    fast=400)


def _cli_profile(p: dict[str, Any]) -> None:
    """End to end: ``gpuplan recommend FILE --format json`` exits 0, 1 or 2 with one error line."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cli.toml"
        path.write_text(to_toml(p), encoding="utf-8")
        r = run_cli("recommend", str(path), "--format", "json", cwd=tmp)
        assert_outcome(r, json_out=True)
        if r.code == 2:
            assert r.out == ""


test_cli_profile, test_cli_profile_slow = twin(_cli_profile, profiles(small=True), fast=60,
                                               slow_strategy=profiles())
