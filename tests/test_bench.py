"""``make bench``'s load scenarios (bench/wrk.py) in quick mode, on real server processes and
Debian's wrk (``make test`` installs it): every row comes out, and a wrong answer fails the
scenario instead of counting as a fast one. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import __main__ as bench_main
from bench import wrk
from bench.harness import Row
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
        assert row.ratio is not None, row
        assert row.ratio > 0, row
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


def test_only_replaces_its_own_rows_and_every_hand_written_section_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "benchmarks.md"
    monkeypatch.setattr(bench_main, "DOCS", docs)
    old = [
        Row("1. in-process dispatch", "old", "4 µs", "1 µs", 4.0, "≤ 3.0×", False),
        Row("12. tools/call under wrk, 1 connection", "old", "a", "b", 1.0, "≥ 2.5×", False),
    ]
    bench_main.write(old, 50, (1.0, 2.0))
    docs.write_text(docs.read_text() + "\n## Issue 20 targets\n\nBy hand.\n")
    new = Row("12. tools/call under wrk, 1 connection", "new", "c", "d", 3.0, "≥ 2.5×", True)
    bench_main.merge([new], ["wrk"], (3.0, 4.0))
    text = docs.read_text()
    assert "| 1. in-process dispatch | old |" in text
    assert "| 12. tools/call under wrk, 1 connection | new | c | d | 3.00× | ≥ 2.5× | yes |" in text
    assert "| old | a |" not in text
    assert "Missed: 1. in-process dispatch (old)." in text
    assert "- scenarios 12 come from `python -m bench --only wrk`" in text
    assert text.count("## How each scenario is measured") == 1
    assert text.endswith("\n## Issue 20 targets\n\nBy hand.\n")
    bench_main.merge([new], ["wrk"], (3.0, 4.0))  # again: one bullet, one kept section
    assert docs.read_text().count("--only wrk") == 1
    assert docs.read_text().count("## Issue 20 targets") == 1


async def test_the_cpu_per_call_harness_times_only_after_a_real_call_was_answered() -> None:
    from bench.call_cpu import measure

    assert await measure("ours", 5, None) > 0  # raises when the first answer is not a result


async def test_the_function_counter_counts_each_scenario_from_a_real_answered_call() -> None:
    from bench import functions

    results = await functions.scenarios(set(functions.TARGETS))
    assert set(results) == set(functions.TARGETS)
    for name, (answer, seen) in results.items():
        functions._check(name, answer)  # pyright: ignore[reportPrivateUsage]
        assert seen, name
        assert all(file.startswith(functions.PACKAGE) for file, _line, _name in seen)
    # a call enters the runtime's dispatch on every path
    names = {qual for _f, _l, qual in results["tools_call"][1]}
    assert any("dispatch" in q.lower() or "run" in q for q in names)


async def test_the_tools_list_handler_scenario_calls_the_handler_with_a_context_it_accepts() -> (
    None
):
    """Scenario 5 times ``tools/list``'s handler alone, on a request context of its own: the
    handler must answer it with every tool, or ``make bench`` stops there."""
    from bench.mcp_call import Model, _FakeCtx, many, update  # pyright: ignore[reportPrivateUsage]
    from foldkit_agent import Program, agent
    from foldkit_agent.adapters.mcp import mcp_server

    definition, tools = many(10)
    async with Program(init=Model(), update=update).run() as running:
        server = mcp_server(
            agent.bind(definition=definition, host=running.host), name="b", version="1"
        )
        handler = server.get_request_handler("tools/list")
        assert handler is not None
        listed = await handler.handler(_FakeCtx(), None)  # pyright: ignore[reportArgumentType]
        assert [t.name for t in listed.tools] == [t.name for t in tools]
