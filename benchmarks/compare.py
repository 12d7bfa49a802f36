#!/usr/bin/env python3
"""Side by side with peers (issue 5): ours vs onnxruntime, PyTorch eager,
torch.compile, IREE, and numpy / torch's oneDNN for GEMM, in one process run.
Each peer is configured as its own docs recommend for CPU (see
peers/torch_peers.py and peers/iree.py); --runs (default 2) runs every
workload again after the first pass, and each claim is reported from every
run with a verdict. Each row waits for a quiet machine and records the
cores other processes used while it ran (common.LoadMeter); a row above
--max-other-load is void.

Per workload and thread count, every peer is warmed up once, then timed for
--reps repetitions, round-robin over the peers (the order rotates each
repetition); median and min per peer. Each timed call follows a pause of
--gap seconds and an untimed call of the same peer, back to back (ours
makes both in its worker process, with no pipe round trip between them
that the in-process peers do not have): OpenMP and
onnxruntime pools spin for up to ~200 ms after a call, and on 2 cores a
peer timed inside another's spin measured 5 ms for a 0.1 ms GEMM. A peer whose warm-up call says the
repetitions would not fit --budget seconds runs fewer (shown as n=...).
GEMMs then run --burst-rounds rounds of back-to-back bursts per peer (a
pause, an FMA peak sample, ~50 ms of calls), for a throughput table next to
the latency one: the kernel's speed once running, against the peak of the
same moment.
Compile and run timeouts are recorded as "timeout", failures as "error:
...", never dropped. Writes build/bench/results.json, the tables between the
markers of docs/performance.md (not with --quick unless --docs is given)
and a PNG bar chart. Run through scripts/bench.sh; not a test.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import common, peak, workloads  # noqa: E402
from peers.common import PeerError  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BASELINE = "ours (baseline)"
PEER_ORDER = ["ours", BASELINE, "onnxruntime", "torch eager", "torch.compile", "IREE", "numpy",
              "torch oneDNN"]
CHECK_RTOL = 1e-3  # max |ours - torch| / max |torch| above this is flagged


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def make_peers(args, work_dir):
    """The peers --peers names (all by default), and with --baseline a second
    "ours" from another checkout and build (an A/B of two commits)."""
    from peers import iree, numpy_blas, ort, ours, torch_peers
    peers = [ours.Ours(str(REPO), str(args.build_dir), args.compile_timeout, args.run_timeout),
             ort.OnnxRuntime(), torch_peers.TorchEager(), torch_peers.TorchCompile(),
             iree.Iree(work_dir, args.compile_timeout), numpy_blas.NumpyBlas(),
             torch_peers.TorchOneDNN()]
    if args.peers:
        wanted = args.peers.split(",")
        unknown = [w for w in wanted if w not in [p.name for p in peers]]
        if unknown:
            raise SystemExit(f"--peers: unknown {', '.join(unknown)} (known: "
                             + ", ".join(p.name for p in peers) + ")")
        peers = [p for p in peers if p.name in wanted]
    if args.baseline:
        root, _, build = args.baseline.partition(":")
        base = ours.Ours(root, build or os.path.join(root, "build"), args.compile_timeout,
                         args.run_timeout)
        base.name = BASELINE
        peers.insert(1, base)
    return peers


def export_onnx(wl, module, inputs, path):
    import torch
    module.eval()
    names = [f"in{i}" for i in range(len(inputs))]
    # Not under no_grad: there TransformerEncoderLayer takes its fused fast
    # path, which has no ONNX export.
    torch.onnx.export(module, tuple(torch.from_numpy(a) for a in inputs), str(path),
                      opset_version=17, input_names=names, output_names=["out"])


def rel_err(got, ref):
    if got is None or ref is None:
        return None
    g, r = np.asarray(got[0], np.float64), np.asarray(ref[0], np.float64)
    if g.shape != r.shape:
        return float("inf")
    return float(np.max(np.abs(g - r)) / max(np.max(np.abs(r)), 1e-6))


def _err(e):
    """Table text of a peer's exception: PeerErrors carry theirs."""
    if isinstance(e, PeerError):
        return str(e)
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"error: {type(e).__name__}: {first[:60]}"


def wait_for_quiet(meter, args):
    """Waits (up to --quiet-wait seconds) for a 2 s window in which other
    processes and guests use at most --max-other-load cores: a row is not
    started while a build runs. Returns the last window's load."""
    deadline = time.perf_counter() + args.quiet_wait
    while True:
        meter.start()
        time.sleep(2.0)
        load = meter.cores()
        if load is None or load <= args.max_other_load or time.perf_counter() > deadline:
            return load
        log(f"  waiting for a quiet machine: other load {load:.2f} cores")


def bench_workload(wl, peers, args, work_dir, threads_list, sampler=None, meter=None):
    """Returns {"rows": [per thread count], "compile": {...}, "check": {...}}.
    With a LoadMeter, each row waits for a quiet machine and records the
    cores other processes used while it ran ("other_load").
    With a peak.Sampler, a GEMM's timed calls each follow a ~30 ms sample of
    the FMA peak, taken between two pauses (after the previous peer's
    threads stop spinning; before the same idle gap every call follows),
    kept with the call for percent_of_peak."""
    log(f"== {wl.name}")
    onnx_path = None
    if wl.kind == "train":
        inputs = workloads.train_inputs(workloads.TRAIN_MLP if wl.make == "mlp"
                                        else workloads.TRAIN_TF)
    else:
        module, inputs = wl.make()
        onnx_path = work_dir / (re.sub(r"[^A-Za-z0-9]+", "_", wl.name) + ".onnx")
    active = [p for p in peers if p.supports(wl)]
    failed = {}   # peer name -> error text for every thread count
    if onnx_path is not None:
        try:
            export_onnx(wl, module, inputs, onnx_path)
        except Exception as e:  # the ONNX peers cannot run; the others still do
            for p in active:
                if p.name in ("ours", BASELINE, "onnxruntime", "IREE"):
                    failed[p.name] = "error: torch.onnx export: " + _err(e)[7:]
    comp = {}     # peer name -> compile seconds (or error)
    first = {}    # peer name -> seconds of its first call (first thread count)
    detail = {}
    for p in active:
        if p.name in failed:
            continue
        t = time.perf_counter()
        try:
            info = p.prepare(wl, onnx_path, inputs) or {}
            detail[p.name] = info
            if "compile_s" in info:
                comp[p.name] = info["compile_s"]
                if "import_s" in info:
                    comp[p.name] += info["import_s"]
        except Exception as e:
            failed[p.name] = comp[p.name] = _err(e)
        log(f"  prepare {p.name}: {time.perf_counter() - t:.1f} s {failed.get(p.name, '')}")
    rows, check = [], {}
    for n in threads_list:
        cells = {p.name: failed.get(p.name) for p in active}
        live, reps, samples, peaks, warm, ref = [], {}, {}, {}, {}, None
        per_call_peak = sampler is not None and wl.kind == "gemm"
        if meter is not None:
            wait_for_quiet(meter, args)
            meter.start()
        for p in active:
            if p.name in failed:
                continue
            try:
                info = p.set_threads(n) or {}
                if "compile_s" in info and p.name not in comp:
                    comp[p.name] = info["compile_s"]
                extra = {k: v for k, v in info.items() if k != "compile_s"}
                if extra:
                    detail.setdefault(p.name, {}).setdefault("threads", {})[n] = extra
                if args.gap > 0:
                    # The warm-up is where a peer makes its choices (ours
                    # times oneDNN's kernels): not while another peer's
                    # threads still spin.
                    time.sleep(args.gap)
                dt, out = p.run(want_output=True)  # warm-up
                if n == threads_list[0]:
                    first[p.name] = dt
                if p.name == "torch eager":
                    ref = out
                samples[p.name], peaks[p.name] = [], []
                reps[p.name] = common.reps_within(args.budget, dt, args.reps)
                warm[p.name] = dt
                live.append(p)
                p._warm_out = out
            except Exception as e:
                cells[p.name] = _err(e)
                if isinstance(e, common.Timeout):
                    failed[p.name] = str(e)
                    comp.setdefault(p.name, str(e))
        if wl.kind != "train":
            for p in live:
                err = rel_err(p._warm_out, ref)
                if err is not None:
                    check.setdefault(p.name, {})[n] = err
        for p in live:
            p._warm_out = None
        for r in range(args.reps):
            for name in common.round_robin([p.name for p in live], r):
                p = next(q for q in live if q.name == name)
                if len(samples[name]) >= reps[name] or isinstance(cells.get(name), str):
                    continue
                try:
                    if args.gap > 0:
                        # The previous peer's threads stop spinning; this
                        # one's wake up in the untimed call.
                        time.sleep(args.gap)
                    pk = None
                    if per_call_peak:
                        pk = sampler.sample(n)
                        # The burst ran on this process's threads: an
                        # in-process peer would start on a core it just
                        # warmed, ours (a worker process) maybe not.
                        time.sleep(args.gap)
                    if args.gap > 0:
                        dt, _ = common.run_after_untimed(p)
                    else:
                        dt, _ = p.run()
                    samples[name].append(dt)
                    peaks[name].append(pk)
                except Exception as e:
                    cells[name] = _err(e)
                    if isinstance(e, common.Timeout):
                        failed[name] = str(e)
        for p in live:
            if not isinstance(cells.get(p.name), str):
                cells[p.name] = common.summarize(samples[p.name],
                                                 peaks[p.name] if per_call_peak else None)
        row = {"workload": wl.name, "threads": n, "cells": cells,
               "load": round(os.getloadavg()[0], 2)}
        if per_call_peak and args.burst_rounds > 0:
            row["back_to_back"] = back_to_back(
                [p for p in live if not isinstance(cells.get(p.name), str)],
                warm, n, args, sampler)
            log("  threads %d back to back: %s" % (n, ", ".join(
                f"{k} {common.fmt_cell(v)}" for k, v in row["back_to_back"].items())))
        other = meter.cores() if meter is not None else None
        if other is not None:
            row["other_load"] = round(other, 3)
        rows.append(row)
        log("  threads %d: %s%s" % (n, ", ".join(
            f"{k} {common.fmt_cell(v)}" for k, v in cells.items()),
            "" if other is None else f"; other load {other:.2f} cores"))
    for p in active:
        try:
            p.close()
        except Exception as e:
            log(f"  close {p.name}: {_err(e)}")
    return {"rows": rows,
            "compile": {"workload": wl.name, "times": comp, "first": first},
            "check": check, "detail": {k: {a: b for a, b in v.items() if a != "loss"}
                                       for k, v in detail.items()}}


def back_to_back(live, warm, threads, args, sampler):
    """GEMM throughput in bursts: per round (round-robin over the peers), a
    pause (the previous peer's threads stop spinning), a ~30 ms sample of the
    FMA peak, then an untimed call and about 50 ms of timed calls back to
    back (common.burst_calls of the warm-up call's time). A round's sample is
    the median call of its burst, kept with the peak sampled right before
    it: {peer: summarize cell with peaks}. Where the table above times one
    call after an idle gap (a model's latency as a server sees it), this is
    the kernel's speed once running, which is what "% of peak" asks of a
    GEMM library."""
    times = {p.name: [] for p in live}
    peaks = {p.name: [] for p in live}
    cells = {}
    for r in range(args.burst_rounds):
        for name in common.round_robin([p.name for p in live], r):
            if name in cells:
                continue
            p = next(q for q in live if q.name == name)
            try:
                time.sleep(args.gap)
                pk = sampler.sample(threads)
                burst = common.run_burst(p, common.burst_calls(warm[name]))
                times[name].append(statistics.median(burst))
                peaks[name].append(pk)
            except Exception as e:
                cells[name] = _err(e)
    for p in live:
        cells.setdefault(p.name, common.summarize(times[p.name], peaks[p.name]))
    return cells


def environment(peaks):
    import onnxruntime
    import torch
    try:
        from iree.compiler import version as iv
        iree_v = getattr(iv, "VERSION", "?")
    except Exception:
        iree_v = "?"
    cpu = "?"
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                   if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": cpu,
            "cores": os.cpu_count(), "loadavg": os.getloadavg(), "python": platform.python_version(),
            "torch": torch.__version__, "onnxruntime": onnxruntime.__version__, "iree": iree_v,
            "numpy": np.__version__, "peaks": peaks}


def gemm_table(rows, peaks, wls):
    """GFLOP/s of ours and the best peer, as % of the peak measured at the
    start of the run and (median over the calls) of the peak sampled next
    to each call; ours over torch's oneDNN matmul."""
    flops = {w.name: w.flops for w in wls if w.kind == "gemm"}
    lines = ["| GEMM | threads | ours GFLOP/s | ours % of run peak | ours % of call peak "
             "| best peer | best peer GFLOP/s | best peer % of run peak "
             "| best peer % of call peak | ours / oneDNN |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]

    def pct(x):
        return "-" if x is None else f"{x:.0f}%"
    for row in rows:
        if row["workload"] not in flops:
            continue
        f, pk = flops[row["workload"]], peaks[str(row["threads"])][0]
        cells = row["cells"]
        ours = cells.get("ours")
        name, best = common.best_peer(cells, "ours")
        og = f / ours["median_ms"] / 1e6 if isinstance(ours, dict) else None
        bg = f / best / 1e6 if best else None
        vs = " · ".join(common.median_ratio(c.get("ours"), c.get("torch oneDNN"))
                        for c in row.get("runs", [cells]) if c is not None)
        lines.append(
            f"| {row['workload']} | {row['threads']} | "
            f"{'-' if og is None else f'{og:.1f}'} | "
            f"{pct(None if og is None else 100 * og / (pk / 1e9))} | "
            f"{pct(common.percent_of_peak(ours, f))} | {name or '-'} | "
            f"{'-' if bg is None else f'{bg:.1f}'} | "
            f"{pct(None if bg is None else 100 * bg / (pk / 1e9))} | "
            f"{pct(common.percent_of_peak(cells.get(name), f))} | {vs} |")
    return "\n".join(lines)


def peer_configs(results):
    """Where a peer ran in other than its intended configuration (IREE's
    tuned flags or torch.compile's max-autotune failed and it fell back),
    one sentence per peer naming the workloads."""
    fallbacks = {}
    for res in results:
        for peer, info in res.get("detail", {}).items():
            infos = [info] + list(info.get("threads", {}).values())
            if any(i.get("flags") == "base" or i.get("mode") == "default" for i in infos):
                fallbacks.setdefault(peer, []).append(res["compile"]["workload"])
    out = []
    for peer, names in fallbacks.items():
        what = ("the target CPU flag alone (the tuned flags failed to compile)"
                if peer == "IREE" else "the default mode (max-autotune failed to compile)")
        out.append(f"{peer} ran with {what} on: {', '.join(names)}.")
    return " ".join(out)


def render_markdown(runs, env, args, wls, png_rel, missing=()):
    """runs: each run's list of bench_workload results. Medians pool the
    runs; ratios are given per run with a verdict (common.run_claims);
    compile times and first calls are the first run's (empty caches)."""
    results = runs[0]
    rows = common.merge_runs([[r for res in run for r in res["rows"]] for run in runs])
    peers = [p for p in PEER_ORDER if any(p in r["cells"] for r in rows)]
    pk = ", ".join(f"{n} thread{'s' if n != '1' else ''}: {v[0] / 1e9:.1f} GFLOP/s"
                   for n, v in env["peaks"].items())
    how = next(iter(env["peaks"].values()))[1]
    out = [f"Run of {env['date']}: {env['cpu']}, {env['cores']} cores; torch {env['torch']}, "
           f"onnxruntime {env['onnxruntime']}, IREE {env['iree']}, numpy {env['numpy']}. "
           f"Load average at start {env['loadavg'][0]:.2f}, at end "
           f"{env['end_loadavg'][0]:.2f}. {args.reps} repetitions per peer, round-robin, "
           + (f"each after a {args.gap:g} s pause and an untimed call; " if args.gap > 0
              else "back to back; ") +
           f"budget {args.budget:.0f} s per peer and thread count (fewer repetitions shown as "
           f"n=...); compile timeout {args.compile_timeout:.0f} s, call timeout "
           f"{args.run_timeout:.0f} s. Measured fp32 peak ({how}): {pk}. "
           f"{len(runs)} run{'s' if len(runs) > 1 else ''} of every workload, one after the "
           "other; each row waits for a quiet machine (other processes and guests at most "
           f"{args.max_other_load:g} cores over 2 s) and records the cores others used "
           "while it ran.",
           "", "Median ms per call over all runs (lower is better); *ours / best* is ours' "
           "median over the fastest other peer's in each run, and in parentheses its 95% "
           "bootstrap interval (2000 resamplings of the repetitions, a round's samples kept "
           "together). *Verdict*: ahead or behind where every run's interval lies below or "
           "above 1.00, tie where they hold it, mixed where runs disagree, void where a run "
           f"had other load above {args.max_other_load:g} cores (marked `!`) or too few "
           "samples.", "",
           common.latency_table(rows, peers, "ours", args.reps, args.max_other_load), ""]
    configs = peer_configs(results)
    if configs:
        out += [configs, ""]
    if missing:
        out += ["Not measured in this run (stopped for time): " + ", ".join(missing) + ".", ""]
    checks = []
    for res in [res for run in runs for res in run]:
        for p, errs in res["check"].items():
            bad = {n: e for n, e in errs.items() if e > CHECK_RTOL}
            if bad:
                checks.append(f"{res['compile']['workload']}: {p} max rel. error vs torch "
                              + ", ".join(f"{e:.2g} ({n} thr)" for n, e in bad.items()))
    out += ["Outputs are checked against torch eager (max abs difference over max |torch|, "
            f"flagged above {CHECK_RTOL:g}): "
            + ("; ".join(checks) if checks else "all within.") + "", ""]
    cpeers = [p for p in ["ours", BASELINE, "onnxruntime", "torch.compile", "IREE"]
              if any(p in r["compile"]["times"] or p in r["compile"]["first"]
                     for r in results)]
    out += ["Compile time in seconds: ours = ONNX import + `_core.compile` (training: the "
            "first TrainStep call, which traces and compiles); IREE = iree-import-onnx + "
            "iree-compile; torch.compile = its first call (1 thread, inductor's disk cache "
            "empty at the start of the run); onnxruntime = session "
            "creation (1 thread). `+` the first call after it (1 thread), where a peer "
            "may finish preparing: ours makes its oneDNN primitives and times their "
            "kernels there.", "",
            common.compile_table([r["compile"] for r in results], cpeers), ""]
    if any(w.kind == "gemm" for w in wls):
        out += ["GEMM throughput against the fp32 peak of the same thread count: *run peak* "
                "is the one measured at the start of the run; *call peak* is the median over "
                "the timed calls of each call's throughput over the FMA peak sampled (best of "
                "3 bursts of ~10 ms) taken before it, between the two pauses that precede it. "
                "This VM's clock moves "
                "from one second to the next, so the call peak is the one that tells how "
                "much of the core a kernel uses.", "",
                gemm_table(rows, env["peaks"], wls), ""]
        flops = {w.name: w.flops for w in wls if w.kind == "gemm"}
        if any("back_to_back" in r for r in rows):
            out += ["GEMM back to back: after the timed calls above, "
                    f"{args.burst_rounds} rounds per peer (round-robin) of a "
                    f"{args.gap:g} s pause, a sample of the FMA peak (best of 3 bursts "
                    "of ~10 ms), an untimed call and then about 50 ms of calls back "
                    "to back (at least 3, at most 50). A round counts its median "
                    "call; *% of peak* is the median over the rounds of that call's "
                    "throughput over the peak sampled right before its burst. The "
                    "table above times a call after an idle gap, as a model's "
                    "latency on a server; this one is the kernel's speed once "
                    "running, the usual measure of a GEMM library.", "",
                    common.throughput_table(rows, flops, "ours", "torch oneDNN"), ""]
    if png_rel:
        out += [f"![ours and peers, time relative to the fastest]({png_rel})", ""]
    return "\n".join(out)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    threads = sorted({r["threads"] for r in rows})
    peers = [p for p in PEER_ORDER if any(isinstance(r["cells"].get(p), dict) for r in rows)]
    fig, axes = plt.subplots(len(threads), 1, figsize=(16, 4.5 * len(threads)), squeeze=False)
    for ax, n in zip(axes[:, 0], threads):
        sel = [r for r in rows if r["threads"] == n]
        width = 0.8 / max(1, len(peers))
        top = 1.0
        for i, p in enumerate(peers):
            xs, ys = [], []
            for j, r in enumerate(sel):
                cells = r["cells"]
                fastest = min((c["median_ms"] for c in cells.values() if isinstance(c, dict)),
                              default=None)
                c = cells.get(p)
                if isinstance(c, dict) and fastest:
                    xs.append(j + (i - len(peers) / 2 + 0.5) * width)
                    ys.append(c["median_ms"] / fastest)
            ax.bar(xs, ys, width, label=p)
            top = max([top] + ys)
        ax.set_yscale("log")
        ax.set_ylim(0.5, top * 2)
        ax.axhline(1.0, color="black", linewidth=0.6)
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels([r["workload"] for r in sel], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("time / fastest (log)")
        ax.set_title(f"{n} thread{'s' if n > 1 else ''}: median time relative to the fastest "
                     "(lower is better; missing bar = error/timeout/not run)")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few workloads, 3 repetitions")
    ap.add_argument("--only", help="regex over workload names")
    ap.add_argument("--reps", type=int, help="repetitions (default 10, --quick 3)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--budget", type=float, default=30.0,
                    help="seconds of timed calls per peer, workload and thread count")
    ap.add_argument("--gap", type=float, default=0.25,
                    help="seconds of pause, then an untimed call, before each timed call "
                    "(0: back to back)")
    ap.add_argument("--burst-rounds", type=int, default=10,
                    help="GEMM only: rounds of back-to-back bursts per peer after the "
                    "timed calls, for the throughput table (0: none)")
    ap.add_argument("--peers", help="comma-separated peer names to run (default: all)")
    ap.add_argument("--baseline", help="ROOT[:BUILD] of another checkout: its ours runs "
                    "as the peer 'ours (baseline)', for an A/B of two commits")
    ap.add_argument("--runs", type=int,
                    help="runs of every workload, one after the other; each claim is "
                    "reported from every run (default 2, --quick 1)")
    ap.add_argument("--max-other-load", type=float, default=0.25,
                    help="cores other processes may use while a row runs; a row waits "
                    "for this (up to --quiet-wait s) and is void above it")
    ap.add_argument("--quiet-wait", type=float, default=300.0)
    ap.add_argument("--compile-timeout", type=float, default=240.0)
    ap.add_argument("--run-timeout", type=float, default=90.0)
    ap.add_argument("--from-json", type=Path, help="render the tables of an earlier (possibly "
                    "partial) results.json instead of measuring")
    ap.add_argument("--build-dir", type=Path, default=REPO / "build")
    ap.add_argument("--docs", type=Path, help="markdown file whose marker section is replaced "
                    "(default docs/performance.md; --quick: none)")
    ap.add_argument("--png", type=Path, help="bar chart (default docs/images/bench-peers.png; "
                    "--quick: build/bench/quick.png)")
    args = ap.parse_args(argv)
    if args.reps is None:
        args.reps = 3 if args.quick else 10
    if args.runs is None:
        args.runs = 1 if args.quick else 2
    if args.runs < 1:
        ap.error("--runs needs at least 1")
    threads = [int(t) for t in args.threads.split(",")]
    work_dir = args.build_dir / "bench"
    work_dir.mkdir(parents=True, exist_ok=True)
    # torch.compile's compile time is a first compile: inductor's on-disk
    # cache (default /tmp/torchinductor_$USER) would otherwise hand it the
    # kernels of earlier runs. Set before anything imports torch.
    inductor_cache = tempfile.mkdtemp(prefix="inductor-cache-", dir=work_dir)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache
    docs = args.docs or (None if args.quick else REPO / "docs" / "performance.md")
    png = args.png or (work_dir / "quick.png" if args.quick
                       else REPO / "docs" / "images" / "bench-peers.png")

    wls = workloads.all_workloads()
    if args.quick:
        wls = [w for w in wls if w.quick]
    if args.only:
        wls = [w for w in wls if re.search(args.only, w.name)]
    if not wls:
        ap.error("no workload selected")
    missing = []
    if args.from_json:
        if not args.from_json.is_file():
            ap.error(f"--from-json: no file {args.from_json}")
        data = json.loads(args.from_json.read_text())
        env = data["env"]
        runs = data["runs"] if "runs" in data else [data["results"]]
        done = {r["compile"]["workload"] for r in runs[0]}
        missing = [w.name for w in workloads.all_workloads() if w.name not in done]
        wls = [w for w in workloads.all_workloads() if w.name in done]
        env.setdefault("end_loadavg", env["loadavg"])
        env.setdefault("seconds", 0)
    else:
        peaks = {str(n): peak.measure(work_dir, n) for n in threads}
        log("peak: " + ", ".join(f"{n}: {v[0] / 1e9:.1f} GFLOP/s" for n, v in peaks.items()))
        env = environment(peaks)
        peers = make_peers(args, work_dir)
        try:
            sampler = peak.Sampler(work_dir)
        except (OSError, subprocess.CalledProcessError) as e:
            sampler = None
            log(f"no per-call peak samples: {e}")
        meter = common.LoadMeter()
        runs = []
        t0 = time.time()
        for r in range(args.runs):
            log(f"=== run {r + 1} of {args.runs}")
            runs.append([])
            for wl in wls:
                runs[-1].append(bench_workload(wl, peers, args, work_dir, threads, sampler,
                                               meter))
                (work_dir / "results.json").write_text(json.dumps(
                    {"env": env, "runs": runs}, indent=1, default=str))
        env["end_loadavg"] = os.getloadavg()
        env["seconds"] = time.time() - t0
    if not args.from_json:
        (work_dir / "results.json").write_text(json.dumps({"env": env, "runs": runs},
                                                          indent=1, default=str))
    rows = common.merge_runs([[row for res in run for row in res["rows"]] for run in runs])
    plot(rows, png)
    png_rel = os.path.relpath(png, docs.parent) if docs else None
    md = render_markdown(runs, env, args, wls, png_rel, missing)
    (work_dir / "results.md").write_text(md + "\n")
    print(md)
    shutil.rmtree(inductor_cache, ignore_errors=True)
    if docs:
        docs.write_text(common.replace_section(docs.read_text() if docs.exists() else "", md))
        log(f"wrote {docs} and {png}")
    log(f"total {env['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is written. Leave without the interpreter's teardown: with
    # torch 2.5.1's inductor workers, onnxruntime and IREE's runtime loaded
    # in one process, it segfaulted after full runs, which turned a finished
    # benchmark into a failed command.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
