"""The training search builds Layouts positionally on its hot paths (``tuple.__new__(Layout, ...)``
in evaluator.py, fit.py, groups.py, search.py, bounds.py, space.py; issue 21): a field added,
removed or moved would shift their values silently. This pins the order those builds assume, so
such a change fails here first and the builds are revisited with it."""

from __future__ import annotations

from gpuplan.training.layout import Layout


def test_the_field_order_the_positional_builds_assume():
    assert Layout._fields == ("tp", "pp", "dp", "cp", "ep", "vp", "micro_batch", "recompute", "sequence_parallel",
                              "zero", "recompute_layers", "fold_experts")
    assert Layout._field_defaults == {"cp": 1, "ep": 1, "vp": 1, "micro_batch": 1, "recompute": "none",
                                      "sequence_parallel": False, "zero": 1, "recompute_layers": 0,
                                      "fold_experts": False}
    built = tuple.__new__(Layout, (8, 4, 1, 2, 1, 1, 1, "none", True, 1, 0, False))  # as groups.py builds one
    assert built == Layout(tp=8, pp=4, dp=1, cp=2, sequence_parallel=True)
