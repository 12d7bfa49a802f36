"""Pure parts of the side-by-side benchmark (benchmarks/compare.py): the
round-robin schedule, statistics, the markdown tables and the marker-delimited
section of docs/performance.md. No torch, no paddle_mlir: tested by
python/tests/test_bench_harness.py."""

import math
import random
import statistics

class PeerError(Exception):
    """A peer could not build or run a workload; the message goes into the table."""


class Timeout(PeerError):
    pass


BEGIN_MARKER = "<!-- bench:peers:begin (written by scripts/bench.sh; edits here are lost) -->"
END_MARKER = "<!-- bench:peers:end -->"


def round_robin(names, rep):
    """The order of the peers in repetition `rep`: rotated by one each time,
    so no peer always runs first (on a warm cache, after another peer's
    threads) or always last."""
    names = list(names)
    if not names:
        return []
    k = rep % len(names)
    return names[k:] + names[:k]


def summarize(times, peaks=None):
    """Seconds -> {"median_ms", "min_ms", "n", "samples_ms"} (the samples in
    the order taken, for ratio_interval), and "peaks" when given: the FLOP/s
    peak sampled next to each call (percent_of_peak); None for no samples."""
    if not times:
        return None
    ms = [t * 1e3 for t in times]
    out = {"median_ms": statistics.median(ms), "min_ms": min(ms), "n": len(ms),
           "samples_ms": ms}
    if peaks is not None:
        if len(peaks) != len(times):
            raise ValueError(f"summarize: {len(peaks)} peaks for {len(times)} samples")
        out["peaks"] = list(peaks)
    return out


def percent_of_peak(cell, flops):
    """The median over a cell's calls of each call's FLOP/s as a percentage
    of the peak sampled next to it: a change of the machine's clock between
    calls moves both and cancels. None when the cell has no per-call peaks."""
    if not isinstance(cell, dict) or "peaks" not in cell:
        return None
    return statistics.median(100.0 * flops / (ms / 1e3) / pk
                             for ms, pk in zip(cell["samples_ms"], cell["peaks"]))


def ratio_interval(ours_ms, best_ms, resamples=2000, level=0.95, seed=0):
    """(low, high): a bootstrap interval at `level` of median(ours_ms) /
    median(best_ms), from `resamples` resamplings (seeded: the same samples
    give the same interval). Where both lists have the same length, sample i
    of each was taken in the same round-robin round, under the same state of
    the machine, and the rounds are resampled as pairs; otherwise each list
    on its own. None with fewer than 5 samples on either side."""
    if len(ours_ms) < 5 or len(best_ms) < 5:
        return None
    rng = random.Random(seed)
    n, m = len(ours_ms), len(best_ms)
    ratios = []
    for _ in range(resamples):
        if n == m:
            idx = [rng.randrange(n) for _ in range(n)]
            o, b = [ours_ms[i] for i in idx], [best_ms[i] for i in idx]
        else:
            o, b = rng.choices(ours_ms, k=n), rng.choices(best_ms, k=m)
        ratios.append(statistics.median(o) / statistics.median(b))
    ratios.sort()
    tail = (1 - level) / 2
    return (ratios[int(tail * resamples)],
            ratios[min(resamples - 1, int((1 - tail) * resamples))])


def reps_within(budget_s, first_call_s, wanted, floor=3):
    """How many timed repetitions fit a per-peer time budget, judged from the
    warm-up call: `wanted` when they fit, else what fits but at least
    `floor` (at least 1 when even one call is over the budget)."""
    if first_call_s <= 0 or first_call_s * wanted <= budget_s:
        return wanted
    fit = int(budget_s // first_call_s)
    if fit >= floor:
        return fit
    return max(1, min(floor, fit))


def best_peer(cells, ours):
    """(name, median_ms) of the fastest peer other than `ours` with a
    measurement; (None, None) when none has one. `cells` maps peer name to a
    summary dict (summarize) or an error string."""
    best = (None, None)
    for name, cell in cells.items():
        if name == ours or not isinstance(cell, dict):
            continue
        if best[1] is None or cell["median_ms"] < best[1]:
            best = (name, cell["median_ms"])
    return best


def fmt_ms(x):
    """Milliseconds with 3 significant digits at least, no exponent."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_cell(cell, wanted_reps=None):
    """A table cell: median ms (with the rep count when fewer than wanted),
    `-` when the peer does not run the workload, or the error text."""
    if cell is None:
        return "-"
    if isinstance(cell, str):
        return cell.replace("|", "/").replace("\n", " ")[:80]
    text = fmt_ms(cell["median_ms"])
    if wanted_reps is not None and cell["n"] < wanted_reps:
        text += f" (n={cell['n']})"
    return text


def ratio_text(ours, best, best_cell=None):
    """ours' median over `best` (ms), and where both cells carry samples the
    95% interval of ratio_interval in parentheses: "0.97x (0.94-1.00)"."""
    if not isinstance(ours, dict) or best is None:
        return "-"
    text = f"{ours['median_ms'] / best:.2f}x"
    if isinstance(best_cell, dict) and "samples_ms" in ours and "samples_ms" in best_cell:
        interval = ratio_interval(ours["samples_ms"], best_cell["samples_ms"])
        if interval:
            text += f" ({interval[0]:.2f}-{interval[1]:.2f})"
    return text


def run_claims(per_run_cells, ours, other_load=None, limit=None):
    """Each run's ours / best (ratio_text, best measured in that run) and
    the verdict over the runs: (texts, verdict). `other_load` lists each
    run's other-load cores (LoadMeter); a run above `limit` is loaded."""
    texts, intervals, loaded = [], [], []
    for r, cells in enumerate(per_run_cells):
        load = other_load[r] if other_load else None
        loaded.append(limit is not None and load is not None and load > limit)
        if cells is None:
            texts.append("-")
            intervals.append(None)
            continue
        name, best = best_peer(cells, ours)
        mine = cells.get(ours)
        texts.append(ratio_text(mine, best, cells.get(name)))
        ok = isinstance(mine, dict) and isinstance(cells.get(name), dict)
        intervals.append(ratio_interval(mine["samples_ms"], cells[name]["samples_ms"])
                         if ok else None)
    return texts, verdict(intervals, loaded)


def _load_text(loads, limit):
    """Per-run other load in cores, `!` where over the limit."""
    return " · ".join("-" if x is None else f"{x:.1f}" + ("!" if limit is not None and x > limit
                                                          else "")
                      for x in loads)


def latency_table(rows, peers, ours, wanted_reps, limit=None):
    """rows: [{"workload", "threads", "cells": {peer: summary|error|None}}]
    -> markdown with one column per peer (median ms), the best peer and
    ours / best. Rows merged from several runs (merge_runs: "runs",
    "other_load") show ours / best of each run, the verdict and each run's
    other load instead; a single run's rows show their `load` column (load
    average) when they carry one."""
    merged = any("runs" in r for r in rows)
    several = any(len(r.get("runs", [])) > 1 for r in rows)
    has_load = not merged and any("load" in r for r in rows)
    head = ["workload", "threads"] + peers + ["best peer"]
    align = ["---", "---:"] + ["---:"] * len(peers) + ["---"]
    if merged:
        head += ["ours / best" + (", each run" if several else "")]
        head += ["verdict"] if several else []
        head += ["other load (cores)"]
        align += ["---:"] + (["---"] if several else []) + ["---:"]
    else:
        head, align = head + ["ours / best"], align + ["---:"]
    if has_load:
        head, align = head + ["load"], align + ["---:"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    for row in rows:
        cells = row["cells"]
        name, best = best_peer(cells, ours)
        vals = [row["workload"], str(row["threads"])]
        vals += [fmt_cell(cells.get(p), wanted_reps * len(row.get("runs", [0]))) for p in peers]
        vals.append(name or "-")
        if merged:
            texts, v = run_claims(row["runs"], ours, row.get("other_load"), limit)
            vals += [" · ".join(texts)] + ([v] if several else [])
            vals.append(_load_text(row.get("other_load", []), limit))
        else:
            vals.append(ratio_text(cells.get(ours), best, cells.get(name)))
        if has_load:
            vals.append(f"{row['load']:.1f}" if "load" in row else "-")
        lines.append("| " + " | ".join(vals) + " |")
    return "\n".join(lines)


def median_ratio(cell, ref):
    """cell's median over ref's as "1.23x"; "-" unless both are measured."""
    if not isinstance(cell, dict) or not isinstance(ref, dict):
        return "-"
    return f"{cell['median_ms'] / ref['median_ms']:.2f}x"


def throughput_table(rows, flops, ours, library):
    """rows: [{"workload", "threads", "back_to_back": {peer: summary with
    per-sample peaks (summarize)|error}}], flops: {workload: FLOPs} ->
    markdown: GFLOP/s (of the median sample) and % of peak (percent_of_peak)
    of `ours` and of the fastest other peer, ours / best with its interval,
    and ours over `library` (a reference implementation's median). Rows
    merged from several runs pool the samples for the GFLOP/s and % of peak
    and give both ratios of each run ("run 1 · run 2"). Rows without
    back-to-back cells are left out."""
    lines = ["| GEMM | threads | ours GFLOP/s | ours % of peak | best peer "
             "| best peer GFLOP/s | best peer % of peak | ours / best "
             f"| ours / {library} |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]

    def gflops(cell, f):
        return f"{f / cell['median_ms'] / 1e6:.1f}" if isinstance(cell, dict) else "-"

    def pct(cell, f):
        p = percent_of_peak(cell, f)
        return "-" if p is None else f"{p:.0f}%"
    for row in rows:
        cells = row.get("back_to_back")
        if not cells or row["workload"] not in flops:
            continue
        f = flops[row["workload"]]
        mine = cells.get(ours)
        name, best = best_peer(cells, ours)
        per_run = [c for c in row.get("back_to_back_runs", [cells]) if c is not None]
        vs_best = " · ".join(ratio_text(c.get(ours), best_peer(c, ours)[1],
                                        c.get(best_peer(c, ours)[0])) for c in per_run)
        vs_lib = " · ".join(median_ratio(c.get(ours), c.get(library)) for c in per_run)
        lines.append(
            f"| {row['workload']} | {row['threads']} | "
            f"{gflops(mine, f) if isinstance(mine, dict) else fmt_cell(mine)} | "
            f"{pct(mine, f)} | {name or '-'} | {gflops(cells.get(name), f)} | "
            f"{pct(cells.get(name), f)} | {vs_best} | {vs_lib} |")
    return "\n".join(lines)


def compile_table(rows, peers):
    """rows: [{"workload", "times": {peer: seconds|error str}, "first":
    {peer: seconds}}] -> markdown: the compile time, and `+ ` the first
    call's where the row has it (a peer may do work there that others do
    when compiling: ours makes its oneDNN primitives and times their
    kernels)."""
    lines = ["| workload | " + " | ".join(peers) + " |",
             "| --- | " + " | ".join(["---:"] * len(peers)) + " |"]
    for row in rows:
        vals = []
        for p in peers:
            t = row["times"].get(p)
            first = row.get("first", {}).get(p)
            if t is None:
                vals.append("-")
            elif isinstance(t, str):
                vals.append(t.replace("|", "/")[:80])
            elif first is None:
                vals.append(f"{t:.2f}")
            else:
                vals.append(f"{t:.2f} + {first:.2f}")
        lines.append(f"| {row['workload']} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def replace_section(text, body, begin=BEGIN_MARKER, end=END_MARKER):
    """Puts `body` between the markers of `text` (appended with its markers
    when absent), so a rerun replaces the previous tables."""
    block = f"{begin}\n{body.rstrip()}\n{end}"
    i = text.find(begin)
    if i < 0:
        return text.rstrip("\n") + "\n\n" + block + "\n"
    j = text.find(end, i)
    if j < 0:
        raise ValueError("docs section: begin marker without end marker")
    return text[:i] + block + text[j + len(end):]


def burst_calls(first_call_s, seconds=0.05, floor=3, cap=50):
    """Timed calls in one back-to-back burst: about `seconds` of them by
    the warm-up call's time, at least `floor`, at most `cap`."""
    if first_call_s <= 0:
        return cap
    return max(floor, min(cap, math.ceil(seconds / first_call_s)))


def run_burst(peer, calls):
    """An untimed call of `peer`, then `calls` timed ones back to back: their
    seconds. A peer in a worker process (ours) makes them all there in one
    request (`run_burst`), so no pipe round trip lies between them."""
    burst = getattr(peer, "run_burst", None)
    if burst is not None:
        return burst(calls)
    peer.run()
    return [peer.run()[0] for _ in range(calls)]


def run_after_untimed(peer):
    """An untimed call of `peer` and then a timed one, back to back: the
    timed call's (seconds, outputs). A peer in a worker process (ours) makes
    both calls there in one request (`run_after_untimed`), so no pipe round
    trip lies between them, as none does for the peers in this process."""
    both = getattr(peer, "run_after_untimed", None)
    if both is not None:
        return both()
    peer.run()
    return peer.run()


# ---------------------------------------------------------------- load guard
def parse_proc_stat_busy(text):
    """Busy jiffies of the whole machine from /proc/stat's first line:
    user, nice, system, irq, softirq and steal (time the hypervisor gave
    another guest, which a timed call on a VM loses too)."""
    fields = text.splitlines()[0].split()
    if fields[0] != "cpu":
        raise ValueError("/proc/stat: first line is not the cpu total")
    v = [int(x) for x in fields[1:9]]
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]


def parse_pid_stat(text):
    """(pid, ppid, jiffies) of one /proc/PID/stat: its own user and system
    time plus that of the children it has waited for (a finished compile
    subprocess counts through its parent)."""
    pid = int(text[:text.index(" ")])
    rest = text[text.rindex(")") + 2:].split()
    # rest[0] is field 3 (state); utime, stime, cutime, cstime are 14-17.
    return pid, int(rest[1]), sum(int(x) for x in rest[11:15])


def tree_jiffies(stats, root):
    """Jiffies of `root` and all its descendants, from parse_pid_stat
    tuples of every process."""
    children = {}
    for pid, ppid, _ in stats:
        children.setdefault(ppid, []).append(pid)
    own = {pid: j for pid, _, j in stats}
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += own.get(pid, 0)
        todo += children.get(pid, [])
    return total


def other_cores(busy0, busy1, own0, own1, seconds, hz):
    """Cores kept busy by everything but this benchmark's process tree over
    `seconds`: the machine's busy jiffies less ours, per second."""
    if seconds <= 0:
        return 0.0
    return max(0.0, ((busy1 - busy0) - (own1 - own0)) / hz / seconds)


class LoadMeter:
    """Other load while a row is measured (Linux /proc; None elsewhere):
    start(), then cores() = the cores other processes and other guests used
    since, on average."""

    def __init__(self, root=None):
        import os
        self.root = root or os.getpid()
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.mark = None

    def _sample(self):
        import os
        import time
        try:
            with open("/proc/stat") as f:
                busy = parse_proc_stat_busy(f.read())
        except OSError:
            return None
        stats = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    stats.append(parse_pid_stat(f.read()))
            except (OSError, ValueError):
                continue  # it ended while we looked
        return time.perf_counter(), busy, tree_jiffies(stats, self.root)

    def start(self):
        self.mark = self._sample()

    def cores(self):
        now = self._sample()
        if now is None or self.mark is None:
            return None
        (t0, b0, o0), (t1, b1, o1) = self.mark, now
        return other_cores(b0, b1, o0, o1, t1 - t0, self.hz)


def verdict(intervals, loaded):
    """One claim from several runs: `intervals` is each run's (low, high)
    bootstrap interval of ours / best (None where a run has too few
    samples), `loaded` whether other load was over the limit in that run.
    "ahead" / "behind" when every run's interval lies below / above 1.00,
    "tie" when every interval holds 1.00 or they disagree by no more,
    "mixed" when one run says ahead and another behind, "void" when a run
    was under load or fewer than two runs have an interval."""
    if any(loaded) or sum(iv is not None for iv in intervals) < 2:
        return "void"
    ahead = [iv[1] < 1.0 for iv in intervals if iv]
    behind = [iv[0] > 1.0 for iv in intervals if iv]
    if all(ahead):
        return "ahead"
    if all(behind):
        return "behind"
    if any(ahead) and any(behind):
        return "mixed"
    return "tie"


def merge_runs(runs):
    """Rows of several runs of the same workloads -> one row per (workload,
    threads): "cells" pools every run's samples per peer (summarize, peaks
    kept with their calls), "runs" keeps each run's own cells (None where
    the run lacks the row), and likewise "back_to_back" / "back_to_back_runs";
    "load" and "other_load" become per-run lists."""
    order, merged = [], {}
    for r, rows in enumerate(runs):
        for row in rows:
            key = (row["workload"], row["threads"])
            if key not in merged:
                order.append(key)
                merged[key] = {"workload": row["workload"], "threads": row["threads"],
                               "runs": [None] * len(runs), "b2b_runs": [None] * len(runs),
                               "load": [None] * len(runs), "other_load": [None] * len(runs)}
            m = merged[key]
            m["runs"][r] = row["cells"]
            m["b2b_runs"][r] = row.get("back_to_back")
            m["load"][r] = row.get("load")
            m["other_load"][r] = row.get("other_load")
    out = []
    for key in order:
        m = merged[key]
        m["cells"] = _pool([c for c in m["runs"] if c is not None])
        b2b = m.pop("b2b_runs")
        if any(c is not None for c in b2b):
            m["back_to_back"] = _pool([c for c in b2b if c is not None])
            m["back_to_back_runs"] = b2b
        out.append(m)
    return out


def _pool(cells_list):
    """{peer: summary} of several runs -> one: the samples (and peaks) of
    every run in run order; a peer with an error in any run keeps the first
    error text unless another run measured it."""
    peers = []
    for cells in cells_list:
        peers += [p for p in cells if p not in peers]
    out = {}
    for p in peers:
        measured = [c[p] for c in cells_list if isinstance(c.get(p), dict)]
        if not measured:
            out[p] = next((c[p] for c in cells_list if c.get(p) is not None), None)
            continue
        ms = [x for c in measured for x in c["samples_ms"]]
        peaks = None
        if all("peaks" in c for c in measured):
            peaks = [x for c in measured for x in c["peaks"]]
        out[p] = summarize([x / 1e3 for x in ms], peaks)
    return out
