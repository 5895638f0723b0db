"""A catalog overlay written against the old, unit-misleading key names (``mem_bw_tbps``, the
``_gbps`` keys, ``memory_gib``) is refused with exactly one line naming the file, the record, the
old key and the new one, never "unknown field" or "missing field" (docs/catalog.md, "Renamed keys").

rename-keys: skip-file  (these tests spell the old names on purpose)
"""

from __future__ import annotations

import pytest

from gpuplan.hardware.loader import load_catalog
from gpuplan.hardware.renamed import RENAMED
from gpuplan.hardware.schema import Gpu, Part
from gpuplan.core.errors import InputError
from tests.hostile.conftest import EXAMPLES, assert_outcome, run_cli

SERVING_PROFILE = (EXAMPLES / "chat-8b-serving.toml").read_text(encoding="utf-8")
MODELS = {"gpu": Gpu, "part": Part}
OLD_KEYS = [(kind, old, new, unit) for kind, table in RENAMED.items() for old, (new, unit) in table.items()]


def _overlay(tmp_path, kind: str, old: str, ident: str) -> str:
    root = tmp_path / "overlay"
    root.mkdir(exist_ok=True)
    (root / "my.toml").write_text(f'[[{kind}]]\nid = "{ident}"\n{old} = 80.0\n', encoding="utf-8")
    return str(root)


def test_the_documented_example_line(tmp_path):
    """The exact line of docs/catalog.md: file, record, old key, new key and unit, exit 2."""
    overlay = _overlay(tmp_path, "gpu", "mem_bw_tbps", "h100-sxm-80gb")
    r = run_cli("catalog", "gpus", "--catalog", overlay)
    assert r.code == 2, r
    assert r.err == (f"gpuplan: error: {overlay}/my.toml: gpu[h100-sxm-80gb].mem_bw_tbps: "
                     "renamed to mem_bw_tb_per_s (TB/s)\n"), r


@pytest.mark.parametrize("kind,old,new,unit", OLD_KEYS, ids=[o for _, o, _, _ in OLD_KEYS])
def test_every_old_key_is_one_line_with_the_new_name(tmp_path, kind, old, new, unit):
    ident = "h100-sxm-80gb" if kind == "gpu" else "nvme-pfs-block-2u"
    overlay = _overlay(tmp_path, kind, old, ident)
    (tmp_path / "p.toml").write_text(SERVING_PROFILE, encoding="utf-8")
    for args in (("catalog", f"{kind}s"), ("recommend", str(tmp_path / "p.toml"), "--format", "json")):
        r = run_cli(*args, "--catalog", overlay)
        assert_outcome(r, allowed=(2,))
        assert r.err.count("\n") == 1, r
        assert f"my.toml: {kind}[{ident}].{old}: renamed to {new} ({unit})" in r.err, r


def test_a_new_record_with_an_old_key_names_the_rename_not_missing_fields(tmp_path):
    """A whole new GPU written from an old template: the rename comes first, not a list of
    missing fields."""
    overlay = _overlay(tmp_path, "gpu", "scaleup_uni_gbps", "lab-gpu")
    r = run_cli("catalog", "gpus", "--catalog", overlay, env={"GPUPLAN_CATALOG": ""})
    assert_outcome(r, allowed=(2,))
    assert "my.toml: gpu[lab-gpu].scaleup_uni_gbps: renamed to scaleup_uni_gb_per_s (GB/s)" in r.err, r


def test_the_library_raises_an_input_error_naming_file_and_field(tmp_path):
    overlay = _overlay(tmp_path, "gpu", "memory_gib", "h100-sxm-80gb")
    with pytest.raises(InputError) as err:
        load_catalog([overlay])
    assert err.value.file.endswith("my.toml")
    assert err.value.field == "gpu[h100-sxm-80gb].memory_gib"
    assert err.value.message == "renamed to memory_label_gb (the vendor's label)"


@pytest.mark.parametrize("kind,old,new,unit", OLD_KEYS, ids=[o for _, o, _, _ in OLD_KEYS])
def test_the_rename_table_matches_the_schema(kind, old, new, unit):
    """Each new key is a field of its record and each old key is not (a table entry that no
    longer matches the schema would send users to a key that does not exist)."""
    fields = MODELS[kind].model_fields
    assert new in fields and old not in fields
    assert unit in {"GB/s", "TB/s", "the vendor's label"}
