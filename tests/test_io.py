"""Safe reading and atomic writing."""

from __future__ import annotations

import os
import stat

import pytest
from pydantic import ValidationError

from gpuplan.core.errors import InputError
from gpuplan.core.io import parse_json, parse_toml, pydantic_error, write_atomic


@pytest.mark.parametrize("text,msg", [
    ('{"a": 1, "a": 2}', "duplicate key"),
    ('{"a": NaN}', "non-finite"),
    ('{"a": Infinity}', "non-finite"),
    ('{"a": ', "line 1, column"),
    ("[" * 100 + "]" * 100, "nesting deeper"),
])
def test_bad_json(text, msg):
    with pytest.raises(InputError, match=msg):
        parse_json(text, "x.json")


def test_deep_toml_is_refused():
    text = "a = " + "[" * 40 + "]" * 40
    with pytest.raises(InputError, match="nesting deeper"):
        parse_toml(text, "x.toml")


def test_toml_error_has_line_and_column():
    with pytest.raises(InputError) as info:
        parse_toml("a = 1\nb = = 2\n", "x.toml")
    assert "line 2, column" in str(info.value) and str(info.value).startswith("x.toml: ")


def test_write_atomic_replaces_and_protects_inputs(tmp_path):
    target = tmp_path / "out.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    with pytest.raises(InputError, match="overwrite an input"):
        write_atomic(target, "three", protect=[str(target)])
    assert target.read_text() == "two"
    with pytest.raises(InputError, match="directory does not exist"):
        write_atomic(tmp_path / "nope" / "x", "1")


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="POSIX file modes")
@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_write_atomic_gives_the_umask_mode(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "plan.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "plan.json").stat().st_mode) == mode


def test_unknown_key_is_named_before_the_required_one_it_misspells():
    from gpuplan.model.profile import Profile

    with pytest.raises(ValidationError) as info:
        Profile.model_validate({"model": {"preset": "llama-3.1-8b"}, "serving": {"qsp": 10}})
    err = pydantic_error(info.value, file="p.toml", known_fields={"serving": ["qps", "prompt_tokens"]})
    assert str(err) == "p.toml: serving.qsp: unknown field (did you mean 'qps'?)"


def test_an_unknown_key_with_no_close_match_lists_the_expected_keys():
    from gpuplan.model.profile import Profile

    with pytest.raises(ValidationError) as info:
        Profile.model_validate({"model": {"preset": "llama-3.1-8b"}, "x": 1})
    err = pydantic_error(info.value, file="p.toml", known_fields={"": list(Profile.model_fields)})
    assert str(err) == "p.toml: x: unknown field (expected one of: constraints, model, name, serving, training)"


@pytest.mark.parametrize("value,shown", [(3, "a number (3)"), ("x", "a string ('x')"), ([1], "an array"),
                                         (True, "a boolean")])
def test_a_value_where_a_table_belongs_says_a_table_was_expected(value, shown):
    from gpuplan.model.profile import Profile

    with pytest.raises(ValidationError) as info:
        Profile.model_validate({"model": value})
    assert str(pydantic_error(info.value, file="p.toml")) == f"p.toml: model: expected a table, got {shown}"


def test_a_long_list_of_expected_keys_is_cut():
    from gpuplan.core.errors import expected_one_of

    assert expected_one_of([f"k{i:02d}" for i in range(14)], limit=3) == " (expected one of: k00, k01, k02, and 11 more)"


def test_an_id_with_capitals_is_refused_with_its_lowercase_spelling():
    from gpuplan.model.profile import Profile

    with pytest.raises(ValidationError) as info:
        Profile.model_validate({"model": {"preset": "llama-3.1-70B"}, "serving": {"qps": 1}})
    assert str(pydantic_error(info.value, file="p.toml")) == (
        "p.toml: model.preset: expected a lowercase id (a-z, 0-9, '.', '_', '-'), got 'llama-3.1-70B' "
        "(did you mean 'llama-3.1-70b'?)")
