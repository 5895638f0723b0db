"""Numbers as people write them: SI suffixes on counts, a unit in a string gets the number to
write, a count in billions gets "did you mean 70e9", and one index notation in every message."""

from __future__ import annotations

import re

import pytest

from gpuplan.core.errors import field_path, unit_hint
from gpuplan.model.profile import load_profile_text
from gpuplan.core.types import SI_PATTERN, si_number

HEAD = '[model]\npreset = "llama-2-7b"\n'


@pytest.mark.parametrize("text,expected", [
    ("70B", 70e9), ("1T", 1e12), ("15t", 15e12), ("1.5T", 1.5e12), (" 4M ", 4e6), ("2k", 2e3), ("8K", 8e3),
    (".5B", 5e8), ("1e3G", 1e12), ("2P", 2e15), ("70b", 70e9),
])
def test_si_suffixes_are_exact(text, expected):
    assert si_number(text) == expected
    assert re.match(SI_PATTERN, text)


@pytest.mark.parametrize("text", ["1m", "70", "B", "70 BB", "1e12", "ten", "1Ti", "5%"])
def test_anything_else_is_left_to_the_field(text):
    assert si_number(text) == text


def test_counts_take_si_suffixes_in_a_profile(catalog):
    w = load_profile_text('[model]\nparams = "70B"\n[training]\ntokens = "1T"\nglobal_batch_tokens = "4M"\n'
                          'budget_usd = "50M"\n', "p.toml", catalog)
    assert w.arch.total_params == pytest.approx(70e9, rel=0.05)
    assert w.training is not None
    assert (w.training.tokens, w.training.global_batch_tokens, w.training.budget_usd) == (1e12, 4e6, 50e6)


@pytest.mark.parametrize("body,field,expected", [
    ('[serving]\nqps = "10/s"\n', "serving.qps", "expected a number of requests per second, got '10/s': write qps = 10"),
    ('[serving]\nqps = "600 rpm"\n', "serving.qps", "write qps = 10"),
    ('[serving]\nqps = 1\nttft_ms = "2s"\n', "serving.ttft_ms", "expected a number of milliseconds, got '2s': write ttft_ms = 2000"),
    ('[serving]\nqps = 1\ntpot_ms = "50 ms"\n', "serving.tpot_ms", "write tpot_ms = 50"),
    ('[training]\ntokens = 1e12\ndeadline_days = "2 weeks"\n', "training.deadline_days", "write deadline_days = 14"),
    ('[serving]\nqps = 1\n[constraints]\npower_limit_kw = "2MW"\n', "constraints.power_limit_kw", "write power_limit_kw = 2000"),
    ('[serving]\nqps = 1\n[constraints]\nbudget_usd = "$5M"\n', "constraints.budget_usd", "write budget_usd = 5e6"),
    ('[serving]\nqps = 1\ncontext_length = "8k"\n', "serving.context_length", "write context_length = 8192 or 8000"),
    ('[training]\ntokens = "1T tokens"\n', "training.tokens", "write tokens = 1e12"),
    ('[serving]\nqps = "10 parsecs"\n', "serving.qps", "units it converts: /h, /min, /s"),
    ('[serving]\nqps = "fast"\n', "serving.qps", "valid number"),
])
def test_a_unit_in_a_string_gets_the_number_to_write(cli, tmp_path, body, field, expected):
    path = tmp_path / "p.toml"
    path.write_text(HEAD + body)
    r = cli("recommend", str(path), "--format", "json")
    assert r.code == 2 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert f": {field}: " in r.err and expected in r.err, r.err


@pytest.mark.parametrize("body,expected", [
    ("[model]\nparams = 70\n[serving]\nqps = 1\n", 'did you mean 70e9 or "70B"?'),
    (HEAD + "[training]\ntokens = 15\n", 'did you mean 15e12 ("15T") or 15e9 ("15B")?'),
    (HEAD + "[training]\ntokens = 1e12\nglobal_batch_tokens = 4\n", 'did you mean 4e6 or "4M"?'),
])
def test_a_count_in_billions_gets_did_you_mean(cli, tmp_path, body, expected):
    path = tmp_path / "p.toml"
    path.write_text(body)
    r = cli("recommend", str(path))
    assert r.code == 2 and expected in r.err, r.err


def test_one_index_notation(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(HEAD + '[serving]\nqps = 1\n[constraints]\nallow_vendors = ["nvidia", "nvdia"]\n')
    r = cli("recommend", str(path))
    assert r.code == 2
    assert "constraints.allow_vendors[1]: " in r.err and "did you mean 'nvidia'?" in r.err, r.err
    assert field_path(["case[x].run", "layers", 0, "name"]) == "case[x].run.layers[0].name"
    assert field_path([3]) == "[3]"


def test_unit_hint_needs_a_leading_number():
    assert unit_hint("qps", "ten per second") is None
    assert unit_hint("prompt_tokens", "1k") == ("expected a number of tokens, got '1k': write prompt_tokens = 1024 or "
                                                "1000 (a length has no suffix: 'k' may mean 1000 or 1024)")


def test_a_power_cap_written_with_its_unit_says_what_to_write():
    """``gpu_power_cap_w = "350W"`` (a reviewer's first try) names the number to write; a cap in
    kilowatts converts to watts."""
    assert unit_hint("gpu_power_cap_w", "350W") == ("expected a number of watts, got '350W': write "
                                                    "gpu_power_cap_w = 350 (a number, no quotes)")
    assert unit_hint("gpu_power_cap_w", "0.5 kW").endswith("write gpu_power_cap_w = 500 (a number, no quotes)")
    # Kilowatt fields keep their own unit.
    assert unit_hint("power_limit_kw", "500 W").endswith("write power_limit_kw = 0.5 (a number, no quotes)")
