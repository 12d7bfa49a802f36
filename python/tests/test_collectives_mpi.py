"""The MPI backend of the collectives runtime, under MPICH's mpirun: every
collective on 2 and 4 processes against each rank's own reference
(unittests/CollectivesMpiCheck.cpp), and the faults: a rank that aborts, a
rank that never arrives and a rank that is killed end the job with an error
that names the rank, within the timeout, never a hang."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

BUILD = Path(os.environ["PADDLE_BUILD_DIR"])
CHECK = BUILD / "unittests" / "paddle-collectives-mpi-check"
MPIRUN = shutil.which("mpirun.mpich") or shutil.which("mpirun")



def mpirun(np_, *args, timeout=60):
    # MPI is one of the project's dependencies (scripts/setup.sh installs
    # MPICH): its absence is a failure here, not a skip.
    assert MPIRUN is not None, "mpirun not found: run scripts/setup.sh"
    assert CHECK.exists(), f"{CHECK} not built: CMake did not find MPI"
    start = time.monotonic()
    run = subprocess.run([MPIRUN, "-np", str(np_), str(CHECK), *args],
                         capture_output=True, text=True, timeout=timeout)
    return run, time.monotonic() - start


@pytest.mark.parametrize("np_", [2, 4])
def test_every_collective_matches_each_ranks_reference(np_):
    run, _ = mpirun(np_)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = sorted(run.stdout.split("\n"))
    assert [ln for ln in lines if ln] == [f"rank {r} of {np_}: ok" for r in range(np_)]


def test_an_aborting_rank_is_named_by_the_others():
    run, seconds = mpirun(3, "abort")
    assert run.returncode != 0
    assert "rank 1: injected failure" in run.stderr
    # The others were waiting in an all_reduce: each gets the notice (rank 1
    # exits only once they have taken it).
    for r in (0, 2):
        assert (f"rank {r}: error: rank {r} of 3: rank 1 failed: injected failure"
                in run.stderr), run.stderr
    assert seconds < 30


def test_a_rank_that_never_arrives_times_the_others_out():
    run, seconds = mpirun(3, "absent")
    assert run.returncode != 0
    for r in (0, 2):
        assert (f"rank {r}: error: rank {r} of 3: all_reduce of 1 x f32 (sum) timed out "
                "after 2 s") in run.stderr, run.stderr
    assert seconds < 30


def test_a_killed_rank_ends_the_job():
    run, seconds = mpirun(3, "kill")
    assert run.returncode != 0
    assert seconds < 30
