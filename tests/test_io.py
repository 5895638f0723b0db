"""Safe reading and atomic writing."""

from __future__ import annotations

import pytest

from gpuplan.errors import InputError
from gpuplan.io import parse_json, parse_toml, write_atomic


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
