"""The public API: the docs/api.md example runs as written, and its answers are the CLI's."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _example() -> str:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return blocks[-1]


def test_the_documented_what_if_loop_runs():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_example(), "docs/api.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert [line.split(" req/s")[0].strip() for line in lines] == ["10", "20", "40"]
    assert all(re.fullmatch(r" *\d+ req/s: \d+ x [a-z0-9-]+", line) for line in lines), lines


def test_each_what_if_fleet_carries_its_load():
    from gpuplan import load_catalog, load_profile, plan

    catalog = load_catalog()
    for qps in (10, 40):
        serving = plan(load_profile(catalog=catalog, overrides={"serving.qps": qps}), catalog, phases=["serving"]).serving
        assert serving.max_qps >= qps


def test_public_names_and_the_cli_agree():
    from gpuplan import Plan, load_catalog, load_profile, plan
    from gpuplan.core.stable_json import to_json

    catalog = load_catalog()
    result = plan(load_profile(ROOT / "examples" / "chat-8b-serving.toml", catalog), catalog)
    assert isinstance(result, Plan) and result.training is None and result.serving is not None
    assert to_json(result) == to_json(plan(load_profile(ROOT / "examples" / "chat-8b-serving.toml", catalog), catalog))


def test_an_override_is_validated_like_the_file():
    from gpuplan import load_profile
    from gpuplan.core.errors import InputError

    with pytest.raises(InputError) as err:
        load_profile(overrides={"serving.qps": -1})
    assert "serving.qps" in err.value.one_line()
