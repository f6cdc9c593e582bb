"""An option's quote prices as arrays, for the stages that price every quote of a point at once.

Every per-node total of a quote at a point is affine in its price: t0 + price × t1 of its price key
(`PerNode.key_totals`, evaluated in that order so the floats are those of `PerNode.cost`/`cash`). A marketplace
option has thousands of quotes and a handful of keys, so a point's totals for all quotes are two gathers and a
multiply-add: the presolve, the screen's budget reasons and the bounds all read them so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..estimate.options import Option, Point, PriceKey
from ..inputs.catalog import Quote


@dataclass(frozen=True)
class PriceTable:
    """Quotes' prices, the sorted distinct price keys, and each quote's key (an index into `keys`), in the order of
    the quotes it was made from."""

    prices: np.ndarray
    keys: list[PriceKey]
    key_of: np.ndarray

    def totals(self, pt: Point, cash: bool) -> np.ndarray:
        """Each quote's per-node cost (or cash) at `pt`, in dollars."""
        pairs = [pt.per_node.key_totals(k, cash) for k in self.keys]
        t0 = np.array([t[0] for t in pairs])[self.key_of]
        t1 = np.array([t[1] for t in pairs])[self.key_of]
        return t0 + self.prices * t1


def price_table(o: Option, quotes: Sequence[Quote] | None = None) -> PriceTable:
    """The table of `quotes` (default: all of the option's), read from its first point (a quote's price and key are
    the same at every point)."""
    qs = o.quotes if quotes is None else quotes
    pairs = [o.points[0].per_node.price_key(q.id) for q in qs] if o.points else []
    keys = sorted({k for _p, k in pairs})
    return PriceTable(np.array([p for p, _k in pairs], dtype=float), keys,
                      np.array([keys.index(k) for _p, k in pairs], dtype=np.int64))


__all__ = ["PriceTable", "price_table"]
