"""Runs the mutation fuzzer (fuzz_models.py) in child processes: a few hundred
seeded mutated single-op models, each agreeing with the CPU, declined, or
rejected by the CPU too. A child that crashes is resumed after the crashing
case; the case is then replayed on the CPU alone: if TFLite's own CPU
kernel crashes on it, it is counted as the runtime's bug (reported), else it
fails the test as a crash the delegate caused."""

import json
import os
import subprocess
import sys
import time

from isolation import HERE, REPO

CASES = int(os.environ.get("TFLITE_GLES_FUZZ_CASES", "800"))
SEED = int(os.environ.get("TFLITE_GLES_FUZZ_SEED", "1"))
BUDGET_S = 170.0


def fuzz_child(*args, timeout):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(REPO / "tools"),
                                         env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(HERE / "fuzz_models.py"), *args], env=env,
                          cwd=str(REPO), text=True, capture_output=True, timeout=timeout)


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
        # Crashed in case `started`: does TFLite's CPU path alone crash on it?
        replay = fuzz_child("--seed", str(SEED), "--only", str(started), "--cpu-only",
                            "--landed", ",".join(landed or []), timeout=60)
        (cpu_crashes if replay.returncode < 0 else delegate_crashes).append(started)
        next_case = started + 1

    counts = {}
    for record in records.values():
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    print(f"\nfuzz seed {SEED}: {len(records)} cases run, outcomes {counts}; "
          f"TFLite CPU kernels crashed on cases {cpu_crashes}; "
          f"{len(landed or [])} ops delegated in base form: {landed}")
    assert not delegate_crashes, f"the delegate run crashed in cases {delegate_crashes}"
    failures = [f"case {i}: {r['description']}\n    {r['outcome']}: {r['detail']}"
                for i, r in sorted(records.items())
                if r["outcome"] not in ("agree", "declined", "rejected",
                                        "runtime_refused_delegate", "cpu_unstable")]
    assert not failures, "\n".join(failures)
    assert len(records) >= 200, f"only {len(records)} cases ran within the time budget"
    assert counts.get("agree", 0) >= 30, "too few delegated cases: the fuzzer lost its teeth"
