"""Generated inputs for issue 14 ("untrusted pull requests"), fast and ``slow`` twins:

* control characters, line separators and escape sequences in keys, names and file names, in
  every input slot and every output format: one error line, safe outputs;
* special files (FIFOs, devices, directories, sockets) in every input slot: refused at once;
* overlay magnitudes across every ranged catalog figure: loaded and planned, or refused with one
  line naming the field; never an internal error.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from hypothesis import strategies as st

from gpuplan.hardware.plausible import RANGES
from gpuplan.render import FORMATS
from tests.hostile.conftest import assert_outcome, event, run_cli, toml_string, twin
from tests.hostile.test_injection import RAW, assert_safe_output
from tests.hostile.test_malformed_files import CASES, CLUSTER, HF_CONFIG, HF_PROFILE, SERVING_PROFILE, _plan_json

#: Characters that end or steer a line somewhere, and the text of a workflow command.
UNSAFE = "\n\r\v\f\x1b\x07\x1c\x1d\x1e\x85\x9b\u2028\u2029\u202e\x00\x7f"
PIECES = ["::error file=README.md,line=1::injected", "::warning::", "\x1b]0;t\x07", "\x1b[2J", "<script>", "[x](y)",
          "@all", "`", "|", "\\", "[/b]", "%0A"]


def hostile_text(max_size: int = 40) -> st.SearchStrategy[str]:
    chars = st.one_of(st.sampled_from(list(UNSAFE)), st.characters(blacklist_categories=("Cs",)))
    return st.lists(st.one_of(st.sampled_from(PIECES), chars, st.text(chars, max_size=4)), min_size=1,
                    max_size=8).map(lambda parts: "".join(parts)[:max_size])


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: a blocked open or read is interrupted after ``seconds``."""
    def fire(*_: Any) -> None:
        raise TimeoutError(f"gpuplan blocked for {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _write_inputs(tmp: Path) -> None:
    (tmp / "p.toml").write_text(SERVING_PROFILE)
    (tmp / "cluster.toml").write_text(CLUSTER)
    (tmp / "plan.json").write_text(_plan_json())
    (tmp / "cases.toml").write_text(CASES)
    (tmp / "hf").mkdir()
    (tmp / "hf" / "config.json").write_text(HF_CONFIG)
    (tmp / "hf" / "p.toml").write_text(HF_PROFILE)


# -- hostile keys, names and file names ----------------------------------------------------------

SLOTS = ["profile-key", "profile-name", "hf-key", "overlay-key", "overlay-name", "overlay-file", "cluster-key",
         "cluster-name", "plan-key", "cases-key", "profile-file"]


@st.composite
def hostile_cases(draw: Any) -> tuple[str, str, str]:
    return draw(st.sampled_from(SLOTS)), draw(hostile_text()), draw(st.sampled_from(sorted(FORMATS)))


def _hostile_strings(case: tuple[str, str, str]) -> None:
    """A hostile key, name or file name in one slot: exit 0, 1 or 2; one error line; safe output."""
    slot, text, fmt = case
    s = toml_string(text)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        _write_inputs(tmp)
        argv = ["recommend", "p.toml", "-f", fmt]
        if slot == "profile-key":
            (tmp / "p.toml").write_text(SERVING_PROFILE.replace("[serving]\n", f"[serving]\n{s} = 1\n", 1))
        elif slot == "profile-name":
            (tmp / "p.toml").write_text(SERVING_PROFILE.replace('"chat-8b-serving"', s))
        elif slot == "hf-key":
            (tmp / "hf" / "config.json").write_text("{" + f"{json.dumps(text)}: 1, " + HF_CONFIG.lstrip()[1:])
            argv = ["recommend", "hf/p.toml", "-f", fmt]
        elif slot in ("overlay-key", "overlay-name", "overlay-file"):
            (tmp / "ov").mkdir()
            name = "x.toml" if slot != "overlay-file" else (text.replace("/", "_").replace("\x00", "_") + ".toml")
            line = f"{s} = 1" if slot == "overlay-key" else f"name = {s}"
            try:
                (tmp / "ov" / name).write_text(f'[[gpu]]\nid = "h100-sxm-80gb"\n{line}\n')
            except (OSError, ValueError):
                event("file name refused by the file system")
                return
            argv += ["--catalog", "ov"]
        elif slot in ("cluster-key", "cluster-name"):
            extra = f"{s} = 1\n" if slot == "cluster-key" else ""
            cluster = CLUSTER.replace('"row-a"', s) if slot == "cluster-name" else CLUSTER + extra
            (tmp / "cluster.toml").write_text(cluster)
            argv = ["check", "p.toml", "--against", "cluster.toml", "-f",
                    fmt if fmt in ("table", "json", "markdown", "sarif", "junit", "github") else "json"]
        elif slot == "plan-key":
            (tmp / "plan.json").write_text("{" + f"{json.dumps(text)}: 1, " + _plan_json().lstrip()[1:])
            argv = ["render", "plan.json", "-f", fmt]
        elif slot == "cases-key":
            (tmp / "cases.toml").write_text(CASES.replace("[case.run]\n", f"[case.run]\n{s} = 1\n"))
            argv = ["validate", "cases.toml"]
        else:  # a file name on the command line that does not exist
            argv = ["recommend", "missing" + text.replace("\x00", "") + ".toml", "-f", fmt]
        r = run_cli(*argv, cwd=tmp)
        assert_outcome(r)
        assert not RAW.search(r.err.replace("\n", "")), repr(r.err)
        assert_safe_output(r.out, argv[argv.index("-f") + 1] if "-f" in argv else "table")
        event(f"exit {r.code}")


test_hostile_strings, test_hostile_strings_slow = twin(_hostile_strings, hostile_cases(), fast=60)


# -- special files in every slot -----------------------------------------------------------------

SPECIAL_SLOTS = ["profile", "hf-config", "against", "render", "diff", "graph", "plan-profile", "overlay", "cases"]
SPECIALS = ["fifo", "/dev/null", "/dev/zero", "/dev/stdin", "directory", "socket", "dangling"]


def _make_special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        try:
            sock.bind(str(path))
        finally:
            sock.close()
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere")
    else:
        path.symlink_to(kind)


def _special_files(case: tuple[str, str]) -> None:
    """A special file in one input slot is refused in one line, at once (never read, never waited on)."""
    slot, kind = case
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        _write_inputs(tmp)
        target = {"hf-config": tmp / "hf" / "special", "overlay": tmp / "ov" / "gpus" / "x.toml"}.get(slot,
                                                                                                     tmp / "special")
        target.parent.mkdir(parents=True, exist_ok=True)
        if slot == "socket" and len(str(target)) > 100:
            return
        try:
            _make_special(target, kind)
        except OSError:
            event("cannot make this special file here")
            return
        argv = {
            "profile": ["recommend", "special"],
            "hf-config": ["recommend", "hf/p.toml", "--allow-outside-paths"],
            "against": ["check", "p.toml", "--against", "special"],
            "render": ["render", "special"],
            "diff": ["diff", "plan.json", "special"],
            "graph": ["graph", "special", "--phase", "training"],
            "plan-profile": ["render", "plan.json", "--allow-outside-paths"],
            "overlay": ["catalog", "gpus", "--catalog", "ov"],
            "cases": ["validate", "special"],
        }[slot]
        if slot == "hf-config":
            (tmp / "hf" / "p.toml").write_text(HF_PROFILE.replace('"config.json"', '"special"'))
        if slot == "plan-profile":
            plan = json.loads(_plan_json())
            plan["profile"] = "special"
            (tmp / "plan.json").write_text(json.dumps(plan))
        with alarm(20):
            r = run_cli(*argv, cwd=tmp)
        if slot == "overlay" and kind in ("directory", "dangling"):
            assert_outcome(r)  # an empty directory named x.toml is not a file of the overlay
            return
        if slot == "plan-profile" and kind == "dangling":
            assert_outcome(r, allowed=(0,))  # a plan's missing profile only costs line numbers
            return
        assert_outcome(r, allowed=(2,))
        event(f"{slot}: {r.err.split(': ')[-1][:40]}")


test_special_files, test_special_files_slow = twin(
    _special_files, st.tuples(st.sampled_from(SPECIAL_SLOTS), st.sampled_from(SPECIALS)), fast=30, slow=200)


# -- overlay magnitudes --------------------------------------------------------------------------

#: Ranged GPU figures an overlay may set directly (RANGES keys that are Gpu fields).
GPU_FIELDS = ["memory_label_gb", "mem_bw_tb_per_s", "bf16_dense_tflops", "fp16_dense_tflops", "fp8_dense_tflops",
              "tf32_dense_tflops", "fp64_dense_tflops", "scaleup_uni_gb_per_s", "host_link_uni_gb_per_s", "tdp_w",
              "node_power_kw", "price_usd", "node_price_usd", "cloud_usd_per_gpu_hour",
              "reference_scaleout_gbit_per_gpu", "efficiency.matmul_bf16", "efficiency.mem_bw",
              "efficiency.scaleup_busbw", "scaleup_domain", "gpus_per_node"]
MAGNITUDES = [1e300, 1e-300, 1e30, 1e-30, 1e12, 1e-12, 1e6, 1e-6, 0.0, -1.0, 5e-324, 1.7e308]


def magnitude() -> st.SearchStrategy[float]:
    near_bounds = st.sampled_from([v for lo, hi, _ in RANGES.values() for v in (lo, hi, lo * 0.999, hi * 1.001)])
    return st.one_of(st.sampled_from(MAGNITUDES), near_bounds, st.floats(allow_nan=False, allow_infinity=False))


def _overlay_magnitude(case: tuple[str, float]) -> None:
    """One GPU figure at any magnitude: the plan comes out finite, or one line names the field."""
    field, value = case
    is_int = field in ("scaleup_domain", "gpus_per_node")
    if is_int:
        if abs(value) > 2**40:
            value = 2**40 if value > 0 else -1
        shown = str(int(value))
    else:
        shown = repr(float(value))
    line = (f"efficiency = {{ {field.split('.')[1]} = {shown} }}" if field.startswith("efficiency.")
            else f"{field} = {shown}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "ov").mkdir()
        (tmp / "ov" / "x.toml").write_text(f'[[gpu]]\nid = "h100-sxm-80gb"\n{line}\n')
        (tmp / "p.toml").write_text(SERVING_PROFILE.replace('allow_gpus = ["h100", "l40s"]', 'allow_gpus = ["h100"]'))
        r = run_cli("recommend", "p.toml", "-f", "json", "--catalog", "ov", cwd=tmp)
        assert_outcome(r, json_out=True)
        if r.code == 2:
            assert field.split(".")[-1] in r.err or "gpu[h100-sxm-80gb]" in r.err, r.err
        event(f"exit {r.code}")


test_overlay_magnitude, test_overlay_magnitude_slow = twin(
    _overlay_magnitude, st.tuples(st.sampled_from(GPU_FIELDS), magnitude()), fast=40)
