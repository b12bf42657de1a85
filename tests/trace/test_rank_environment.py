"""The environment ``overlap-lab record`` gives its rank processes (torch-free)."""

from __future__ import annotations

import pytest

from traces.recorder.demo import rank_environment


@pytest.mark.parametrize(
    ("threads", "world_size", "cores", "policy"),
    [
        (2, 2, 2, "PASSIVE"),  # four compute threads on two cores
        (3, 2, 4, "PASSIVE"),  # six on four
        (1, 2, 2, None),  # one thread per rank: as many as the cores
        (2, 2, 4, None),  # four on four
        (1, 4, 2, "PASSIVE"),  # more ranks than cores
    ],
)
def test_threads_sleep_while_waiting_only_when_they_outnumber_the_cores(
    threads, world_size, cores, policy
) -> None:
    env = rank_environment(threads, world_size, cores, base={"PATH": "/usr/bin"})
    assert env.get("OMP_WAIT_POLICY") == policy
    assert env["OMP_NUM_THREADS"] == str(threads)
    assert env["GLOO_SOCKET_IFNAME"] == "lo"
    assert env["PATH"] == "/usr/bin"


def test_a_wait_policy_the_user_set_is_kept() -> None:
    base = {"OMP_WAIT_POLICY": "active"}
    assert rank_environment(2, 2, 2, base=base)["OMP_WAIT_POLICY"] == "active"
    assert base == {"OMP_WAIT_POLICY": "active"}  # the caller's mapping is not changed


def test_by_default_it_starts_from_this_process_environment(monkeypatch) -> None:
    monkeypatch.setenv("OVERLAP_LAB_PROBE", "kept")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    env = rank_environment(2, 2, 2)
    assert env["OVERLAP_LAB_PROBE"] == "kept" and env["OMP_WAIT_POLICY"] == "PASSIVE"
