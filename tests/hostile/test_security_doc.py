"""docs/security.md states the limits gpuplan enforces: every number there must be the code's.

The limits table names each constant by its module path; the profile and cluster ranges are
compared with the schemas' own bounds. The oversize refusal is checked at the documented size.
"""

from __future__ import annotations

import importlib
import re

import pytest

from tests.hostile.conftest import ROOT, assert_outcome, run_cli

DOC = ROOT / "docs" / "security.md"
ROW = re.compile(r"^\| `(gpuplan(?:\.\w+)+)\.([A-Z_]+)` \| ([0-9][0-9,.e]*) \|", re.M)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _rows() -> list[tuple[str, str, str]]:
    return ROW.findall(DOC.read_text(encoding="utf-8"))


def test_the_limits_table_lists_every_max_constant():
    """Every MAX_ constant of the input, profile and catalog modules is in the table."""
    documented = {f"{module}.{name}" for module, name, _ in _rows()}
    for module in ("gpuplan.core.io", "gpuplan.model.profile", "gpuplan.hardware.loader"):
        mod = importlib.import_module(module)
        for name in dir(mod):
            if name.startswith("MAX_") and isinstance(getattr(mod, name), (int, float)):
                assert f"{module}.{name}" in documented, f"{module}.{name} is missing from docs/security.md"


@pytest.mark.parametrize("module,name,value", _rows(), ids=[f"{r[0]}.{r[1]}" for r in _rows()])
def test_each_documented_limit_is_the_code(module, name, value):
    assert getattr(importlib.import_module(module), name) == _number(value), f"{module}.{name}"


def _bounds(model: type, field: str) -> dict[str, float]:
    def walk(p: dict) -> dict[str, float]:
        out = {k: p[k] for k in ("minimum", "maximum", "exclusiveMinimum", "maxLength") if k in p}
        for sub in p.get("anyOf", []):
            out.update(walk(sub))
        return out

    return walk(model.model_json_schema()["properties"][field])


def _ranges() -> list[tuple[str, str, str, str]]:
    """(module, model, field, bound) and the text the document gives for it."""
    p = "gpuplan.model.profile"
    return [
        (p, "TrainingSection", "tokens", "minimum", "tokens 1e6 to 1e16"),
        (p, "TrainingSection", "tokens", "maximum", "tokens 1e6 to 1e16"),
        (p, "TrainingSection", "sequence_length", "minimum", "sequence and context length 128 to 2,097,152"),
        (p, "TrainingSection", "sequence_length", "maximum", "sequence and context length 128 to 2,097,152"),
        (p, "ServingSection", "context_length", "minimum", "sequence and context length 128 to 2,097,152"),
        (p, "ServingSection", "context_length", "maximum", "sequence and context length 128 to 2,097,152"),
        (p, "ServingSection", "prompt_tokens", "maximum", "prompt tokens up to 2,097,152"),
        (p, "ServingSection", "output_tokens", "maximum", "output tokens up to\n1,048,576"),
        (p, "ServingSection", "qps", "maximum", "QPS above 0 and up to 1e6"),
        (p, "ServingSection", "ttft_ms", "maximum", "latency targets up to 3.6e6 ms"),
        (p, "ServingSection", "tpot_ms", "maximum", "latency targets up to 3.6e6 ms"),
        (p, "TrainingSection", "gpus", "maximum", "training GPU\ncounts up to 1,048,576"),
        (p, "TrainingSection", "budget_usd", "maximum", "budgets up to $1e12"),
        (p, "ConstraintsSection", "budget_usd", "maximum", "budgets up to $1e12"),
        (p, "ConstraintsSection", "power_limit_kw", "maximum", "power limits up to 1e7 kW"),
        (p, "ServingSection", "spare_replicas", "maximum", "spare replicas up to 1,000"),
        (p, "TrainingSection", "global_batch_tokens", "minimum", "global batch tokens 1e3 to 1e10"),
        (p, "TrainingSection", "global_batch_tokens", "maximum", "global batch tokens 1e3 to 1e10"),
        (p, "TrainingSection", "deadline_days", "maximum", "deadlines up to 3,650 days"),
        (p, "ModelSection", "name", "maxLength", "names up to 100 characters"),
        (p, "ModelSection", "hf_config", "maxLength", "`hf_config` path up to 4,096 characters"),
        ("gpuplan.ci.check", "ClusterSpec", "gpus", "maximum", "allows up to 1,048,576 GPUs"),
        ("gpuplan.ci.check", "ClusterSpec", "nodes", "maximum", "or 131,072 nodes"),
        ("gpuplan.ci.check", "ClusterSpec", "oversubscription", "minimum", "oversubscription 1 to 64"),
        ("gpuplan.ci.check", "ClusterSpec", "oversubscription", "maximum", "oversubscription 1 to 64"),
        ("gpuplan.ci.check", "ClusterSpec", "nic_gbit_per_gpu", "maximum", "NIC bandwidth\nup to 100,000 Gb/s"),
    ]


@pytest.mark.parametrize("module,model,field,bound,text", _ranges(),
                         ids=[f"{r[1]}.{r[2]}.{r[3]}" for r in _ranges()])
def test_documented_ranges_are_the_schemas(module, model, field, bound, text):
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    assert " ".join(text.split()) in doc, f"docs/security.md no longer says {text!r}"
    numbers = [_number(n) for n in re.findall(r"\d[\d,]*(?:\.\d+)?(?:e\d+)?", text.replace("$", ""))]
    actual = _bounds(getattr(importlib.import_module(module), model), field)[bound]
    assert actual in numbers, f"{model}.{field} {bound} is {actual}, docs/security.md says {text!r}"


@pytest.mark.parametrize("extra,expected", [(0, 0), (1, 2)], ids=["at-the-limit", "one-byte-over"])
def test_the_documented_size_is_where_refusal_starts(tmp_path, extra, expected):
    """A profile of exactly the documented size is read; one byte more is refused, naming the size."""
    size = int(_number(dict(((m, n), v) for m, n, v in _rows())[("gpuplan.core.io", "MAX_INPUT_BYTES")]))
    head = '[model]\npreset = "llama-3.1-8b"\n[serving]\nqps = 1\n[constraints]\nallow_gpus = ["h100"]\n#'
    data = head.encode() + b"x" * (size + extra - len(head) - 1) + b"\n"
    assert len(data) == size + extra
    (tmp_path / "p.toml").write_bytes(data)
    r = run_cli("recommend", str(tmp_path / "p.toml"), "--format", "json", cwd=tmp_path)
    if expected == 0:
        assert_outcome(r, allowed=(0, 1), json_out=True)
    else:
        assert_outcome(r, allowed=(2,))
        assert f"file is {size + 1} bytes, larger than the {size}-byte limit" in r.err, r
