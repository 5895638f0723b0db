"""The lazy order of the disaggregation search (serving/lazy_order.py): the same order as sorting
every item by (cost, key), with fewer costs computed."""

from __future__ import annotations

from gpuplan.serving.lazy_order import LazyOrder

# item: (lower bound, key, true cost); item 3 is not in the order at all (its compute gives None)
ITEMS = {0: (5.0, "a", 9.0), 1: (1.0, "b", 4.0), 2: (2.0, "c", 2.0), 3: (0.5, "d", None), 4: (7.0, "e", 7.0),
         5: (2.0, "f", 4.0)}


def _order():
    computed: list[int] = []

    def compute(i: int):
        computed.append(i)
        cost = ITEMS[i][2]
        return None if cost is None else (cost, f"payload {i}")

    return LazyOrder([(b, key, i) for i, (b, key, _) in ITEMS.items()], compute), computed


def test_items_come_out_as_a_full_sort_by_cost_then_key():
    order, _ = _order()
    got = []
    while (item := order.get(len(got))) is not None:
        got.append(item)
    # by hand: c (2), b (4, "b" < "f"), f (4), e (7), a (9); d is left out
    assert got == [(2.0, 2), (4.0, 1), (4.0, 5), (7.0, 4), (9.0, 0)]
    assert order.payload(5) == "payload 5"


def test_the_first_item_computes_only_the_items_whose_bound_is_below_it():
    order, computed = _order()
    assert order.get(0) == (2.0, 2)
    # d (bound 0.5) and b (1.0) are computed before c (2.0) is known to come first; f's bound 2.0
    # ties c's cost but its key "f" sorts after "c", so f waits; a and e wait.
    assert computed == [3, 1, 2]


def test_a_monotone_test_stops_without_computing_what_its_bound_already_fails():
    order, computed = _order()
    assert order.get(0) == (2.0, 2)
    # the second item: b (computed, 4.0) passes "cost < 5"; f waits under 2.0, so it is computed
    assert order.get(1, lambda cost: cost >= 5.0) == (4.0, 1)
    assert order.get(2, lambda cost: cost >= 5.0) == (4.0, 5)
    # the fourth: a waits under 5.0 and e under 7.0: both fail "cost < 5" without being computed
    assert order.get(3, lambda cost: cost >= 5.0) is None
    assert sorted(computed) == [1, 2, 3, 5]


def test_dropped_items_are_never_computed():
    order, computed = _order()
    got = []
    while (item := order.get(len(got), drop=lambda i, bound: bound >= 5.0)) is not None:
        got.append(item)
    assert got == [(2.0, 2), (4.0, 1), (4.0, 5)]
    assert 0 not in computed and 4 not in computed


def test_a_refined_bound_keeps_the_order_and_spares_what_it_puts_past_the_test():
    computed: list[int] = []
    refined: list[int] = []

    def compute(i: int):
        computed.append(i)
        cost = ITEMS[i][2]
        return None if cost is None else (cost, f"payload {i}")

    def refine(i: int) -> float:  # a tighter bound: the cost itself where known, else the first bound
        refined.append(i)
        return ITEMS[i][2] if ITEMS[i][2] is not None else ITEMS[i][0]

    order = LazyOrder([(b, key, i) for i, (b, key, _) in ITEMS.items()], compute, refine)
    got = []
    while (item := order.get(len(got), lambda cost: cost >= 5.0)) is not None:
        got.append(item)
    # the same order as without it (c, b, f under 5), and a (9) and e (7) are computed by neither;
    # with it, d (no tighter bound: computed at once), b, c and f are each refined once, first
    assert got == [(2.0, 2), (4.0, 1), (4.0, 5)]
    assert sorted(computed) == [1, 2, 3, 5] and sorted(refined) == [1, 2, 3, 5]
    # b (bound 1.0, refined to 4.0) waits again: c (2.0) is computed before b
    assert computed.index(2) < computed.index(1)
