"""Fixtures of the renderer tests: the synthetic plan, its profile's lines, and golden files."""

from __future__ import annotations

import pytest

from gpuplan.model.profile import field_lines
from gpuplan.render import RenderOptions
from tests.render import golden as _golden
from tests.render.fixtures import PROFILE_TEXT, synthetic_plan


def pytest_addoption(parser: pytest.Parser) -> None:
    _golden.add_option(parser)


@pytest.fixture
def golden(request):
    """``golden(name, text)``: compare with tests/golden/NAME (or rewrite it with --update-golden)."""
    return lambda name, text: _golden.check(request.config, name, text)


@pytest.fixture
def plan():
    return synthetic_plan()


@pytest.fixture
def options():
    """Plain output with the synthetic profile's lines given (no file access by the renderer)."""
    return RenderOptions(field_lines=field_lines(PROFILE_TEXT))
