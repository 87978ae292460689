#!/usr/bin/env python3
"""Per variant of a conv_sweep.py --json file (bench/device_chain3.sh): how
many dispatches, and the count, summed and mean us of the bottleneck heads
(gemm_chain dispatches whose label starts with the 3x3 CONV_2D + PRELU),
the plain GEMM pairs and the conv2d.comp convolutions; then each head's us."""

import json
import sys


def main() -> int:
    runs = json.load(open(sys.argv[1]))
    print("| variant | dispatches | heads (n, sum us, mean) | pairs | conv2d | sum ms |")
    print("|---|---|---|---|---|---|")
    for name, rows in runs.items():
        heads = [us for label, shader, us in rows
                 if shader == "gemm_chain" and label.count("CONV_2D") == 3]
        pairs = [us for label, shader, us in rows
                 if shader == "gemm_chain" and label.count("CONV_2D") == 2]
        convs = [us for _, shader, us in rows if shader == "conv2d"]
        cells = [f"{len(v)}, {sum(v):.0f}, {sum(v) / len(v):.1f}" if v else "0"
                 for v in (heads, pairs, convs)]
        total = sum(us for _, _, us in rows) / 1e3
        print(f"| {name} | {len(rows)} | " + " | ".join(cells) + f" | {total:.3f} |")
    # Each head's us in the model's order (the 128x128 ones first and last).
    for name, rows in runs.items():
        heads = [us for label, shader, us in rows
                 if shader == "gemm_chain" and label.count("CONV_2D") == 3]
        if heads:
            print(f"{name} heads us: " + " ".join(f"{us:.0f}" for us in heads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
