"""``make bench``'s load scenarios (bench/wrk.py) in quick mode, on real server processes and
Debian's wrk (``make test`` installs it): every row comes out, and a wrong answer fails the
scenario instead of counting as a fast one. No timing is asserted."""

from __future__ import annotations

import pytest

from bench import wrk
from bench.servers import start


async def test_the_quick_wrk_run_produces_every_row_and_only_right_answers() -> None:
    rows = await wrk.run(*wrk.durations(quick=True, seconds=1, rounds=1))
    call = [
        (f"12. tools/call under wrk, {c} connection{'s' if c > 1 else ''}", measure)
        for c in (1, 10, 50)
        for measure in ("vs FastMCP 4", "vs SDK floor", "vs Starlette floor", "our p99 / our p50")
    ]
    listing = [
        (f"13. tools/list under wrk, {n} tools", "vs FastMCP 4") for n in ("10", "100", "1,000")
    ]
    assert [(r.scenario, r.measure.split(":")[0]) for r in rows] == call + listing
    for row in rows:
        assert row.ratio is not None and row.ratio > 0, row
        assert row.met is not None or row.target == "reported", row
    for row in rows:
        if row.measure.startswith("vs "):
            assert row.ours.endswith(" answers checked, 0 wrong"), row.ours


async def test_a_run_of_wrong_answers_fails_instead_of_counting() -> None:
    async with start("ours", cpu=None) as url:
        with pytest.raises(wrk.LoadError, match="wrong answers"):  # 404s, fast ones
            await wrk.wrk(url + "-not-here", wrk.CALL, 1, 1, kind="ours", method="tools/call")
        with pytest.raises(wrk.LoadError, match="listed 1 tools, not 10"):
            await wrk.wrk(url, wrk.LIST, 1, 1, kind="ours", method="tools/list", tools=10)
        with pytest.raises(wrk.LoadError, match="is not a result"):
            wrk.check_first("ours", "tools/call", None, 200, '{"jsonrpc":"2.0","id":1}')
