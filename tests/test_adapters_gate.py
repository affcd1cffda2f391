"""``CallGate``: how the Agents SDK and LangChain adapters keep a tool that is not ``parallel_safe`` alone, from
threads and event loops alike (the adapters' tests show it in the frameworks' own loops)."""

from __future__ import annotations

import asyncio
import threading

from hermes_core.adapters.gate import CallGate


def test_an_exclusive_call_waits_for_the_running_ones_and_later_parallel_safe_calls_wait_for_it():
    gate, order = CallGate(), []
    gate.enter(parallel_safe=True)  # a parallel-safe call is running

    def exclusive() -> None:
        gate.enter(parallel_safe=False)
        order.append("exclusive")
        gate.leave(parallel_safe=False)

    def later_safe() -> None:
        gate.enter(parallel_safe=True)
        order.append("later safe")
        gate.leave(parallel_safe=True)

    first = threading.Thread(target=exclusive)
    first.start()
    while not gate._waiting:  # the exclusive call is waiting
        threading.Event().wait(0.001)
    second = threading.Thread(target=later_safe)
    second.start()
    while len(gate._waiting) < 2:
        threading.Event().wait(0.001)
    assert order == []  # neither runs beside the running call's... nor jumps the queue
    gate.leave(parallel_safe=True)
    first.join(10)
    second.join(10)
    assert order == ["exclusive", "later safe"]


def test_parallel_safe_calls_enter_together_without_waiting():
    gate = CallGate()
    gate.enter(parallel_safe=True)
    gate.enter(parallel_safe=True)

    async def enter() -> None:
        await gate.aenter(parallel_safe=True)

    asyncio.run(enter())
    assert gate._running == 3


def test_a_cancelled_wait_leaves_the_gate_open_for_the_next_call():
    gate = CallGate()
    gate.enter(parallel_safe=False)

    async def main() -> None:
        waiting = asyncio.ensure_future(gate.aenter(parallel_safe=False))
        await asyncio.sleep(0.05)
        waiting.cancel()
        gate.leave(parallel_safe=False)  # the cancelled wait enters in its thread, then leaves at once
        await asyncio.wait_for(gate.aenter(parallel_safe=False), 10)
        gate.leave(parallel_safe=False)

    asyncio.run(main())
    assert not gate._alone and gate._running == 0 and gate._waiting == []
