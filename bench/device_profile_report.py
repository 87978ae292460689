"""Per model, what a device profile changes (docs/device_profiles.md):
delegated nodes and partitions, shader programs, dispatches per invoke and
the median invoke latency, native against each profile named, in one
process (same GPU, same load). Prints a markdown table.

  python bench/device_profile_report.py [--profiles gles31-minimum mali-g52]
      [--iterations 20] [--fp16]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
import gles_testing as gt  # noqa: E402
import model_catalog as mc  # noqa: E402


def measure(spec, profile: str, iterations: int, fp16: bool) -> dict:
    options = {"device_profile": profile, "precision_loss_allowed": fp16}
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(str(spec.path), delegate)
    inputs = mc.model_inputs(spec, interp.get_input_details())
    gt.invoke(interp, inputs)  # the first invoke compiles what the driver defers
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        interp.invoke()
        times.append((time.perf_counter() - start) * 1e3)
    stats = gt.stats(delegate)
    del interp
    return {"ms": statistics.median(times), **stats}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", nargs="+", default=["gles31-minimum"])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--models", nargs="*", default=None)
    args = parser.parse_args()
    names = args.models or list(mc.CATALOG)
    print("| model | profile | nodes | partitions | programs | dispatches | ms (median) |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        spec = mc.CATALOG[name]
        for profile in ["native"] + args.profiles:
            r = measure(spec, profile, args.iterations, args.fp16)
            print(f"| {name} | {profile} | {r['nodes_delegated']}/{r['nodes_total']} | "
                  f"{r['partitions']} | {r['programs']} | {r['dispatches']} | {r['ms']:.2f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
