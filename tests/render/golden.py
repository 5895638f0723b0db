"""Golden files under tests/golden/: compare, or rewrite with ``pytest --update-golden``.

``GPUPLAN_UPDATE_GOLDEN=1`` does the same where the option is not registered (a bare ``pytest``
run only loads the conftests of tests/ and of tests/test*/; name the directories, as in
``pytest tests/render tests/cli --update-golden``, or use the variable).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
OPTION = "--update-golden"


def add_option(parser: pytest.Parser) -> None:
    try:
        parser.addoption(OPTION, action="store_true", default=False,
                         help="rewrite tests/golden/* from the current output instead of comparing")
    except ValueError:  # registered already by the other conftest (or the root one)
        pass


def updating(config: pytest.Config) -> bool:
    try:
        flag = bool(config.getoption(OPTION))
    except ValueError:
        flag = False
    return flag or os.environ.get("GPUPLAN_UPDATE_GOLDEN") == "1"


def check(config: pytest.Config, name: str, text: str) -> None:
    path = GOLDEN / name
    if updating(config):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    if not path.exists():
        pytest.fail(f"golden file {path.relative_to(GOLDEN.parent.parent)} is missing; run pytest {OPTION}")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), f"golden/{name}",
                                            "output", n=2))
        pytest.fail(f"output differs from golden/{name} (regenerate with pytest {OPTION}):\n{diff[:6000]}")
