"""Per-call overhead of the runtime next to a direct C call.

Compiles benchmarks/overhead/tiny.mlir (negate one float) with
`paddle-compile --emit so`, builds overhead.c against it and reports the
median nanoseconds per call of: the compiled function's C interface called
directly (no runtime), the generated typed entry point (paddle_invoke), and
paddle_session_run; the overheads are the differences to the direct call.
Target (issue 3): under 2 microseconds. Not a test.

    .venv/bin/python benchmarks/call_overhead.py [--markdown]
"""

import argparse
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "build" / "bin"
HERE = REPO / "benchmarks" / "overhead"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([str(BIN / "paddle-compile"), str(HERE / "tiny.mlir"),
                        "-o", str(tmp / "tiny.so")], check=True)
        subprocess.run(["cc", "-O2", str(HERE / "overhead.c"), "-I", str(tmp),
                        "-I", str(REPO / "runtime" / "include"),
                        str(tmp / "tiny.so"), f"-Wl,-rpath,{tmp}",
                        "-o", str(tmp / "overhead")], check=True)
        out = subprocess.run([str(tmp / "overhead")], check=True,
                             capture_output=True, text=True).stdout
    ns = {k: float(v) for k, v in (line.split() for line in out.splitlines())}
    rows = [("direct C call (no runtime)", ns["direct"], 0.0),
            ("typed entry point (paddle_invoke)", ns["typed"],
             ns["typed"] - ns["direct"]),
            ("paddle_session_run", ns["session"], ns["session"] - ns["direct"])]
    if args.markdown:
        print("| path | ns per call | overhead ns |")
        print("| --- | ---: | ---: |")
        for name, t, o in rows:
            print(f"| {name} | {t:.1f} | {o:.1f} |")
    else:
        for name, t, o in rows:
            print(f"{name:36s} {t:8.1f} ns/call  overhead {o:7.1f} ns")


if __name__ == "__main__":
    main()
