"""The cross-core flag counters and the order of turns of a mix launch
(:class:`~tilegraph.runtime.tile_interpreter.cross_core.MixFlags`), which keeps each part's
counters per flag and its order of turns per running part: asked again and again, with
another flag or another running part, each answer is still mode 2's and the round
robin's."""

from __future__ import annotations

from tilegraph.runtime.tile_interpreter.cross_core import MixFlags, MixPart


def group(g: int, aivs: int) -> list[MixPart]:
    parts = [MixPart("aic_fn", "aic", lambda: None, 0, g)]
    return parts + [MixPart("aiv_fn", "aiv", lambda: None, s, g) for s in range(aivs)]


def test_each_flag_keeps_its_own_counters():
    flags = MixFlags(group(0, 2) + group(1, 2))
    aic0, aiv00, aiv01, aic1, _, _ = flags.parts
    op = None
    flags.set_flag(aiv00, op, 5)  # pyright: ignore[reportArgumentType] - no overflow here
    assert not flags.try_wait(aic0, 5)  # the AIC waits for both AIVs of its group
    flags.set_flag(aiv01, op, 5)  # pyright: ignore[reportArgumentType]
    assert not flags.try_wait(aic0, 6)  # another flag: another counter
    assert not flags.try_wait(aic1, 5)  # another group: its own counters
    assert flags.try_wait(aic0, 5)
    assert not flags.try_wait(aic0, 5)  # taken
    flags.set_flag(aic0, op, 3)  # pyright: ignore[reportArgumentType] - every AIV of group 0
    assert flags.try_wait(aiv00, 3) and flags.try_wait(aiv01, 3)
    assert not flags.try_wait(aiv00, 3)


def test_the_order_of_turns_follows_the_running_part():
    flags = MixFlags(group(0, 1) + group(1, 1), group_first=True)
    aic0, aiv0, aic1, aiv1 = flags.parts
    aic0.waiting = [(0, "aic", 1, 0)]  # a counter at zero
    assert flags.next_part() is aiv0  # its own group first
    aiv0.done = True
    assert flags.next_part() is aic1  # then the next group
    assert flags.next_part(rotate=True) is aiv1  # round robin on from aic1
    aic1.waiting = aiv1.waiting = [(1, "aic", 1, 0)]
    flags.counters[(0, "aic", 1, 0)] = 1
    assert flags.next_part() is aic0  # from aiv1: wraps round to group 0
    assert flags.next_part(rotate=True) is aic0  # the only runnable one, after the others
    for p in flags.parts:
        p.done = True
    assert flags.next_part() is None


def test_giving_the_turn_away_goes_round_robin():
    flags = MixFlags(group(0, 0) + group(1, 0) + group(2, 0))
    p0, p1, p2 = flags.parts
    assert [flags.next_part(rotate=True) for _ in range(4)] == [p1, p2, p0, p1]
