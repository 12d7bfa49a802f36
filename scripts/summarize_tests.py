"""Totals the JUnit reports of ctest, lit and pytest into one closing line.

Prints "N passed, N failed[, N skipped]" and exits non-zero when anything
failed or no test ran at all (a missing report counts as a failure).
"""

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def count(report):
    passed = failed = skipped = 0
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("reports")
    parser.add_argument("--extra-check", action="append", default=[],
                        help="NAME=RC of a check that counts as one test")
    args = parser.parse_args()
    totals = [0, 0, 0]
    for name in ("ctest", "lit", "pytest"):
        path = Path(args.reports) / f"{name}.xml"
        if not path.exists():
            print(f"{name}: no report (the runner failed to start)")
            totals[1] += 1
            continue
        p, f, s = count(path)
        print(f"{name}: {p} passed, {f} failed, {s} skipped")
        totals = [totals[0] + p, totals[1] + f, totals[2] + s]
    for check in args.extra_check:
        name, rc = check.split("=")
        ok = rc == "0"
        print(f"{name}: {'passed' if ok else 'FAILED'}")
        totals[0 if ok else 1] += 1
    line = f"{totals[0]} passed, {totals[1]} failed"
    if totals[2]:
        line += f", {totals[2]} skipped"
    print(line)
    return 0 if totals[1] == 0 and totals[0] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
