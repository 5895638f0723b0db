"""Property: any command line, cluster file or saved plan gives a result, a failed gate or one
clear error line; never a traceback or exit 3, and never a file outside the working directory.

* argv: every command (recommend, validate, schema, catalog, render, check, diff, tf-external)
  with its positionals drawn from prepared files (valid, invalid, binary, directory, missing) and
  random flags, values, repeated or missing values and junk tokens. Each example runs in a fresh
  directory; junk tokens contain no path separator, so ``-o`` can only write there.
* cluster files for ``gpuplan check --against`` (TOML and JSON): every field, hostile values.
* saved plans for ``gpuplan render`` / ``diff``: the synthetic plan with fields changed, dropped,
  added or given hostile values, rendered in every format.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.hostile.conftest import (
    assert_outcome,
    event,
    hostile_values,
    maybe_hostile,
    run_cli,
    to_toml,
    twin,
)

GOOD = ('[model]\npreset = "llama-3.1-8b"\n[training]\ntokens = 1e10\n[serving]\nqps = 5\n'
        '[constraints]\nallow_gpus = ["h100", "mi300x"]\n')
BAD = '[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = -1\n'
CLUSTER = 'phase = "serving"\ngpu = "h100"\ngpus = 8\n'
CASES = ('[[case]]\nid = "x"\nkind = "serving"\nsource = "s"\ntolerance = 0.2\n[case.model]\npreset = "llama-2-7b"\n'
         '[case.run]\ngpu = "a100-sxm-80gb"\ngpus = 1\ntp = 1\nprecision = "bf16"\nbatch = 1\nprompt_tokens = 5\n'
         'output_tokens = 200\n[case.measured]\ndecode_tokens_per_s = 104.9\n')
HF = json.dumps({"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8})


def _synthetic_plan() -> dict[str, Any]:
    from gpuplan.render.json_ import to_json
    from tests.render.fixtures import synthetic_plan

    return json.loads(to_json(synthetic_plan()))


PLAN = _synthetic_plan()


def _fixtures(root: Path) -> None:
    (root / "good.toml").write_text(GOOD)
    (root / "bad.toml").write_text(BAD)
    (root / "cluster.toml").write_text(CLUSTER)
    (root / "cases.toml").write_text(CASES)
    (root / "plan.json").write_text(json.dumps(PLAN))
    (root / "config.json").write_text(HF)
    (root / "hf.toml").write_text('[model]\nhf_config = "config.json"\n[serving]\nqps = 1\n'
                                  '[constraints]\nallow_gpus = ["h100"]\n')
    (root / "bin.dat").write_bytes(bytes(range(256)))
    (root / "dir").mkdir()
    (root / "overlay").mkdir()
    (root / "overlay" / "p.toml").write_text('[[gpu]]\nid = "h100-sxm-80gb"\nprice_usd = 20000.0\n')


FILES = ["good.toml", "bad.toml", "cluster.toml", "cases.toml", "plan.json", "config.json", "hf.toml", "bin.dat",
         "dir", "overlay", "missing.toml", "-", ""]
FORMATS = ["table", "json", "markdown", "tfvars", "tf-external", "sarif", "junit", "github", "html", "yaml", "",
           "JSON", "json "]
OUTS = ["out.txt", "o.json", "", "-", ".", "..", "dir", "nodir/x.json", "good.toml", "plan.json", "cluster.toml",
        "overlay", ".hidden"]
NUMBERS = ["10", "0", "-5", "nan", "inf", "1e400", "abc", "", "9" * 5000]
JUNK = st.text(st.characters(blacklist_characters="/\\", blacklist_categories=("Cs",)), max_size=12)


def _path(draw: Any, root: Path, choices: list[str] = FILES) -> str:
    name = draw(st.sampled_from(choices))
    return name if name in ("-", "") else str(root / name)


@st.composite
def command_lines(draw: Any) -> tuple[list[str], str]:
    """(argv with {ROOT} placeholders, stdin text)."""
    root = Path("{ROOT}")
    cmd = draw(st.sampled_from(["recommend"] * 4 + ["validate", "schema", "catalog", "render", "render", "check",
                                                   "check", "diff", "tf-external", "--version", "--help", "junk"]))
    argv: list[str]
    if cmd == "recommend":
        argv = ["recommend"] + ([] if draw(st.integers(0, 39)) == 0 else [_path(draw, root)])
    elif cmd == "validate":
        argv = ["validate"] + [_path(draw, root) for _ in range(draw(st.integers(0, 2)))]
    elif cmd == "catalog":
        argv = ["catalog", draw(st.sampled_from(["gpus", "fabrics", "switches", "nics", "optics", "models", "gpu",
                                                 ""]))]
        if draw(st.booleans()):
            argv.append(draw(st.one_of(st.sampled_from(["h100", "ib-ndr", "llama-2-7b", "h1000"]), JUNK)))
    elif cmd == "render":
        argv = ["render", _path(draw, root, ["plan.json"] * 4 + FILES)]
    elif cmd == "check":
        argv = ["check", _path(draw, root, ["good.toml"] * 3 + FILES), "--against",
                _path(draw, root, ["cluster.toml"] * 3 + FILES)]
    elif cmd == "diff":
        argv = ["diff", _path(draw, root, ["plan.json", "good.toml"] + FILES),
                _path(draw, root, ["plan.json", "good.toml"] + FILES)]
    elif cmd == "junk":
        argv = [draw(JUNK)]
    else:
        argv = [cmd]
    for _ in range(draw(st.integers(0, 5))):
        flag = draw(st.sampled_from(["--format", "-f", "-o", "--out", "--output", "--phase", "--catalog", "-q",
                                     "--quiet", "-v", "-vvv", "--no-color", "--exit-zero", "--kind", "--fail-on",
                                     "--max-capex-increase-pct", "--against", "--help", "--", "-", "--version",
                                     "junk"]))
        if flag in ("--format", "-f"):
            argv += [flag, draw(st.sampled_from(FORMATS))]
        elif flag in ("-o", "--out"):
            argv += [flag, _path(draw, root, OUTS)]
        elif flag == "--output":
            argv += [flag, draw(st.sampled_from(FORMATS)) + draw(st.sampled_from([":", "", "::"]))
                     + _path(draw, root, OUTS)]
        elif flag == "--phase":
            argv += [flag, draw(st.sampled_from(["training", "serving", "both", "inference", ""]))]
        elif flag == "--catalog":
            argv += [flag, _path(draw, root, ["overlay", "overlay", "dir", "missing.toml", "good.toml"])]
        elif flag == "--kind":
            argv += [flag, draw(st.sampled_from(["plan", "profile", "cluster", ""]))]
        elif flag == "--fail-on":
            argv += [flag, draw(st.sampled_from(["error", "warning", "info", ""]))]
        elif flag == "--max-capex-increase-pct":
            argv += [flag, draw(st.sampled_from(NUMBERS))]
        elif flag == "--against":
            argv += [flag, _path(draw, root, ["cluster.toml"] + FILES)]
        elif flag == "junk":
            argv.append(draw(st.one_of(JUNK, JUNK.map(lambda t: "--" + t), JUNK.map(lambda t: "-" + t))))
        else:
            argv.append(flag)
        if draw(st.integers(0, 9)) == 0 and len(argv) > 1:  # a flag without its value, or a repeated token
            i = draw(st.integers(1, len(argv) - 1))
            argv.insert(i, argv[i]) if draw(st.booleans()) else argv.pop(i)
    stdin = ""
    if cmd == "tf-external":
        stdin = draw(st.sampled_from([
            json.dumps({"profile": "{ROOT}/good.toml", "phase": "serving"}),
            json.dumps({"profile": "{ROOT}/good.toml", "phase": "both", "catalog": "{ROOT}/overlay"}),
            json.dumps({"profile": "{ROOT}/bad.toml"}), json.dumps({"profile": "{ROOT}/missing.toml"}),
            json.dumps({"profile": 1}), json.dumps({"profil": "x"}), json.dumps({"profile": ""}), "[]", "",
            "{", '{"profile": "a", "profile": "b"}', '{"profile": NaN}', "x" * 2000,
        ]))
    return argv, stdin


def _command_line(case: tuple[list[str], str]) -> None:
    """Random flags, values and files for every command."""
    argv, stdin = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "in"
        work = Path(tmp) / "work"
        root.mkdir()
        work.mkdir()
        _fixtures(root)
        before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
        args = [a.replace("{ROOT}", str(root)) for a in argv]
        r = run_cli(*args, cwd=work, stdin=stdin.replace("{ROOT}", str(root)))
        assert_outcome(r)
        event(f"{argv[0] if argv else '-'}: exit {r.code}")
        leftovers = [p for p in Path(tmp).rglob("*.tmp")]
        assert not leftovers, leftovers
        # a file read as input (positional argument or --against) is never overwritten
        for p in _inputs(args):
            if p in before:
                assert p.read_bytes() == before[p], f"input {p} was overwritten: {args}"


VALUE_FLAGS = {"--format", "-f", "-o", "--out", "--output", "--phase", "--catalog", "--kind", "--fail-on",
               "--max-capex-increase-pct", "--against"}


def _inputs(args: list[str]) -> set[Path]:
    out: set[Path] = set()
    for i, a in enumerate(args[1:], start=1):
        prev = args[i - 1]
        if prev == "--against" or (not a.startswith("-") and prev not in VALUE_FLAGS):
            out.add(Path(a))
    return out


test_command_line, test_command_line_slow = twin(_command_line, command_lines(), fast=100)


# -- cluster files for `gpuplan check` -----------------------------------------------------------

GPU_NAMES = ["h100", "h100-sxm-80gb", "a100", "mi300x", "gb200", "l40s", "t4", "gaudi3", "h1000", ""]


def _edge(valid: list[Any], invalid: list[Any]) -> st.SearchStrategy[Any]:
    """A valid value, one draw in ten a value just past the limits."""
    return st.integers(0, 9).flatmap(lambda i: st.sampled_from(invalid if i == 0 else valid))


@st.composite
def clusters(draw: Any) -> tuple[str, dict[str, Any]]:
    c: dict[str, Any] = {}
    spec = {
        "name": (0.3, st.text(max_size=20)),
        "phase": (0.9, _edge(["training", "serving"], ["inference", "Training", ""])),
        "gpu": (0.97, _edge(GPU_NAMES[:8], GPU_NAMES[8:])),
        "fabric": (0.3, _edge(["ib-ndr", "ib-xdr", "ethernet-400g"], ["roce", ""])),
        "nic_gbit_per_gpu": (0.3, _edge([0, 100, 200, 400, 800, 1600, 100_000], [100_001, -1])),
        "oversubscription": (0.2, _edge([1, 1.0, 2, 64], [65, 0.5])),
        "budget_usd": (0.2, _edge([1.0, 1e6, 1e9, 1e12], [1e13, 0])),
        "power_limit_kw": (0.2, _edge([0.001, 10.0, 1e4, 1e7], [1e8, -1])),
    }
    for name, (p, strategy) in spec.items():
        if draw(st.floats(0, 1)) < p:
            c[name] = draw(maybe_hostile(strategy, one_in=20))
    size = draw(st.sampled_from(["gpus"] * 5 + ["nodes"] * 3 + ["both", "none"]))
    if size in ("gpus", "both"):
        c["gpus"] = draw(maybe_hostile(_edge([1, 2, 7, 8, 64, 1000, 16384, 1_048_576], [0, 1_048_577]), one_in=20))
    if size in ("nodes", "both"):
        c["nodes"] = draw(maybe_hostile(_edge([1, 2, 16, 512, 131_072], [0, 131_073]), one_in=20))
    if draw(st.integers(0, 19)) == 0:
        c[draw(st.sampled_from(["gpuss", "node", "phase ", "extra"]))] = draw(hostile_values())
    return draw(st.sampled_from(["toml", "toml", "json"])), c


CHECK_PROFILE = ('[model]\npreset = "llama-3.1-8b"\n[training]\ntokens = 1e10\ndeadline_days = 30\n'
                 '[serving]\nqps = 5\n[constraints]\nbudget_usd = 1e8\n')


def _cluster(case: tuple[str, dict[str, Any]]) -> None:
    """A proposed cluster with every field, hostile values, both syntaxes."""
    syntax, cluster = case
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "p.toml").write_text(CHECK_PROFILE)
        path = Path(tmp) / f"cluster.{syntax}"
        if syntax == "json":
            path.write_text(json.dumps(cluster, allow_nan=True, default=str))
        else:
            path.write_text(to_toml(cluster))
        r = run_cli("check", str(Path(tmp) / "p.toml"), "--against", str(path), "--format", "json", cwd=tmp)
        assert_outcome(r, json_out=True)
        event(f"check exit {r.code}")


test_cluster, test_cluster_slow = twin(_cluster, clusters(), fast=60)


# -- saved plans for `gpuplan render` and `gpuplan diff` --------------------------------------------

def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, path + (k,))] + ([path] if path else [])
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, path + (i,))] + ([path] if path else [])
    return [path]


PLAN_PATHS = _leaves(PLAN)
INJECTION = ["<script>alert(1)</script>", "]]></x>", "\u202e", "`rm -rf /`", "|x|\n|---|", "::error::x",
             "%0A::set-output", "${{ secrets.TOKEN }}", "\x1b[31mred", "a" * 5000, "'\"", "<!-- gpuplan-diff -->"]


@st.composite
def plans(draw: Any) -> tuple[str, str]:
    plan = copy.deepcopy(PLAN)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(PLAN_PATHS))
        parent = plan
        try:
            for key in path[:-1]:
                parent = parent[key]
            old = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue
        how = draw(st.sampled_from(["hostile", "scale", "scale", "drop", "inject", "inject", "inject", "inject"]))
        if how == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif how == "scale" and isinstance(old, (int, float)) and not isinstance(old, bool):
            factor = draw(st.sampled_from([0, -1, 1e-9, 1e9, 1e300]))
            parent[path[-1]] = type(old)(old * factor) if factor != 1e300 or isinstance(old, float) else 10**30
        elif how == "inject" and isinstance(old, str):
            parent[path[-1]] = draw(st.sampled_from(INJECTION))
        else:
            parent[path[-1]] = draw(hostile_values())
    fmt = draw(st.sampled_from(["table", "json", "markdown", "tfvars", "tf-external", "sarif", "junit", "github",
                                "html"]))
    return json.dumps(plan, allow_nan=True, default=str), fmt


def _saved_plan(case: tuple[str, str]) -> None:
    """A saved plan with fields changed, dropped or injected, rendered in every format and diffed."""
    text, fmt = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.json"
        path.write_text(text)
        r = run_cli("render", str(path), "--format", fmt, cwd=tmp)
        assert_outcome(r, json_out=fmt == "json")
        event(f"render exit {r.code}")
        if r.code == 0 and fmt == "html":
            assert "<script>alert(1)</script>" not in r.out, "unescaped input in HTML output"
        if r.code == 0 and fmt == "github":
            for line in r.out.splitlines():  # no workflow command smuggled in by a value
                assert not line.startswith("::set-output") and "\n::error::x" not in line
        if r.code == 0 and fmt in ("table", "json"):
            (Path(tmp) / "base.json").write_text(json.dumps(PLAN))
            d = run_cli("diff", str(Path(tmp) / "base.json"), str(path), "--format",
                        "markdown" if fmt == "table" else "json", cwd=tmp)
            assert_outcome(d)


test_saved_plan, test_saved_plan_slow = twin(_saved_plan, plans(), fast=100)
