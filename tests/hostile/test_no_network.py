"""gpuplan never touches the network at run time.

Proof in three parts: every socket entry point is replaced by one that raises and the commands
still succeed (in-process and in a fresh interpreter, where every module is imported cold under
the guard); no network module is imported by running them; and no module of the package imports
a network library (static check).
"""

from __future__ import annotations

import ast
import json
import socket
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import SHARED_VALIDATION
from tests.hostile.conftest import EXAMPLES, ROOT, assert_outcome, run_cli

NETWORK_MODULES = {"socket", "ssl", "urllib", "http", "requests", "httpx", "aiohttp", "urllib3", "ftplib", "smtplib",
                   "telnetlib", "xmlrpc", "imaplib", "poplib", "nntplib", "websocket", "websockets", "grpc",
                   "asyncio", "selectors", "webbrowser"}


NETWORK_CLIENTS = {"http.client", "urllib.request", "requests", "httpx", "aiohttp", "urllib3", "ftplib", "smtplib",
                   "telnetlib", "xmlrpc.client", "imaplib", "poplib", "nntplib", "webbrowser", "websocket", "grpc"}


class NetworkUsed(AssertionError):
    pass


def _refuse(*args, **kwargs):
    raise NetworkUsed(f"network access attempted: {args!r}")


class _GuardSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        _refuse("socket.socket", *args)


@pytest.fixture
def no_network(monkeypatch):
    monkeypatch.setattr(socket, "socket", _GuardSocket)
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr",
                 "create_server", "socketpair", "fromfd"):
        if hasattr(socket, name):
            monkeypatch.setattr(socket, name, _refuse)


def _commands(tmp_path) -> list[tuple[list[str], tuple[int, ...]]]:
    profile = str(EXAMPLES / "llama-70b-train-serve.toml")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('phase = "serving"\ngpu = "h100"\ngpus = 64\n')
    plan = tmp_path / "plan.json"
    cases = sorted(str(p) for p in SHARED_VALIDATION.glob("*.toml"))
    if not cases:  # a checkout without ../shared: one fabric case of our own
        (tmp_path / "cases.toml").write_text(
            '[[case]]\nid = "one-su"\nkind = "fabric"\nsource = "RA-11333-001"\ntolerance = 0.0\n'
            '[case.run]\ngpu = "h100-sxm-80gb"\nnodes = 31\nfabric = "ib-ndr"\nswitch = "qm9700"\n'
            'rail_optimized = true\nscalable_unit_nodes = 32\nreserved_nodes_per_unit = 1\n'
            '[case.measured]\nleaf_switches = 8\nspine_switches = 4\n')
        cases = [str(tmp_path / "cases.toml")]
    cmds: list[tuple[list[str], tuple[int, ...]]] = [
        (["recommend", profile, "--format", "json", "-o", str(plan)], (0, 1)),
        (["recommend", str(EXAMPLES / "chat-8b-serving.toml"), "--format", "sarif"], (0, 1)),
        (["validate", *cases, "--format", "json"], (0, 1)),
        (["catalog", "gpus"], (0,)),
        (["catalog", "gpus", "h100", "--format", "json"], (0,)),
        (["schema"], (0,)),
        (["render", str(plan), "--format", "html"], (0,)),
        (["check", profile, "--against", str(cluster), "--format", "github"], (0, 1)),
        (["diff", str(plan), str(EXAMPLES / "default.toml"), "--format", "markdown"], (0, 1)),
    ]
    return cmds


def test_commands_succeed_with_sockets_disabled(no_network, tmp_path):
    for argv, allowed in _commands(tmp_path):
        r = run_cli(*argv, cwd=tmp_path)
        assert "network access attempted" not in r.err, r
        assert_outcome(r, allowed=allowed)


def test_fresh_interpreter_with_sockets_disabled_imports_no_network_module(tmp_path):
    """Cold imports under the guard: no module may even open a socket at import time."""
    argvs = [argv for argv, _ in _commands(tmp_path)]
    code = textwrap.dedent(f"""
        import json, socket, sys
        def refuse(*a, **k):
            raise SystemExit("NETWORK " + repr(a))
        class Guard(socket.socket):
            def __init__(self, *a, **k):
                refuse(*a)
        socket.socket = Guard
        for name in ("create_connection", "getaddrinfo", "gethostbyname", "create_server", "socketpair"):
            setattr(socket, name, refuse)
        before = set(sys.modules)
        from gpuplan.cli.app import main
        codes = []
        for argv in {json.dumps(argvs)}:
            try:
                main(argv)
            except SystemExit as exc:
                codes.append(exc.code)
        loaded = sorted(m for m in set(sys.modules) - before)
        print("RESULT", json.dumps({{"codes": codes, "loaded": loaded}}))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "NETWORK" not in r.stdout + r.stderr, r.stderr[-2000:]
    assert "internal error" not in r.stderr, r.stderr[-2000:]
    result = json.loads(r.stdout.rsplit("RESULT ", 1)[1])
    assert all(c in (0, 1, None) for c in result["codes"]), (result["codes"], r.stderr[-2000:])
    # socket, ssl and asyncio are imported by pydantic-core and click themselves (no connection: the
    # guard above proves it); no network *client* may be loaded at all
    net = sorted(m for m in result["loaded"] if m in NETWORK_CLIENTS or m.split(".")[0] in NETWORK_CLIENTS)
    assert not net, f"network clients imported while running gpuplan: {net}"


def test_no_module_imports_a_network_library():
    bad = []
    for path in sorted((ROOT / "gpuplan").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names
                    if n.split(".")[0] in NETWORK_MODULES]
    assert not bad, bad


def test_runtime_dependencies_are_offline_libraries():
    """The declared dependencies are a CLI, a console renderer, a schema library and a graph library."""
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {d.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in deps}
    assert names <= {"typer", "rich", "pydantic", "networkx", "tomli"}, names
