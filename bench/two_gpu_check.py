"""Two interpreters in one process, each on its own GPU (option egl_device 0
and 1), invoked concurrently from two threads (each interpreter stays on the
thread that created it, as the delegate requires): outputs checked against
LiteRT's CPU kernels (relative L2 <= 1e-4, fp32), throughput against one GPU
alone. Prints a markdown table; with fewer than two EGL devices, says so.

  python bench/two_gpu_check.py [--model mobilenet_v1_1.0_224] [--seconds 5]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
import gles_testing as gt  # noqa: E402
import model_catalog as mc  # noqa: E402


def worker(spec, device: str, seconds: float, start: threading.Barrier, result: dict):
    try:
        delegate = gt.make_delegate({"egl_device": device})
        interp = gt.interpreter(str(spec.path), delegate)
        inputs = mc.model_inputs(spec, interp.get_input_details())
        result["outputs"] = gt.invoke(interp, inputs)
        result["display"] = gt.stats(delegate)["egl_display"]
    except Exception as error:  # noqa: BLE001 - reported, not raised: the other thread waits
        result["error"] = str(error)
    start.wait()
    if "error" in result:
        return
    count, begin = 0, time.perf_counter()
    while time.perf_counter() - begin < seconds:
        interp.invoke()
        count += 1
    result["per_s"] = count / (time.perf_counter() - begin)
    result["outputs_after"] = [interp.get_tensor(d["index"]).copy()
                               for d in interp.get_output_details()]


def run(spec, devices, seconds):
    start = threading.Barrier(len(devices))
    results = [{} for _ in devices]
    threads = [threading.Thread(target=worker, args=(spec, d, seconds, start, r))
               for d, r in zip(devices, results)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="mobilenet_v1_1.0_224")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    spec = mc.CATALOG[args.model]
    cpu_interp = gt.interpreter(str(spec.path))
    cpu = gt.invoke(cpu_interp, mc.model_inputs(spec, cpu_interp.get_input_details()))
    probe = run(spec, ["1"], 0.0)[0]
    if "error" in probe:
        print(f"fewer than two EGL devices ({probe['error'][:200]}): no two-GPU check")
        return 0
    one = run(spec, ["0"], args.seconds)
    two = run(spec, ["0", "1"], args.seconds)
    ok = True
    print("| run | device | invokes/s | max rel. L2 vs CPU |")
    print("|---|---|---|---|")
    for label, results in (("one GPU", one), ("two GPUs", two)):
        for r in results:
            if "error" in r:
                print(f"| {label} | error: {r['error'][:120]} | | |")
                ok = False
                continue
            error = max(gt.relative_error(g, c) for g, c in zip(r["outputs_after"], cpu))
            ok &= error <= 1e-4
            print(f"| {label} | {r['display'][:60]} | {r['per_s']:.1f} | {error:.2e} |")
    total_two = sum(r.get("per_s", 0.0) for r in two)
    print(f"\ntwo GPUs together: {total_two:.1f} invokes/s vs one GPU "
          f"{one[0].get('per_s', 0.0):.1f} ({total_two / max(one[0].get('per_s', 1e-9), 1e-9):.2f}x); "
          f"outputs {'correct' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
