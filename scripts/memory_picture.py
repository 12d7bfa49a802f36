#!/usr/bin/env python3
"""Draws a memory plan as an SVG: buffer lifetimes against offsets.

Reads the JSON that `paddle-opt MODEL --paddle-memory-report=json=PLAN.json`
writes and draws, for one function, a rectangle per planned buffer: x spans
its lifetime (first to last op position in the entry block, inclusive), y its
bytes in the workspace [offset, offset + size). A dashed line marks the lower
bound (the most bytes live at one op), the top of the plot the planned size.
Pure Python, no dependencies.

    scripts/memory_picture.py PLAN.json -o plan.svg [--function NAME]
"""

import argparse
import json
import sys
from html import escape

WIDTH, HEIGHT = 900, 480
LEFT, RIGHT, TOP, BOTTOM = 80, 20, 40, 50
COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
          "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def render(function):
    buffers = function["buffers"]
    positions = max([function.get("positions", 0)] +
                    [b["last"] + 1 for b in buffers] + [1])
    top = max(function["planned"], 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(pos):
        return LEFT + plot_w * pos / positions

    def y(byte):
        return TOP + plot_h * (1 - byte / top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
           f'height="{HEIGHT}" font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>']
    title = (f"@{function['name']}: planned {human(function['planned'])}, "
             f"lower bound {human(function['lower_bound'])}, "
             f"naive {human(function['naive'])}, {len(buffers)} buffers")
    out.append(f'<text x="{LEFT}" y="22" font-size="14">{escape(title)}</text>')
    # Axes with a few ticks.
    out.append(f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" '
               f'y2="{TOP + plot_h}" stroke="black"/>')
    out.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" '
               'stroke="black"/>')
    for i in range(5):
        pos = round(positions * i / 4)
        out.append(f'<text x="{x(pos):.1f}" y="{TOP + plot_h + 16}" '
                   f'text-anchor="middle">{pos}</text>')
        byte = top * i / 4
        out.append(f'<text x="{LEFT - 6}" y="{y(byte) + 4:.1f}" '
                   f'text-anchor="end">{escape(human(byte))}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 12}" '
               'text-anchor="middle">op position in the entry block</text>')
    out.append(f'<text x="16" y="{TOP + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {TOP + plot_h / 2})">workspace offset'
               '</text>')
    for b in buffers:
        x0, x1 = x(b["first"]), x(b["last"] + 1)
        y0, y1 = y(b["offset"] + b["size"]), y(b["offset"])
        color = COLORS[b["id"] % len(COLORS)]
        tip = (f"buffer {b['id']}: {b.get('type', '')}, {b['size']} bytes at "
               f"offset {b['offset']}, ops {b['first']}..{b['last']}, written "
               f"by {b.get('writer', '?')}")
        if "in_place_of" in b:
            tip += f", in place of buffer {b['in_place_of']}"
        out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{max(x1 - x0, 1):.1f}" '
                   f'height="{max(y1 - y0, 1):.1f}" fill="{color}" '
                   f'fill-opacity="0.75" stroke="black" stroke-width="0.5">'
                   f'<title>{escape(tip)}</title></rect>')
        if y1 - y0 >= 12 and x1 - x0 >= 14:
            label = f"#{b['id']}" + (f"<{b['in_place_of']}" if "in_place_of" in b else "")
            out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" '
                       f'text-anchor="middle" fill="white">{escape(label)}</text>')
    lb = y(function["lower_bound"])
    out.append(f'<line x1="{LEFT}" y1="{lb:.1f}" x2="{LEFT + plot_w}" y2="{lb:.1f}" '
               'stroke="black" stroke-dasharray="6 4"/>')
    out.append(f'<text x="{LEFT + plot_w - 4}" y="{lb - 4:.1f}" text-anchor="end">'
               'lower bound</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", help="JSON written by --paddle-memory-report=json=PATH")
    parser.add_argument("-o", "--output", required=True, help="SVG file to write")
    parser.add_argument("--function", help="function to draw (default: the one "
                        "with the largest plan)")
    args = parser.parse_args(argv)
    try:
        with open(args.plan) as f:
            functions = json.load(f)["functions"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"memory_picture: cannot read a plan from {args.plan}: {e}")
    if args.function:
        chosen = [f for f in functions if f["name"] == args.function]
        if not chosen:
            names = ", ".join(f["name"] for f in functions)
            sys.exit(f"memory_picture: no function '{args.function}' in "
                     f"{args.plan} (has: {names})")
        function = chosen[0]
    elif functions:
        function = max(functions, key=lambda f: f["planned"])
    else:
        sys.exit(f"memory_picture: {args.plan} holds no function")
    svg = render(function)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write(svg)
    import os
    os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
