"""Invariants of the bundled catalog data: prices that contradict each other, figures without a reachable source,
price typos, and modelling assumptions that over-credit what a buyer gets back.

Each invariant is checked over every bundled quote (`load_catalog`, the project's own loader) or over the bundled
assumptions. Where today's catalog breaks an invariant that the practitioner review judged real, the exception is
listed by name in `KNOWN` (quotes) or `KNOWN_ASSUMPTIONS` (model-level), with the section of
bench/catalog-review.md that says what to do about it: the suite passes today, any NEW violation fails, and a
KNOWN entry that is no longer violated (because the data was fixed) fails too, so that the list only shrinks.

Conventions the invariants rely on (all from catalogs/README.md and the quote-file headers):
- a cloud quote's id starts with its provider's slug (`lambda-…`, `azure-…`, `coreweave-…`);
- a quote with `max_nodes: 1` is a single instance; with `max_nodes` > 1 it is a cluster product (an explicit
  `fabric` distinguishes clusters further);
- `kind: list | street` quotes are published figures; `estimate` and `negotiated` ones are not.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable
from datetime import date
from functools import lru_cache

import pytest

from solver.estimate.cost import Owning, buy_node_terms, credited_share
from solver.inputs.assumptions import bundled_leaves, load_assumptions
from solver.inputs.bibliography import cited, load_bibliography
from solver.inputs.catalog import Catalog, Quote, load_catalog

REVIEW = "see bench/catalog-review.md"

KNOWN: dict[str, str] = {
    # §1c: Lambda sells multi-node InfiniBand capacity only as 1-Click Clusters, priced above its single 8-GPU
    # instance. The 16-GPU tiers say so in their source; these tiers do not yet.
    "lambda-b200-1cc-64gpu-reserved": f"above Lambda's single-instance on-demand rate; source must name the "
                                      f"bundled InfiniBand cluster fabric ({REVIEW} §1c)",
    "lambda-b200-1cc-256gpu-reserved": f"as lambda-b200-1cc-64gpu-reserved ({REVIEW} §1c)",
    "lambda-h100-1cc-64gpu-reserved": f"as lambda-b200-1cc-64gpu-reserved ({REVIEW} §1c)",
    "lambda-h100-1cc-256gpu-reserved": f"as lambda-b200-1cc-64gpu-reserved ({REVIEW} §1c)",
    # §4: NVIDIA-sold systems are charged the commodity-server support rate (10 %/yr) although the assumption's own
    # source gives ~20 %/yr for DGX support; fix by a per-quote support rate or by stating "support included".
    "dgx-a100-40gb-nvidia-list-2020": f"DGX support charged at the commodity 10 %/yr ({REVIEW} §4)",
    "dgx-h100-semianalysis-estimate": f"DGX support charged at the commodity 10 %/yr ({REVIEW} §4)",
    "dgx-b200-nvidia-list": f"DGX support charged at the commodity 10 %/yr ({REVIEW} §4)",
    "dgx-b300-estimate": f"DGX support charged at the commodity 10 %/yr ({REVIEW} §4)",
    "gb200-nvl72-rack-estimate": f"NVIDIA rack support charged at the commodity 10 %/yr ({REVIEW} §4)",
    "gb300-nvl72-rack-estimate": f"NVIDIA rack support charged at the commodity 10 %/yr ({REVIEW} §4)",
}

KNOWN_ASSUMPTIONS: dict[str, str] = {
    "resale:network_storage": f"the resale credit applies the server resale curve to network capex too "
                              f"(installed optics and cabling do not fetch that) ({REVIEW} §3)",
    "resale:block_sale": f"a block of 512+ GPUs sold at once is credited like a single server ({REVIEW} §3)",
}

# --------------------------------------------------------------------------------------------- thresholds
DGX_SUPPORT_PCT = 20.0
"""DGX H100 one-year support ~20 % of list, the DGX figure cited by assumptions.yaml money.support_pct_per_year
([S242], weak)."""
SUPPORT_RANGE_PCT = (10.0, 30.0)
"""Hardware service contracts add 10-30 % a year ([S241] TechTarget), the range the assumption's source gives."""
NETWORK_STORAGE_RECOVERY_MAX = 0.5
"""Installed optics, cabling and a parallel filesystem recover at most half of what the servers do on resale
(bench/catalog-review.md §3)."""
BLOCK_SALE_GPUS = 512
BLOCK_SALE_FACTOR_MAX = 0.9
"""A sale of this many GPUs or more clears at most 90 % of the per-server resale value (broker 90-day lot 0.85,
30-day auction 0.65 of an orderly sale in the SpotWire valuation framework, bench/catalog-review.md §3)."""
RELATIVE_BAND = 4.0
"""A quote's $/GPU-hour lies within 1/4x..4x of the median of its accelerator's cloud and managed quotes."""
USD_PER_PFLOP_HOUR = (0.4, 25.0)
"""$ per dense-BF16-PFLOP-hour of any rented accelerator (catches per-node vs per-GPU and unit slips)."""
BUY_USD_PER_ACCELERATOR = {"consumer": (300, 10_000), "workstation": (1_000, 25_000),
                           "datacenter": (5_000, 120_000), "wafer": (500_000, 10_000_000)}
MAX_VALIDITY_DAYS = 366
FABRIC_REASON = re.compile(r"InfiniBand|fabric|\bIB\b", re.IGNORECASE)
SUPPORT_INCLUDED = re.compile(r"support included|includ\w* (\w+ )?support", re.IGNORECASE)


@lru_cache(maxsize=1)
def _catalog() -> Catalog:
    return load_catalog()


def _priced(mode: str | None = None) -> list[Quote]:
    return [q for q in _catalog().quotes.values() if q.priced and (mode is None or q.mode == mode)]


def _provider(q: Quote) -> str:
    return q.id.split("-", 1)[0]


def _cluster_kind(q: Quote) -> tuple[bool, str | None]:
    """(single instance?, explicit fabric): quotes compare like for like only within one kind."""
    return (q.max_nodes == 1, q.fabric)


def _usd_per_gpu_hour(q: Quote) -> float | None:
    system = _catalog().systems[q.system]
    if q.mode == "cloud":
        return q.price
    if q.mode == "managed":
        return q.price / system.per_node / 730.0
    return None


def _by_provider_system() -> dict[tuple[str, str], list[Quote]]:
    groups: dict[tuple[str, str], list[Quote]] = defaultdict(list)
    for q in _priced("cloud"):
        groups[(_provider(q), q.system)].append(q)
    return groups


INVARIANTS: dict[str, Callable[[], set[str]]] = {}
"""Quote-level invariants by description: each returns the ids that violate it today (KNOWN or not)."""
SECTION: dict[str, str] = {}
"""The review section whose KNOWN entries an invariant exempts: a KNOWN quote is exempt only from the invariant
its reason names, never from the others (a price typo on a known quote still fails)."""


def invariant(description: str, section: str = "") -> Callable[[Callable[[], set[str]]], Callable[[], set[str]]]:
    def register(fn: Callable[[], set[str]]) -> Callable[[], set[str]]:
        INVARIANTS[description] = fn
        SECTION[description] = section
        return fn
    return register


def _exempt(description: str) -> set[str]:
    section = SECTION[description]
    return {qid for qid, reason in KNOWN.items() if section and reason.endswith(f"§{section})")}


def _check(description: str) -> None:
    new = sorted(INVARIANTS[description]() - _exempt(description))
    assert new == [], f"{description}: new violations {new} (fix the data, or add them to KNOWN with a reason)"


# --------------------------------------------------------------------------------------------- (a) prices
@invariant("reservation dearer than the same provider's on-demand rate for the same system and cluster kind")
def _reserved_above_own_on_demand() -> set[str]:
    """A commitment that costs more than the provider's own on-demand rate for the same product buys nothing."""
    found = set()
    for quotes in _by_provider_system().values():
        for r in (q for q in quotes if q.term == "reserved"):
            for o in (q for q in quotes if q.term == "on_demand"):
                if _cluster_kind(r) == _cluster_kind(o) and r.price > o.price + 1e-9:
                    found.add(r.id)
    return found


@invariant("cluster reservation above the provider's single-instance rate without saying why", section="1c")
def _cluster_premium_unexplained() -> set[str]:
    """Where a provider's cluster reservation costs more per GPU-hour than its single-instance on-demand rate
    (Lambda's 1-Click Clusters), the quote must name the reason: the bundled multi-node fabric."""
    found = set()
    for quotes in _by_provider_system().values():
        for r in (q for q in quotes if q.term == "reserved" and q.max_nodes > 1):
            dearer = [o for o in quotes if o.term == "on_demand" and o.max_nodes == 1 and r.price > o.price]
            if dearer and not FABRIC_REASON.search(r.source):
                found.add(r.id)
    return found


@invariant("spot dearer than the same provider's on-demand or reserved rate for the same system")
def _spot_above_others() -> set[str]:
    found = set()
    for quotes in _by_provider_system().values():
        for s in (q for q in quotes if q.term == "spot"):
            if any(q.term != "spot" and s.price > q.price for q in quotes):
                found.add(s.id)
    return found


@invariant("a longer commitment priced above a shorter one (same provider, system, kind, overlapping sizes)")
def _longer_term_dearer() -> set[str]:
    found = set()
    for quotes in _by_provider_system().values():
        terms = [q for q in quotes if q.term == "reserved"]
        for a in terms:
            for b in terms:
                overlap = a.min_nodes <= b.max_nodes and b.min_nodes <= a.max_nodes
                if overlap and _cluster_kind(a) == _cluster_kind(b) and a.commit_months > b.commit_months \
                        and a.price > b.price + 1e-9:
                    found.add(a.id)
    return found


# --------------------------------------------------------------------------------------------- (b) sources
@invariant("quote source without a resolvable bibliography id")
def _unresolved_sources() -> set[str]:
    bib = load_bibliography()
    return {q.id for q in _catalog().quotes.values()
            if not cited(q.source) or any(tag not in bib for tag in cited(q.source))}


def _latest_access(source: str) -> date | None:
    """The latest `accessed` date of the bibliography entries a source cites (None: it cites none that resolve)."""
    bib = load_bibliography()
    dates = [bib[tag].accessed for tag in cited(source) if tag in bib]
    return max(dates) if dates else None


@invariant("published figure dated after every source it cites was read")
def _dated_after_sources() -> set[str]:
    """A published figure (a list/street quote, a non-estimate spec) cannot have been read on a day after every
    source it cites was accessed: its `quoted_on`/`as_of` is on or before the latest `accessed` date."""
    cat = _catalog()
    found = set()
    for q in cat.quotes.values():
        latest = _latest_access(q.source)
        if q.kind in ("list", "street") and latest is not None and q.quoted_on > latest:
            found.add(q.id)
    for table in (cat.accelerators, cat.systems):
        for item_id, item in table.items():
            for name, value in item:
                source = getattr(value, "source", None)
                latest = _latest_access(source) if isinstance(source, str) else None
                if latest is not None and not value.estimate and value.as_of > latest:
                    found.add(f"{item_id}.{name}")
    return found


@invariant(f"quote valid for more than {MAX_VALIDITY_DAYS} days after it was quoted")
def _long_validity() -> set[str]:
    return {q.id for q in _catalog().quotes.values() if (q.valid_until - q.quoted_on).days > MAX_VALIDITY_DAYS}


@invariant("max_nodes 1 on an 8-GPU cloud product without a reason in the source")
def _single_node_cap_unexplained() -> set[str]:
    """`max_nodes: 1` rules out every multi-node plan on the product: the quote says why ('max_nodes 1: …')."""
    return {q.id for q in _priced("cloud")
            if q.max_nodes == 1 and _catalog().systems[q.system].per_node >= 8 and "max_nodes 1" not in q.source}


# --------------------------------------------------------------------------------------------- (c) price bands
@invariant(f"$/GPU-hour outside 1/{RELATIVE_BAND:g}x..{RELATIVE_BAND:g}x of its accelerator's median")
def _outside_relative_band() -> set[str]:
    by_accel: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for q in _priced():
        rate = _usd_per_gpu_hour(q)
        if rate is not None:
            by_accel[_catalog().systems[q.system].accelerator].append((q.id, rate))
    found = set()
    for rows in by_accel.values():
        median = statistics.median(rate for _, rate in rows)
        found |= {qid for qid, rate in rows if not median / RELATIVE_BAND <= rate <= median * RELATIVE_BAND}
    return found


@invariant(f"$ per dense-BF16-PFLOP-hour outside {USD_PER_PFLOP_HOUR[0]}..{USD_PER_PFLOP_HOUR[1]}")
def _outside_pflop_band() -> set[str]:
    low, high = USD_PER_PFLOP_HOUR
    found = set()
    for q in _priced():
        rate = _usd_per_gpu_hour(q)
        accel = _catalog().accelerators[_catalog().systems[q.system].accelerator]
        if rate is not None and not low <= rate / (accel.bf16_tflops.value / 1000.0) <= high:
            found.add(q.id)
    return found


@invariant("purchase price per accelerator outside its class band")
def _outside_buy_band() -> set[str]:
    found = set()
    for q in _priced("buy"):
        system = _catalog().systems[q.system]
        low, high = BUY_USD_PER_ACCELERATOR[_catalog().accelerators[system.accelerator].cls]
        if not low <= q.price / system.per_node <= high:
            found.add(q.id)
    return found


# --------------------------------------------------------------------------------------------- (d) support
def _dgx_class(q: Quote) -> bool:
    """Bought from NVIDIA (DGX systems and NVIDIA racks): NVIDIA Enterprise Support applies."""
    return q.mode == "buy" and q.priced and q.vendor.startswith("NVIDIA")


@invariant("DGX-class purchase charged less support than the sourced DGX figure", section="4")
def _dgx_support_below_source() -> set[str]:
    """DGX-class purchases pay the DGX support figure that assumptions.yaml cites (their own rate, or the global
    one), unless the quote states that its price includes support."""
    default = load_assumptions().values.money.support_pct_per_year
    found = set()
    for q in _catalog().quotes.values():
        pct = getattr(q, "support_pct_per_year", None)   # a per-quote rate, once the schema has one (review §4)
        if _dgx_class(q) and (default if pct is None else pct) < DGX_SUPPORT_PCT \
                and not SUPPORT_INCLUDED.search(q.source):
            found.add(q.id)
    return found


def test_support_rate_within_its_sourced_range() -> None:
    leaf = bundled_leaves()[1][("money", "support_pct_per_year")]
    assert "[S241]" in leaf.source and "[S242]" in leaf.source, "the support assumption changed its sources"
    low, high = SUPPORT_RANGE_PCT
    assert low <= load_assumptions().values.money.support_pct_per_year <= high


# --------------------------------------------------------------------------------------------- (e) AMD coverage
@invariant("datacenter accelerator whose 8-GPU cloud quotes all allow a single node", section="5")
def _single_node_only_accelerators() -> set[str]:
    """An accelerator whose every cloud quote is capped at one node can never be chosen for multi-node training:
    it is ruled out by catalog coverage, not by its economics."""
    cat = _catalog()
    by_accel: dict[str, list[Quote]] = defaultdict(list)
    for q in cat.quotes.values():
        system = cat.systems[q.system]
        if q.mode == "cloud" and system.per_node >= 8 and cat.accelerators[system.accelerator].cls == "datacenter":
            by_accel[system.accelerator].append(q)
    return {q.id for quotes in by_accel.values() if all(q.max_nodes == 1 for q in quotes) for q in quotes}


@pytest.mark.parametrize("description", sorted(INVARIANTS))
def test_quote_invariant(description: str) -> None:
    _check(description)


# --------------------------------------------------------------------------------------------- (f) resale
def _resale_credit_per_server_dollar(nodes: int) -> tuple[float, float]:
    """(resale credit per dollar of server price, resale fraction of the servers alone) for `nodes` bought,
    installed for 21 days, trained on for 70 days and sold: the bundled 200B example's buy plan."""
    money = load_assumptions().values.money
    hours = 70 * 24.0
    terms = buy_node_terms(nodes=nodes, ideal_hours=hours, wall_hours=hours, install_days=21, wait_days=0,
                           node_kw=14.3, pue=1.3, usd_per_kwh=0.08, money=money,
                           owning=Owning("resell", 120.0, False), consumer=False, estimate=False)
    credit = -sum(t[1] for t in terms if t[0] == "resale_credit")
    return credit, credited_share(21 * 24.0 + hours, "resell", money)


def _resale_violations() -> set[str]:
    money = load_assumptions().values.money
    extra = money.network_capex_fraction      # storage is not capex any more: the plan's `storage` line
    found = set()
    credit, servers = _resale_credit_per_server_dollar(nodes=2)
    assert servers > 0, "the resale curve no longer credits a 91-day-old server: revisit this invariant"
    if credit > servers * (1.0 + NETWORK_STORAGE_RECOVERY_MAX * extra) + 1e-9:
        found.add("resale:network_storage")
    block, _ = _resale_credit_per_server_dollar(nodes=BLOCK_SALE_GPUS // 8)
    if block > BLOCK_SALE_FACTOR_MAX * credit + 1e-9:
        found.add("resale:block_sale")
    return found


def test_resale_credit_does_not_overstate_what_a_cluster_fetches() -> None:
    """Reselling a cluster after the run credits the servers at the resale curve, installed network and storage
    at a fraction of it, and a block of hundreds of GPUs below a single server's price."""
    new = sorted(_resale_violations() - set(KNOWN_ASSUMPTIONS))
    assert new == [], f"resale credit: new violations {new} (fix the model, or add them to KNOWN_ASSUMPTIONS)"


# --------------------------------------------------------------------------------------------- the known lists
def test_known_violations_are_still_real() -> None:
    """The known lists only shrink: an entry that no longer violates anything (its fix was applied, or the quote is
    gone) must be removed, and every entry says where the review discusses it."""
    exempted: set[str] = set()
    for description, fn in INVARIANTS.items():
        exempted |= fn() & _exempt(description)
    stale = sorted(set(KNOWN) - exempted)
    assert stale == [], f"fixed, removed or no longer the violation its reason names: drop from KNOWN: {stale}"
    stale_model = sorted(set(KNOWN_ASSUMPTIONS) - _resale_violations())
    assert stale_model == [], f"fixed: drop from KNOWN_ASSUMPTIONS: {stale_model}"
    for reason in [*KNOWN.values(), *KNOWN_ASSUMPTIONS.values()]:
        assert "catalog-review.md §" in reason, reason
