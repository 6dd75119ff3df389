#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks an SVG icicle of `proctimes run --tree --svg`: it is well-formed XML
(xml.etree parses it), and its geometry is that of an icicle whose widths are
CPU: the command's box spans the whole width; each box is as wide as its own
part plus its children's boxes, which lie side by side inside it; and at each
depth the boxes add up to the whole width minus the own parts of every box
above. Prints one line per failure and exits 1, or prints "ok N" (N boxes).

    check_tree_svg.py FILE
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
EPS = 0.01  # the renderer writes 3 decimals


def main():
    root = ET.parse(sys.argv[1]).getroot()
    width = float(root.get("data-width"))
    boxes = {}
    for g in root.iter(NS + "g"):
        if g.get("class") != "process":
            continue
        if g.find(NS + "title") is None:
            print(f"box {g.get('data-index')}: no title")
        rects = {r.get("class"): r for r in g.findall(NS + "rect")}
        box = rects["box"]
        own = rects.get("own")
        boxes[int(g.get("data-index"))] = {
            "parent": int(g.get("data-parent")),
            "depth": int(g.get("data-depth")),
            "x": float(box.get("x")),
            "w": float(box.get("width")),
            "own": float(own.get("width")) if own is not None else 0.0,
            "own_x": float(own.get("x")) if own is not None else None,
        }
    failures = []
    if not boxes:  # an empty tree: a valid document with no box
        print("ok 0")
        return
    if 0 not in boxes:
        failures.append("no box for the command")
    elif abs(boxes[0]["w"] - width) > EPS:
        failures.append(f"the command's box is {boxes[0]['w']} wide, not {width}")
    children = {}
    for i, b in boxes.items():
        if b["parent"] >= 0:
            children.setdefault(b["parent"], []).append(i)
    for i, b in boxes.items():
        kids = sorted(children.get(i, []))
        total = b["own"] + sum(boxes[k]["w"] for k in kids)
        slack = EPS * (len(kids) + 2)
        if abs(total - b["w"]) > slack:
            failures.append(f"box {i}: {b['w']} wide, own {b['own']} + children {total - b['own']}")
        x = b["x"]
        for k in kids:
            if abs(boxes[k]["x"] - x) > slack or boxes[k]["depth"] != b["depth"] + 1:
                failures.append(f"box {k}: at {boxes[k]['x']}, depth {boxes[k]['depth']}; expected at {x} under {i}")
            x += boxes[k]["w"]
        if b["own_x"] is not None and abs(b["own_x"] + b["own"] - (b["x"] + b["w"])) > slack:
            failures.append(f"box {i}: its own part does not end at its right edge")
    depths = sorted({b["depth"] for b in boxes.values()})
    above_own = 0.0
    for d in depths:
        at_d = [b for b in boxes.values() if b["depth"] == d]
        s = sum(b["w"] for b in at_d)
        if abs(s - (width - above_own)) > EPS * (len(boxes) + 2):
            failures.append(f"depth {d}: boxes add up to {s}, expected {width - above_own}")
        above_own += sum(b["own"] for b in at_d)
    for f in failures:
        print(f)
    if failures:
        sys.exit(1)
    print(f"ok {len(boxes)}")


if __name__ == "__main__":
    main()
