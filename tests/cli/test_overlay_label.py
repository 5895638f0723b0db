"""A plan made over a catalog overlay says so: the header and ``catalog_version`` count the
overlays (a new-user review found only the sha256 changed); without one both read as before."""

from __future__ import annotations

import json

from tests.conftest import EXAMPLES

PROFILE = str(EXAMPLES / "llama-70b-480-h100.toml")


def test_the_header_and_json_name_the_overlay(cli, tmp_path):
    overlay = tmp_path / "my-prices"
    overlay.mkdir()
    text = cli("recommend", PROFILE, "--phase", "training", "--no-color", "--catalog", str(overlay)).out
    assert "; catalog 2026.11.21 + overlay; pricing" in " ".join(text.split())
    plan = json.loads(cli("recommend", PROFILE, "--phase", "training", "-f", "json", "--catalog", str(overlay)).out)
    assert plan["catalog_version"] == "2026.11.21 + overlay"
    two = json.loads(cli("recommend", PROFILE, "--phase", "training", "-f", "json", "--catalog", str(overlay),
                         "--catalog", str(overlay)).out)
    assert two["catalog_version"] == "2026.11.21 + 2 overlays"


def test_without_an_overlay_the_version_alone(cli):
    text = cli("recommend", PROFILE, "--phase", "training", "--no-color").out
    assert "; catalog 2026.11.21; pricing capex" in " ".join(text.split())
    plan = json.loads(cli("recommend", PROFILE, "--phase", "training", "-f", "json").out)
    assert plan["catalog_version"] == "2026.11.21"
