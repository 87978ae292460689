"""Two interpreters in one process, each on its own GPU (option egl_device 0
and 1), invoked concurrently from two threads (each interpreter stays on the
thread that created it, as the delegate requires): outputs checked against
LiteRT's CPU kernels (relative L2 <= 1e-4, fp32), throughput against one GPU
alone. Prints a markdown table; with fewer than two EGL devices, says so.

Two more runs tell where a shortfall comes from: two threads on the SAME GPU
(contention inside one device's driver state) and two PROCESSES, one per GPU
(nothing shared in-process: no driver-global lock, no GIL).

  python bench/two_gpu_check.py [--model mobilenet_v1_1.0_224] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
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


def child(spec, device: str, seconds: float, start_at: float) -> int:
    """One process's share of the two-process run: wait for the common wall
    clock start, invoke for `seconds`, print the rate as JSON."""
    class _Now:  # a barrier across processes: a start time both wait for
        def wait(self):
            time.sleep(max(0.0, start_at - time.time()))
    result: dict = {}
    worker(spec, device, seconds, _Now(), result)
    print(json.dumps({"per_s": result.get("per_s", 0.0), "error": result.get("error", "")}))
    return 0


def run_processes(model: str, devices, seconds: float):
    start_at = time.time() + 15.0  # both processes load the model and delegate before
    procs = [subprocess.Popen([sys.executable, __file__, "--model", model, "--seconds", str(seconds),
                               "--child", d, "--start-at", str(start_at)],
                              stdout=subprocess.PIPE, text=True) for d in devices]
    results = []
    for p in procs:
        out, _ = p.communicate()
        lines = [line for line in out.splitlines() if line.startswith("{")]
        results.append(json.loads(lines[-1]) if lines else {"error": "no result", "per_s": 0.0})
    return results


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
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    spec = mc.CATALOG[args.model]
    if args.child is not None:
        return child(spec, args.child, args.seconds, args.start_at)
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
    same = run(spec, ["0", "0"], args.seconds)
    procs = run_processes(args.model, ["0", "1"], args.seconds)
    base = max(one[0].get("per_s", 0.0), 1e-9)
    print()
    for label, results in (("two threads, two GPUs", two), ("two threads, one GPU", same),
                           ("two processes, two GPUs", procs)):
        total = sum(r.get("per_s", 0.0) for r in results)
        errors = "; ".join(r["error"][:80] for r in results if r.get("error"))
        print(f"{label}: {total:.1f} invokes/s together vs one GPU {base:.1f} "
              f"({total / base:.2f}x){' errors: ' + errors if errors else ''}")
    print(f"outputs of the thread runs {'correct' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
