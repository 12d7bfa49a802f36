#!/usr/bin/env python3
"""Draws how a function is split over a device mesh, as an SVG.

Reads the JSON that `paddle-opt MODEL --paddle-sharding-report=json=R.json`
writes and draws, for one function, every argument and result as a grid
of blocks: rows are the blocks of dim 0, columns the blocks of the other
dims (row-major); each block is labelled with the devices that hold it
(devices numbered row-major over the mesh, as `paddle-run --mesh` and MPI
ranks are) and coloured by the first of them; a whole tensor on every
device is one grey block. Below, every collective the partition inserted:
its kind, the mesh axes and the device groups it runs over, its bytes, the
time the cost model predicts and the source line that caused it.
Pure Python, no dependencies.

    scripts/sharding_picture.py REPORT.json -o picture.svg [--function NAME]
"""

import argparse
import itertools
import json
import os
import re
import sys
from html import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_picture import human  # noqa: E402 (scripts/, next to this one)

WIDTH = 960
COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
          "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]
CELL_H, ROW_GAP, LABEL_W, GRID_W = 26, 18, 330, 600


def shape_of(type_text):
    """[4, 8] from "tensor<4x8xf32>" ([] for a scalar; -1 for '?')."""
    m = re.fullmatch(r"tensor<(.*)>", type_text)
    if not m:
        return []
    dims = m.group(1).split("x")[:-1]
    return [-1 if d == "?" else int(d) for d in dims]


def parse_axes(text):
    """[1] from "[1]"."""
    return json.loads(text)


def devices(mesh):
    """Every device's mesh coordinates, in rank order (row-major)."""
    return list(itertools.product(*[range(n) for n in mesh]))


def position(coords, mesh, axes):
    """The device's block index along a dim split over `axes` (the first
    axis the major one), and the block count."""
    index, count = 0, 1
    for a in axes:
        index = index * mesh[a] + coords[a]
        count *= mesh[a]
    return index, count


def blocks(value, mesh):
    """{(row, column): [device ranks]} and the grid's (rows, columns)."""
    split = json.loads(value["split"])
    rank = len(shape_of(value["type"]))
    split = split + [[]] * (rank - len(split))
    counts = [position((0,) * len(mesh), mesh, axes)[1] for axes in split]
    rows = counts[0] if rank else 1
    columns = 1
    for c in counts[1:]:
        columns *= c
    held = {}
    for r, coords in enumerate(devices(mesh)):
        index = [position(coords, mesh, axes)[0] for axes in split]
        row = index[0] if rank else 0
        column = 0
        for i, c in zip(index[1:], counts[1:]):
            column = column * c + i
        held.setdefault((row, column), []).append(r)
    return held, rows, columns


def device_list(ranks, total):
    if len(ranks) == total and total > 1:
        return "all"
    return ",".join(map(str, ranks))


def groups(axes, mesh):
    """The device groups of a collective over mesh `axes`: the devices that
    agree on every other axis."""
    by_rest = {}
    for r, coords in enumerate(devices(mesh)):
        rest = tuple(c for a, c in enumerate(coords) if a not in axes)
        by_rest.setdefault(rest, []).append(r)
    return " ".join("{" + ",".join(map(str, g)) + "}" for g in by_rest.values())


def render(function):
    mesh = function["mesh"]
    total = 1
    for n in mesh:
        total *= n
    out, y = [], 60
    for value in function["values"]:
        held, rows, columns = blocks(value, mesh)
        label = (f"{value['kind']} {value['index']}: {value['type']}  split "
                 f"{value['split']}")
        out.append(f'<text x="10" y="{y + 14}">{escape(label)}</text>')
        out.append(f'<text x="10" y="{y + 30}" fill="#555">per device '
                   f'{escape(value["local_type"])}</text>')
        cell_w = GRID_W / columns
        for row in range(rows):
            for column in range(columns):
                ranks = held[(row, column)]
                x0, y0 = LABEL_W + column * cell_w, y + row * CELL_H
                color = "#cccccc" if len(ranks) == total and total > 1 else \
                    COLORS[ranks[0] % len(COLORS)]
                out.append(f'<rect x="{x0:.1f}" y="{y0}" width="{cell_w:.1f}" '
                           f'height="{CELL_H}" fill="{color}" fill-opacity="0.75" '
                           'stroke="white"/>')
                text = "dev " + device_list(ranks, total)
                out.append(f'<text x="{x0 + cell_w / 2:.1f}" y="{y0 + 17}" '
                           f'text-anchor="middle">{escape(text)}</text>')
        y += max(rows * CELL_H, 36) + ROW_GAP
    y += 10
    collectives = function["collectives"]
    out.append(f'<text x="10" y="{y}" font-size="13">{len(collectives)} collective'
               f'{"" if len(collectives) == 1 else "s"}, predicted '
               f'{function["predicted_collective_s"] * 1e6:.3f} us in all</text>')
    y += 22
    for c in collectives:
        axes = parse_axes(c["axes"])
        time = f"{c['predicted_s'] * 1e6:.3f} us" if "predicted_s" in c else "-"
        line = (f"{c['kind']} over axes {c['axes']} (devices {groups(axes, mesh)}): "
                f"{human(c['bytes'])}, {time}  at {c['location']}")
        out.append(f'<text x="10" y="{y}">{escape(line)}</text>')
        y += 18
    height = y + 10
    title = f"@{function['name']} on mesh {mesh} ({total} devices)"
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            'font-family="sans-serif" font-size="11">',
            f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
            f'<text x="10" y="28" font-size="15">{escape(title)}</text>']
    return "\n".join(head + out + ["</svg>"]) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="JSON from --paddle-sharding-report=json=PATH")
    parser.add_argument("-o", "--output", required=True, help="the SVG to write")
    parser.add_argument("--function", help="the function to draw (default: the first)")
    args = parser.parse_args(argv)
    try:
        with open(args.report) as f:
            report = json.load(f)
        functions = report["functions"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"sharding_picture: cannot read {args.report}: {e}")
    if not functions:
        sys.exit(f"sharding_picture: {args.report} has no function on a mesh")
    names = [f["name"] for f in functions]
    if args.function is None:
        function = functions[0]
    elif args.function in names:
        function = functions[names.index(args.function)]
    else:
        sys.exit(f"sharding_picture: no function '{args.function}' in {args.report} "
                 f"(it has: {', '.join(names)})")
    try:
        svg = render(function)
    except (KeyError, ValueError, TypeError, IndexError) as e:
        sys.exit(f"sharding_picture: {args.report} is not a sharding report: {e!r}")
    # Written whole to a temporary name, then renamed: no half-written file.
    tmp = args.output + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(svg)
        os.replace(tmp, args.output)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        sys.exit(f"sharding_picture: cannot write {args.output}: {e}")


if __name__ == "__main__":
    main()
