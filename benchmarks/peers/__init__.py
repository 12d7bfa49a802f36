"""Peers of the side-by-side benchmark (benchmarks/compare.py), one module
each. A peer has `name`, `supports(workload)`, `prepare(workload, onnx_path,
inputs) -> {"compile_s": ...}`, `set_threads(n) -> {...}`, `run(want_output)
-> (seconds, outputs)` and `close()`; failures raise common.PeerError."""
