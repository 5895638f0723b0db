"""Tables fit COLUMNS or the terminal: cells wrap at whole words, a word longer than its column is
cut with '…', a long list column folds under its row, and numbers are never cut."""

from __future__ import annotations

import pytest

from gpuplan.render.text import table

KINDS = ("gpus", "fabrics", "switches", "nics", "optics", "models")


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("kind,columns", [(k, 100) for k in KINDS] + [(k, 80) for k in KINDS if k != "gpus"])
def test_catalog_listings_fit_columns(cli, monkeypatch, kind, columns):
    """(The GPU list's ids and figures alone take 87 columns: below that its lines are wider.)"""
    monkeypatch.setenv("COLUMNS", str(columns))
    r = cli("catalog", kind)
    assert r.code == 0 and r.err == ""
    assert _widest(r.out) <= columns, r.out


def test_catalog_gpus_at_100_columns_keeps_every_id_and_source_whole(cli, monkeypatch, catalog):
    monkeypatch.setenv("COLUMNS", "100")
    out = cli("catalog", "gpus").out
    assert "…" not in out
    words = set(out.replace(",", " ").split())
    for gpu in catalog.gpus.values():
        assert gpu.id in words
        assert set(gpu.sources.values()) <= words, gpu.id


def test_catalog_show_fits_columns(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = cli("catalog", "gpus", "h100").out
    assert all(len(line) <= 80 or "://" in line for line in out.splitlines()), out


def test_a_pipe_without_columns_is_not_cut(cli, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert _widest(cli("catalog", "gpus").out) > 200


@pytest.mark.parametrize("columns", [100, 80])
def test_the_report_fits_columns(cli, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    r = cli("recommend", "examples/chat-8b-serving.toml", "-v")
    assert r.code == 0
    assert _widest(r.out) <= columns


def test_cells_wrap_at_whole_words_and_long_words_get_an_ellipsis():
    text = table(["id", "note", "n"], [["a", "one two three four five", 12345],
                                       ["b", "supercalifragilistic", 7]], right={2}, width=20)
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= 20
    notes = " ".join(line[3:].rsplit(maxsplit=1)[0] if line.rstrip()[-1:].isdigit() else line[3:]
                     for line in lines[2:]).split()
    assert {"one", "two", "three", "four", "five"} <= set(notes)
    assert any(w.endswith("…") and "supercal".startswith(w[:3]) for w in notes)
    assert "12345" in text  # numbers are never cut


def test_without_width_nothing_changes():
    rows = [["a", "x" * 300, 1]]
    assert table(["id", "note", "n"], rows) == table(["id", "note", "n"], rows, width=None)
    assert _widest(table(["id", "note", "n"], rows)) > 300


def test_a_fold_column_moves_under_its_row_only_when_too_wide():
    rows = [["h100", "nvidia", "src-a, src-b, src-c"]]
    assert table(["id", "vendor", "sources"], rows, width=80, fold=2).splitlines()[0].split() == \
        ["id", "vendor", "sources"]
    narrow = table(["id", "vendor", "sources"], rows, width=20, fold=2).splitlines()
    assert narrow[0].split() == ["id", "vendor"]
    assert narrow[3:] == ["  sources: src-a,", "  src-b, src-c"]


def test_bom_tiers_are_whole_at_100_columns(cli, monkeypatch):
    """The tier tells a leaf switch from a spine one and a node-leaf optic from a leaf-spine one:
    cut to 'compute-…' (as it was), the 480-GPU BOM's qm9700 and osfp rows read as duplicates."""
    import json

    monkeypatch.setenv("COLUMNS", "100")
    out = cli("recommend", "examples/llama-70b-480-h100.toml", "--section", "bom", "-v").out
    assert _widest(out) <= 100
    words = set(out.split())
    tiers = {i["tier"] for i in json.loads(cli("recommend", "examples/llama-70b-480-h100.toml", "-f", "json").out)
             ["training"]["bom"]["items"] if i.get("tier")}
    assert {"compute-leaf", "compute-spine", "compute-leaf:leaf-spine"} <= tiers
    for tier in tiers:
        *heads, last = tier.split(":")
        assert {f"{h}:" for h in heads} | {last} <= words, tier


def test_verbose_bom_drops_its_source_column_where_it_would_be_cut_and_says_where_it_is(cli, monkeypatch):
    """`recommend -v` piped at 100 columns: the source column had 4 columns left and showed "g…" with
    a second "n…" line under each row. Now it is left out, with a line naming the formats that carry
    the sources; 200 columns leave room for them whole."""
    profile = "tests/serving/data/chat8b.toml"
    monkeypatch.setenv("COLUMNS", "100")
    out = cli("recommend", profile, "-v", "--section", "bom").out
    table = out[out.index("category "):]
    assert "…" not in table and "source" not in table.splitlines()[0]
    assert ("sources: too narrow for them at 100 columns; --format markdown, html or json lists each line's\n"
            "source (or set COLUMNS wider)") in out
    monkeypatch.setenv("COLUMNS", "200")
    wide = cli("recommend", profile, "-v", "--section", "bom").out
    assert wide[wide.index("category "):].splitlines()[0].endswith("source")
    assert "sources: too narrow" not in wide and "…" not in wide[wide.index("category "):]
