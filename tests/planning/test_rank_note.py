"""The capex ranking's note (planning/compose.py) says what its totals hold."""

from __future__ import annotations

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from tests.conftest import EXAMPLES, plan_file


def _plan(name: str, catalog, phase: str):
    return plan_file(EXAMPLES / name, catalog, phase)


def test_the_capex_ranking_names_what_its_totals_hold(catalog):
    """examples/llama-70b-train-serve.toml's serving: 3 B200 servers $1,122,000 + network $31,349 =
    $1,153,349, but the ranked total $1,320,139 also holds storage $42,000, management $58,590, racks
    $7,500, PDUs $13,200 and rear doors $45,500: the note called it "servers + fabric"."""
    s = _plan("llama-70b-train-serve.toml", catalog, "serving").serving
    by = s.bom.capex_by_category_usd
    assert round(by["server"]) == 1_122_000 and round(s.bom.network_capex_usd) == 31_349
    assert round(s.capex_usd) == 1_320_139 == round(sum(by.values()))
    note = next(r for r in s.reasons if r.startswith("ranked on capex"))
    assert note.startswith("ranked on capex with each option's own network (its whole bill: servers, network, "
                           "storage, management, racks, power, cooling): b200-sxm-180gb $1,320,139")


CHAT = """
name = "chat-8b-fleet"
[model]
preset = "llama-3.1-8b"
[serving]
qps = 60
prompt_tokens = 1500
output_tokens = 350
context_length = 8192
precision = "fp8"
ttft_ms = 800
tpot_ms = 40
[serving.demand]
hourly_qps = [8, 6, 5, 4, 4, 5, 9, 18, 32, 45, 52, 56, 58, 60, 59, 57, 54, 50, 44, 38, 30, 22, 15, 10]
"""


def test_a_winner_that_overtakes_once_networks_are_priced_is_the_chosen_one(catalog):
    """Llama 3.1 8B chat at 60 QPS: on server capex l40s-pcie-48gb leads (2 servers), but with each
    option's network mi300x-oam-192gb wins ($276,843 against $309,338: 1.12x). The winner is
    re-planned on its GPU type alone, so its cost line said "The only priced GPU type that meets the
    targets" and every servers-only alternative was "N x the chosen l40s-pcie-48gb", a GPU that was
    not chosen. h100-pcie-80gb's $237,500 of servers against mi300x's one $174,000 server: 1.36x."""
    s = plan_workload(load_profile_text(CHAT, "chat.toml", catalog), catalog, phases=("serving",)).serving
    assert s.gpu == "mi300x-oam-192gb" and round(s.capex_usd) == 276_843
    assert s.reasons[1] == ("Cheapest of 4 GPU types priced with their network: $276,843 capex; next "
                            "l40s-pcie-48gb at $309,338 capex (1.12x).")
    h100 = next(a for a in s.alternatives if a.gpu == "h100-pcie-80gb")
    assert h100.reason == "meets the targets at $237,500 server capex, 1.36x the chosen mi300x-oam-192gb"
    assert not any("l40s-pcie-48gb" in (a.reason or "") for a in s.alternatives)
