"""Runs the mutation fuzzer (fuzz_models.py) in child processes: a few hundred
seeded mutated single-op models, each agreeing with the CPU, declined, or
rejected by the CPU too. A child that crashes is resumed after the crashing
case; the case is then replayed on the CPU alone: if TFLite's own CPU
kernel crashes on it, or reads or writes memory it does not own under
valgrind's memcheck (heap_check.py: a write past a tensor need not crash),
it is counted as the runtime's bug (reported), else it fails the test as a
crash the delegate caused."""

import json
import os
import subprocess
import sys
import time

import heap_check
from isolation import HERE, REPO

CASES = int(os.environ.get("TFLITE_GLES_FUZZ_CASES", "800"))
SEED = int(os.environ.get("TFLITE_GLES_FUZZ_SEED", "1"))
BUDGET_S = float(os.environ.get("TFLITE_GLES_FUZZ_BUDGET_S", "170"))


def fuzz_child(*args, timeout):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(REPO / "tools"),
                                         env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(HERE / "fuzz_models.py"), *args], env=env,
                          cwd=str(REPO), text=True, capture_output=True, timeout=timeout)


def runtime_owns_the_crash(case: int, landed) -> str:
    """Why TFLite's CPU path alone is at fault for `case`, or "" if it is not."""
    args = ["--seed", str(SEED), "--only", str(case), "--cpu-only",
            "--landed", ",".join(landed or [])]
    replay = fuzz_child(*args, timeout=60)
    if replay.returncode < 0:
        return f"the CPU alone crashes (signal {-replay.returncode})"
    if not heap_check.available():
        return ""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(REPO / "tools"),
                                         env.get("PYTHONPATH", "")])
    checked = heap_check.memcheck([str(HERE / "fuzz_models.py"), *args], env=env,
                                  cwd=str(REPO), timeout=900)
    if checked["runtime_errors"]:
        return "memcheck, CPU alone: " + checked["runtime_errors"][0]
    return ""


def test_mutated_models_agree_are_declined_or_are_rejected_by_the_cpu_too():
    start, landed = time.monotonic(), None
    next_case, records, summaries = 0, {}, []
    cpu_crashes, delegate_crashes = [], []
    while next_case < CASES:
        remaining = BUDGET_S - (time.monotonic() - start)
        if remaining <= 5:
            break
        args = ["--json", "--seed", str(SEED), "--cases", str(CASES), "--start", str(next_case),
                "--budget-s", str(remaining)]
        if landed is not None:
            args += ["--landed", ",".join(landed)]
        result = fuzz_child(*args, timeout=remaining + 60)
        started = None
        for line in result.stdout.splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if "landed" in record:
                landed = record["landed"]
            elif "start" in record:
                started = record["start"]
            elif "summary" in record:
                summaries.append(record)
            else:
                records[record["case"]] = record
                started = None
        if result.returncode >= 0 or started is None:
            assert result.returncode in (0, 1), result.stderr[-3000:]
            break
        # Crashed in case `started`: is TFLite's CPU path alone at fault?
        why = runtime_owns_the_crash(started, landed)
        if why:
            cpu_crashes.append((started, why))
        else:
            delegate_crashes.append((started, result.stderr[-2000:]))
        next_case = started + 1

    counts, fp16_counts = {}, {}
    for record in records.values():
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
        if record.get("fp16"):
            fp16_counts[record["outcome"]] = fp16_counts.get(record["outcome"], 0) + 1
    print(f"\nfuzz seed {SEED}: {len(records)} cases run, outcomes {counts} "
          f"(fp16: {fp16_counts}); "
          f"TFLite CPU kernels crashed on cases {cpu_crashes}; "
          f"{len(landed or [])} ops delegated in base form: {landed}")
    failures = [f"case {i}: {r['description']}\n    {r['outcome']}: {r['detail']}"
                for i, r in sorted(records.items())
                if r["outcome"] not in ("agree", "declined", "rejected", "unbuildable",
                                        "runtime_refused_delegate", "cpu_unstable")]
    for failure in failures:
        print("FAILED " + failure)
    assert not delegate_crashes, f"the delegate run crashed in cases {delegate_crashes}"
    assert not failures, "\n".join(failures)
    ran = sum(1 for r in records.values() if r["outcome"] != "unbuildable")
    assert ran >= min(200, CASES // 2), f"only {ran} cases ran within the time budget"
    assert fp16_counts.get("agree", 0) >= 5, "too few fp16 cases delegated"
    assert counts.get("agree", 0) >= 30, "too few delegated cases: the fuzzer lost its teeth"
