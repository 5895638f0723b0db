"""``gpuplan graph``: a phase's topology as GraphML or node-link JSON, from a plan or a profile."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from gpuplan.cli.app import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exc.value.code), out, err


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("graph") / "plan.json"
    with pytest.raises(SystemExit) as exc:
        main(["recommend", "examples/llama-70b-train-serve.toml", "--format", "json", "-o", str(path), "-q"])
    assert exc.value.code in (0, 1)
    return path


def test_graphml_matches_the_plan_topology(capsys, plan_file, tmp_path):
    out = tmp_path / "fabric.graphml"
    code, stdout, err = run(capsys, "graph", str(plan_file), "--phase", "training", "-o", str(out))
    assert (code, stdout, err) == (0, "", "")
    topo = json.loads(plan_file.read_text())["training"]["topology"]
    g = nx.read_graphml(out)
    kinds = [d["kind"] for _, d in g.nodes(data=True)]
    assert kinds.count("server") == topo["nodes"]
    assert kinds.count("leaf") == topo["leaf_switches"]
    assert kinds.count("spine") == topo["spine_switches"]
    links = sum(d["multiplicity"] for _, _, d in g.edges(data=True) if d["tier"] == "node-leaf")
    assert links == topo["node_leaf_links"]


def test_node_link_is_deterministic_json(capsys, plan_file):
    first = run(capsys, "graph", str(plan_file), "--phase", "serving", "--format", "node-link")
    second = run(capsys, "graph", str(plan_file), "--phase", "serving", "--format", "node-link")
    assert first[0] == 0 and first == second
    data = json.loads(first[1])
    assert {"nodes", "edges", "graph"} <= set(data)


@pytest.mark.parametrize("argv,expected", [
    (["--phase", "both"], "--phase: expected training or serving"),
    (["--phase", "training", "--format", "dot"], "unknown format 'dot'"),
])
def test_bad_flags_are_exit_2(capsys, plan_file, argv, expected):
    code, out, err = run(capsys, "graph", str(plan_file), *argv)
    assert code == 2 and out == "" and expected in err and len(err.splitlines()) == 1


def test_a_phase_without_a_plan_is_one_error_line(capsys):
    code, out, err = run(capsys, "graph", "examples/chat-8b-serving.toml", "--phase", "training")
    assert code == 2 and out == ""
    assert "has no training network topology" in err and len(err.splitlines()) == 1


def test_output_over_the_plan_is_refused(capsys, plan_file):
    before = plan_file.read_bytes()
    code, _, err = run(capsys, "graph", str(plan_file), "--phase", "training", "-o", str(plan_file))
    assert code == 2 and "refusing to overwrite an input file" in err
    assert plan_file.read_bytes() == before


def test_a_saved_plan_renders_exactly_as_the_run_that_wrote_it(capsys, plan_file, tmp_path):
    """Every format of a run shows the numbers its JSON publishes, so re-rendering changes nothing."""
    direct = tmp_path / "direct.md"
    with pytest.raises(SystemExit):
        main(["recommend", "examples/llama-70b-train-serve.toml", "--format", "markdown", "-o", str(direct), "-q"])
    code, rerendered, _ = run(capsys, "render", str(plan_file), "--format", "markdown")
    assert code == 0
    assert rerendered == direct.read_text()
