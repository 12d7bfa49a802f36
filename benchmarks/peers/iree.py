"""IREE (iree-base-compiler + iree-base-runtime from PyPI): the ONNX file is
imported with iree-import-onnx (`python -m iree.compiler.tools.import_onnx`)
and compiled by iree-compile for llvm-cpu, both as subprocesses with the
compile timeout. The flags are those IREE's docs give for CPU performance
(iree.dev, "Optimization options" and "CPU deployment"): the host CPU as
target, `--iree-opt-level=O3` (the default is O0), data tiling and the
ukernels; where that fails to compile, the run falls back to the target CPU
flag alone and records it. At run time a fresh local-task driver
per thread count (`--task_topology_max_group_count=N`; the flag is read when
a driver is created, and the cached one of iree.runtime.get_driver would keep
the first count)."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .common import PeerError, Timeout


TUNED_FLAGS = ["--iree-opt-level=O3", "--iree-opt-data-tiling",
               "--iree-llvmcpu-enable-ukernels=all"]


def _tool(name):
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


class Iree:
    name = "IREE"

    def __init__(self, work_dir, compile_timeout):
        self.work_dir, self.compile_timeout = Path(work_dir), compile_timeout

    def supports(self, wl):
        return wl.kind != "train"

    def _sub(self, cmd, what, deadline):
        left = deadline - time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=max(1, left))
        except subprocess.TimeoutExpired:
            raise Timeout(f"timeout (> {self.compile_timeout:.0f} s)")
        if r.returncode:
            lines = [ln for ln in r.stderr.splitlines() if "error" in ln] or r.stderr.splitlines()
            raise PeerError(f"error: {what}: {(lines[0] if lines else '?')[-70:]}")

    def prepare(self, wl, onnx_path, inputs):
        import onnx
        self.inputs = inputs
        self.func = onnx.load(str(onnx_path), load_external_data=False).graph.name
        stem = self.work_dir / Path(onnx_path).stem
        mlir, vmfb = stem.with_suffix(".iree.mlir"), stem.with_suffix(".vmfb")
        t0 = time.perf_counter()
        deadline = t0 + self.compile_timeout
        self._sub([sys.executable, "-m", "iree.compiler.tools.import_onnx", str(onnx_path), "-o",
                   str(mlir)], "import", deadline)
        t1 = time.perf_counter()
        compiler = _tool("iree-compile")
        if compiler is None:
            raise PeerError("error: iree-compile not found")
        base = [compiler, str(mlir), "--iree-hal-target-device=local",
                "--iree-hal-local-target-device-backends=llvm-cpu",
                "--iree-llvmcpu-target-cpu=host", "-o", str(vmfb)]
        info = {"flags": "tuned"}
        try:
            self._sub(base + TUNED_FLAGS, "compile", deadline)
        except Timeout:
            raise
        except PeerError as e:
            info = {"flags": "base", "tuned_error": str(e)}
            t1 = time.perf_counter()
            self._sub(base, "compile", deadline)
        t2 = time.perf_counter()
        self.vmfb = vmfb.read_bytes()
        return {"import_s": t1 - t0, "compile_s": t2 - t1, **info}

    def set_threads(self, n):
        import iree.runtime as rt
        from iree.runtime import _binding
        rt.flags.parse_flags(f"--task_topology_max_group_count={n}")
        device = _binding.create_hal_driver("local-task").create_default_device()
        self.ctx = rt.SystemContext(config=rt.Config(device=device))
        self.ctx.add_vm_module(rt.VmModule.copy_buffer(self.ctx.instance, self.vmfb))
        self.fn = self.ctx.modules.module[self.func]
        return {}

    def run(self, want_output=False):
        t = time.perf_counter()
        out = self.fn(*self.inputs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        host = [np.asarray(o.to_host()) for o in outs]
        return time.perf_counter() - t, host

    def close(self):
        self.fn = self.ctx = None
