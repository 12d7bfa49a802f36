"""Bad IR never crashes the compiler.

Takes the round-trip tests of every op, rewrites the integers on paddle op
lines (attribute values, sizes in types, axes) into hostile values, and runs
paddle-opt (parse, verify, lower to linalg) on each mutant. Every run must
end in success or a diagnostic with exit code 1, never a crash or a hang.
The mutants are generated from a fixed seed, so a failure reproduces.
"""

import os
import random
import re
import subprocess
from pathlib import Path

import pytest
from paddle_testing import PADDLE_OPT, REPO

SOURCES = sorted((REPO / "test" / "Dialect" / "Paddle").glob("*.mlir"))
HOSTILE = ["-9223372036854775808", "-4", "-1", "0", "1", "2", "3", "7",
           "2147483648", "4611686018427387904", "9223372036854775807"]
NUMBER = re.compile(r"(?<![\w.%#])-?\d+(?![\w.])")
MUTANTS_PER_CASE = int(os.environ.get("PADDLE_MUTANTS", "6"))


def cases():
    for path in SOURCES:
        if path.name.startswith("invalid-"):
            continue
        for i, chunk in enumerate(path.read_text().split("// -----")):
            if "paddle." in chunk:
                yield pytest.param(chunk, id=f"{path.stem}-{i}")


def mutate(chunk, rng):
    lines = chunk.splitlines()
    candidates = [i for i, l in enumerate(lines)
                  if "paddle." in l and not l.lstrip().startswith("//")
                  and NUMBER.search(l)]
    if not candidates:
        return None
    i = rng.choice(candidates)
    matches = list(NUMBER.finditer(lines[i]))
    m = rng.choice(matches)
    lines[i] = lines[i][:m.start()] + rng.choice(HOSTILE) + lines[i][m.end():]
    return "\n".join(lines)


@pytest.mark.parametrize("chunk", list(cases()))
def test_mutants_do_not_crash(tmp_path, chunk):
    rng = random.Random(chunk)
    for k in range(MUTANTS_PER_CASE):
        mutant = mutate(chunk, rng)
        if mutant is None:
            return
        path = tmp_path / f"mutant{k}.mlir"
        path.write_text(mutant)
        proc = subprocess.run(
            [str(PADDLE_OPT), str(path), "--paddle-convert-paddle-to-linalg"],
            capture_output=True, text=True, timeout=60)
        assert proc.returncode in (0, 1), (
            f"paddle-opt crashed (exit {proc.returncode}) on:\n{mutant}\n"
            f"{proc.stderr[-3000:]}")
