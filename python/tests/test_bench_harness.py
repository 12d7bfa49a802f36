"""The pure parts of the side-by-side benchmark (benchmarks/peers/common.py):
round-robin order, statistics, repetition budget, best peer, markdown tables
and the docs section between markers. The benchmark itself is not a test."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from peers import common  # noqa: E402


def test_round_robin_rotates_and_covers_every_position():
    names = ["a", "b", "c"]
    orders = [common.round_robin(names, r) for r in range(3)]
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    # Each peer runs first, in the middle and last once per cycle.
    for pos in range(3):
        assert sorted(o[pos] for o in orders) == names
    assert common.round_robin(names, 3) == names
    assert common.round_robin([], 5) == []


def test_summarize_median_min_in_ms():
    s = common.summarize([0.003, 0.001, 0.002, 0.010])
    assert s == {"median_ms": pytest.approx(2.5), "min_ms": pytest.approx(1.0), "n": 4,
                 "samples_ms": pytest.approx([3.0, 1.0, 2.0, 10.0])}
    assert common.summarize([]) is None


def test_percent_of_peak_pairs_each_call_with_its_own_peak():
    # 1 GFLOP calls: 10 ms at a 125 GFLOP/s peak is 80%; 20 ms at 62.5
    # (the machine at half speed) is 80% too.
    cell = common.summarize([0.010, 0.020, 0.010], peaks=[125e9, 62.5e9, 100e9])
    assert cell["peaks"] == [125e9, 62.5e9, 100e9]
    assert common.percent_of_peak(cell, 1e9) == pytest.approx(80.0)
    # No per-call peaks (a model row, or an error cell): None.
    assert common.percent_of_peak(common.summarize([0.01]), 1e9) is None
    assert common.percent_of_peak("error: x", 1e9) is None
    with pytest.raises(ValueError, match="2 peaks for 3 samples"):
        common.summarize([0.01, 0.02, 0.03], peaks=[1e9, 1e9])


def test_ratio_interval_brackets_the_ratio_and_tells_ties_from_wins():
    import random
    rng = random.Random(1)
    noise = [rng.gauss(0, 0.05) for _ in range(20)]
    # Same distribution: the interval holds 1.
    a = [1.0 + e for e in noise]
    b = [1.0 + e for e in noise[10:] + noise[:10]]
    lo, hi = common.ratio_interval(a, b)
    assert lo < 1.0 < hi
    # 20% faster with 5% noise: the interval excludes 1 and holds 0.8.
    fast = [0.8 * x for x in b]
    lo, hi = common.ratio_interval(fast, a)
    assert hi < 1.0 and lo < 0.8 < hi
    # Seeded: the same samples give the same interval.
    assert common.ratio_interval(fast, a) == (lo, hi)
    # A round's samples are resampled together: a slow round that falls on
    # both peers alike leaves their ratio exact.
    rounds = [1.0, 1.0, 3.0, 1.0, 1.0, 5.0, 1.0, 1.0]
    assert common.ratio_interval([0.9 * r for r in rounds], rounds) == (
        pytest.approx(0.9), pytest.approx(0.9))
    # Unequal counts resample each side on its own; too few samples: None.
    assert common.ratio_interval(a[:7], b) is not None
    assert common.ratio_interval(a[:4], b) is None


def test_reps_within_budget():
    assert common.reps_within(60, 0.5, 10) == 10       # fits
    assert common.reps_within(60, 10.0, 10) == 6       # what fits
    assert common.reps_within(60, 25.0, 10) == 2       # fewer than the floor fit: 2
    assert common.reps_within(60, 100.0, 10) == 1      # one call over budget: still one
    assert common.reps_within(60, 0.0, 10) == 10


def test_run_after_untimed_makes_both_calls_and_returns_the_timed_one():
    class InProcess:
        def __init__(self):
            self.calls = []

        def run(self):
            self.calls.append("run")
            return len(self.calls) * 0.5, ["out"]

    p = InProcess()
    # The second call is the timed one.
    assert common.run_after_untimed(p) == (1.0, ["out"])
    assert p.calls == ["run", "run"]

    class Worker(InProcess):
        def run_after_untimed(self):
            self.calls.append("both")
            return 0.25, None

    w = Worker()
    # A worker makes both calls in one request; run() is not used.
    assert common.run_after_untimed(w) == (0.25, None)
    assert w.calls == ["both"]


def test_burst_calls_fill_about_fifty_ms_within_bounds():
    assert common.burst_calls(0.001) == 50      # 1 ms calls: 50 of them
    assert common.burst_calls(0.004) == 13      # ceil(0.05 / 0.004)
    assert common.burst_calls(0.2) == 3         # slow calls: the floor
    assert common.burst_calls(1e-5) == 50       # fast calls: the cap
    assert common.burst_calls(0.0) == 50


def test_run_burst_times_every_call_after_one_untimed():
    class InProcess:
        def __init__(self):
            self.calls = 0

        def run(self):
            self.calls += 1
            return self.calls * 0.5, ["out"]

    p = InProcess()
    # The first call is untimed; the next three are the burst.
    assert common.run_burst(p, 3) == [1.0, 1.5, 2.0]
    assert p.calls == 4

    class Worker(InProcess):
        def run_burst(self, calls):
            return [0.25] * calls

    w = Worker()
    # A worker makes the whole burst in one request; run() is not used.
    assert common.run_burst(w, 2) == [0.25, 0.25]
    assert w.calls == 0


def test_throughput_table_uses_back_to_back_cells_and_their_peaks():
    flops = {"gemm 4x4x4": 2e9}  # 2 GFLOP: 10 ms is 200 GFLOP/s
    rows = [
        {"workload": "gemm 4x4x4", "threads": 1,
         "cells": {"ours": common.summarize([1.0]), "lib": common.summarize([1.0])},
         "back_to_back": {
             "ours": common.summarize([0.010, 0.011, 0.010], [250e9, 220e9, 200e9]),
             "lib": common.summarize([0.020, 0.020, 0.020], [250e9, 250e9, 250e9]),
             "other": "error: x"}},
        # A row without bursts (an older results.json, or not a GEMM): left out.
        {"workload": "gemm 4x4x4", "threads": 2, "cells": {}},
    ]
    table = common.throughput_table(rows, flops, "ours", "lib").splitlines()
    assert len(table) == 3
    cols = [c.strip() for c in table[2].strip("|").split("|")]
    # ours: 200 GFLOP/s at the median; per round 80%, 82.6%, 100% of its
    # own sample: median 83%. lib: 100 GFLOP/s, 40%.
    assert cols[:7] == ["gemm 4x4x4", "1", "200.0", "83%", "lib", "100.0", "40%"]
    assert cols[7].startswith("0.50x")
    assert cols[8] == "0.50x"
    # An error in ours' bursts shows as its text.
    rows[0]["back_to_back"]["ours"] = "timeout (> 90 s)"
    cols = [c.strip() for c in common.throughput_table(rows, flops, "ours", "lib")
            .splitlines()[2].strip("|").split("|")]
    assert cols[2:4] == ["timeout (> 90 s)", "-"] and cols[7:] == ["-", "-"]


def test_ours_worker_copies_unpickled_inputs_into_arrays_of_its_own():
    import pickle

    import numpy as np
    from peers import ours
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    # What the worker receives through its pipe: an array over the pickle's
    # buffer (not numpy's allocation, so not in huge pages).
    got = pickle.loads(pickle.dumps([a, 7], protocol=5))
    assert not got[0].flags.owndata
    copies = ours._own_copies(got)
    assert copies[0].flags.owndata and copies[0].flags.c_contiguous
    np.testing.assert_array_equal(copies[0], a)
    assert copies[1] == 7


def test_median_ratio_needs_both_cells_measured():
    a, b = common.summarize([0.002, 0.004, 0.003]), common.summarize([0.002])
    assert common.median_ratio(a, b) == "1.50x"
    assert common.median_ratio(a, "error: x") == "-"
    assert common.median_ratio(None, b) == "-"


def test_best_peer_skips_ours_errors_and_missing():
    cells = {"ours": {"median_ms": 1.0, "min_ms": 1.0, "n": 3},
             "x": {"median_ms": 4.0, "min_ms": 3.0, "n": 3},
             "y": "timeout (> 300 s)", "z": None,
             "w": {"median_ms": 2.0, "min_ms": 2.0, "n": 3}}
    assert common.best_peer(cells, "ours") == ("w", 2.0)
    assert common.best_peer({"ours": cells["ours"], "y": "error: x"}, "ours") == (None, None)


def test_fmt_ms_and_cells():
    assert common.fmt_ms(1234.4) == "1234"
    assert common.fmt_ms(12.345) == "12.3"
    assert common.fmt_ms(1.2345) == "1.23"
    assert common.fmt_ms(0.01234) == "0.012"
    assert common.fmt_ms(None) == "-"
    cell = {"median_ms": 5.0, "min_ms": 4.0, "n": 4}
    assert common.fmt_cell(cell, 10) == "5.00 (n=4)"
    assert common.fmt_cell(cell, 4) == "5.00"
    assert common.fmt_cell("error: a|b\nc") == "error: a/b c"
    assert common.fmt_cell(None) == "-"


def test_latency_table_ratio_and_errors():
    rows = [{"workload": "gemm 256", "threads": 1,
             "cells": {"ours": {"median_ms": 3.0, "min_ms": 2.0, "n": 10},
                       "numpy": {"median_ms": 1.5, "min_ms": 1.0, "n": 10},
                       "IREE": "timeout (> 300 s)"}},
            {"workload": "mlp", "threads": 2,
             "cells": {"ours": "error: boom", "numpy": None,
                       "IREE": {"median_ms": 0.5, "min_ms": 0.4, "n": 10}}}]
    md = common.latency_table(rows, ["ours", "numpy", "IREE"], "ours", 10).splitlines()
    assert md[0] == "| workload | threads | ours | numpy | IREE | best peer | ours / best |"
    assert md[2] == "| gemm 256 | 1 | 3.00 | 1.50 | timeout (> 300 s) | numpy | 2.00x |"
    # With samples, the ratio's interval follows it.
    rows[0]["cells"]["ours"]["samples_ms"] = [3.0, 3.1, 2.9, 3.0, 3.2, 2.8]
    rows[0]["cells"]["numpy"]["samples_ms"] = [1.5, 1.6, 1.4, 1.5, 1.5, 1.5]
    md = common.latency_table(rows, ["ours", "numpy", "IREE"], "ours", 10).splitlines()
    lo, hi = common.ratio_interval(rows[0]["cells"]["ours"]["samples_ms"],
                                   rows[0]["cells"]["numpy"]["samples_ms"])
    assert md[2].endswith(f"| numpy | 2.00x ({lo:.2f}-{hi:.2f}) |") and lo <= 2.0 <= hi
    assert md[3] == "| mlp | 2 | error: boom | - | 0.500 | IREE | - |"


def test_compile_table():
    md = common.compile_table([{"workload": "m", "times": {"ours": 1.234, "IREE": "timeout"}}],
                              ["ours", "IREE", "onnxruntime"]).splitlines()
    assert md[2] == "| m | 1.23 | timeout | - |"
    md = common.compile_table([{"workload": "m", "times": {"ours": 1.234, "IREE": 2.0},
                                "first": {"ours": 0.5512, "onnxruntime": 0.1}}],
                              ["ours", "IREE", "onnxruntime"]).splitlines()
    # The first call is added where the compile time is known.
    assert md[2] == "| m | 1.23 + 0.55 | 2.00 | - |"


def test_replace_section_appends_then_replaces():
    text = "# Perf\n\nintro\n"
    once = common.replace_section(text, "table 1")
    assert once.startswith(text.rstrip("\n"))
    assert once.count(common.BEGIN_MARKER) == 1 and "table 1" in once
    twice = common.replace_section(once + "\n## After\n", "table 2\n")
    assert "table 1" not in twice and "table 2" in twice
    assert twice.count(common.BEGIN_MARKER) == 1 and twice.endswith("## After\n")
    with pytest.raises(ValueError, match="without end marker"):
        common.replace_section("x " + common.BEGIN_MARKER, "t")


def test_load_guard_parses_proc_and_counts_only_other_processes():
    stat = "cpu  100 5 50 1000 7 3 2 10 0 0\ncpu0 50 2 25 500 3 1 1 5 0 0\n"
    # user + nice + system + irq + softirq + steal; idle and iowait are not busy.
    assert common.parse_proc_stat_busy(stat) == 100 + 5 + 50 + 3 + 2 + 10
    with pytest.raises(ValueError):
        common.parse_proc_stat_busy("intr 1 2 3\n")
    # A command with spaces and parentheses; utime 11, stime 12, cutime 13, cstime 14.
    line = ("4242 (my (odd) cmd) S 17 4242 4242 0 -1 4194560 100 0 0 0 "
            "11 12 13 14 20 0 1 0 100 0 0")
    assert common.parse_pid_stat(line) == (4242, 17, 50)
    stats = [(1, 0, 5), (10, 1, 7), (11, 10, 3), (12, 10, 4), (20, 1, 100)]
    assert common.tree_jiffies(stats, 10) == 14   # 10 and its children 11, 12
    assert common.tree_jiffies(stats, 99) == 0
    # 300 busy jiffies over 1 s at 100 Hz, 120 of them ours: 1.8 cores others.
    assert common.other_cores(0, 300, 0, 120, 1.0, 100) == pytest.approx(1.8)
    assert common.other_cores(0, 100, 0, 120, 1.0, 100) == 0.0   # clock skew: not negative
    assert common.other_cores(0, 100, 0, 0, 0.0, 100) == 0.0


def test_load_meter_sees_a_busy_child_as_ours_and_reads_this_machine():
    meter = common.LoadMeter()
    meter.start()
    x = 0
    for i in range(200000):
        x += i
    cores = meter.cores()
    # Our own busy loop is not other load; the machine is shared, so only
    # the bounds are certain.
    assert cores is not None and 0.0 <= cores <= (__import__("os").cpu_count() or 1) + 0.5


def test_verdict_needs_every_run_to_agree_and_no_load():
    assert common.verdict([(0.8, 0.9), (0.85, 0.95)], [False, False]) == "ahead"
    assert common.verdict([(1.1, 1.2), (1.05, 1.3)], [False, False]) == "behind"
    assert common.verdict([(0.8, 0.9), (0.9, 1.1)], [False, False]) == "tie"
    assert common.verdict([(0.8, 0.9), (1.1, 1.2)], [False, False]) == "mixed"
    assert common.verdict([(0.8, 0.9), (0.8, 0.9)], [False, True]) == "void"
    assert common.verdict([(0.8, 0.9), None], [False, False]) == "void"
    assert common.verdict([(0.8, 0.9)], [False]) == "void"


def _cell(ms, peaks=None):
    return common.summarize([x / 1e3 for x in ms], peaks)


def test_merge_runs_pools_samples_and_keeps_each_run():
    run1 = [{"workload": "w", "threads": 1, "load": 0.5, "other_load": 0.0,
             "cells": {"ours": _cell([1, 1, 1, 1, 1]), "b": _cell([2, 2, 2, 2, 2]),
                       "c": "error: x"}}]
    run2 = [{"workload": "w", "threads": 1, "load": 0.7, "other_load": 0.4,
             "cells": {"ours": _cell([3, 3, 3, 3, 3]), "b": _cell([2, 2, 2, 2, 2]),
                       "c": _cell([9] * 5)}},
            {"workload": "v", "threads": 2, "cells": {"ours": _cell([1] * 5)}}]
    rows = common.merge_runs([run1, run2])
    assert [(r["workload"], r["threads"]) for r in rows] == [("w", 1), ("v", 2)]
    w = rows[0]
    assert w["cells"]["ours"]["n"] == 10 and w["cells"]["ours"]["median_ms"] == pytest.approx(2)
    assert w["cells"]["c"]["n"] == 5            # the run that measured it
    assert w["runs"][0]["ours"]["median_ms"] == pytest.approx(1)
    assert w["other_load"] == [0.0, 0.4] and w["load"] == [0.5, 0.7]
    assert rows[1]["runs"][0] is None           # run 1 lacks the row
    texts, v = common.run_claims(w["runs"], "ours", w["other_load"], limit=0.25)
    assert texts[0].startswith("0.50x") and texts[1].startswith("1.50x")
    assert v == "void"                          # run 2 was under load
    texts, v = common.run_claims(w["runs"], "ours", w["other_load"], limit=1.0)
    assert v == "mixed"
    table = common.latency_table(rows, ["ours", "b", "c"], "ours", 5, limit=0.25)
    assert "ours / best, each run" in table and "verdict" in table
    assert "| 0.0 · 0.4! |" in table and "| void |" in table


def test_pool_keeps_peaks_with_their_calls():
    a = _cell([1, 2, 3], peaks=[10.0, 20.0, 30.0])
    b = _cell([4, 5], peaks=[40.0, 50.0])
    pooled = common.merge_runs([[{"workload": "g", "threads": 1, "cells": {"p": a},
                                  "back_to_back": {"p": a}}],
                                [{"workload": "g", "threads": 1, "cells": {"p": b},
                                  "back_to_back": {"p": b}}]])[0]
    assert pooled["back_to_back"]["p"]["samples_ms"] == pytest.approx([1, 2, 3, 4, 5])
    assert pooled["back_to_back"]["p"]["peaks"] == [10.0, 20.0, 30.0, 40.0, 50.0]
    assert len(pooled["back_to_back_runs"]) == 2
