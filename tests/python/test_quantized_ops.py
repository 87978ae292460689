"""Quantized single-op models (uint8 and int8, quantized_cases.py) through
the delegate, fp32 and fp16, against TFLite's own integer kernels on the CPU.

For every op with integer kernels in TFLite: the op must be delegated (one
node, one partition), and its quantized output must match the CPU's: at
least 99 % of the elements within one quantization step, none beyond two.
The distribution of the differences (0, 1, 2 steps) is printed per op, type
and precision; `python3 tests/python/test_quantized_ops.py --markdown` prints
it as the table of docs/quantization.md.

A separate check keeps the reference honest: the CPU's integer output must be
as close to the float twin (the same op on the dequantized values, quantized
afterwards) as the delegate must be to the CPU; otherwise the model's
parameters break an assumption of TFLite's integer kernel and the CPU would be
the reference of a different model.

All cases run in one child process (a crash names the case, a hang times
out); each test then checks its case's record.
"""

from __future__ import annotations

import json
import sys
import traceback

import pytest

from isolation import run_isolated
from model_check import _CapturedStderr, parse_results

MIN_WITHIN_ONE_STEP = 0.99
MAX_STEPS = 2
PRECISIONS = {"fp32": {}, "fp16": {"precision_loss_allowed": "true"}}
OPS = ["ADD", "SUB", "MUL", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED",
       "AVERAGE_POOL_2D", "MAX_POOL_2D", "CONCATENATION", "RESHAPE", "PAD", "SOFTMAX",
       "LOGISTIC", "RELU", "RELU6", "MAXIMUM", "MINIMUM", "RESIZE_BILINEAR",
       "STRIDED_SLICE", "TRANSPOSE_CONV", "PRELU", "MEAN", "HARD_SWISH", "QUANTIZE",
       "DEQUANTIZE"]
TYPES = ["uint8", "int8"]
CASE_NAMES = [f"{op}-{t}" for op in OPS for t in TYPES]


def run_case(name: str) -> dict:
    """Runs one case on the CPU, the float twin and the delegate (fp32, fp16)."""
    import gles_testing as gt
    from quantized_cases import build_spec, case_seed, output_step, step_counts

    op, type_name = name.rsplit("-", 1)
    spec = build_spec(op, type_name)
    model = spec.quantized_model()
    inputs = spec.random_inputs(case_seed(spec.name))
    step = output_step(spec)
    cpu = gt.invoke(gt.interpreter(model), inputs)[0]
    record = {"version": spec.version, "shape": list(cpu.shape), "dtype": cpu.dtype.name,
              "twin": step_counts(cpu, spec.twin_reference(inputs), step)}
    for precision, options in PRECISIONS.items():
        run = {}
        with _CapturedStderr() as captured:
            try:
                delegate = gt.make_delegate({"log_level": "warning", **options})
                interp = gt.interpreter(model, delegate)
                gpu = gt.invoke(interp, inputs)[0]
                stats = gt.stats(delegate)
                run.update(delegated=stats["nodes_delegated"], nodes=stats["nodes_total"],
                           partitions=stats["partitions"])
                if gpu.shape != cpu.shape or gpu.dtype != cpu.dtype:
                    run["error"] = f"output {gpu.dtype}{list(gpu.shape)}, CPU {cpu.dtype}" \
                                   f"{list(cpu.shape)}"
                else:
                    run["steps"] = step_counts(gpu, cpu, step)
                del interp
            except Exception:  # noqa: BLE001 - reported per case
                run["error"] = traceback.format_exc()[-800:]
        run["warnings"] = " | ".join(line for line in captured.text.splitlines()
                                     if "WARNING" in line or "ERROR" in line)[:800]
        record[precision] = run
    return record


CHILD = """
import json, traceback
from test_quantized_ops import CASE_NAMES, run_case
for name in CASE_NAMES:
    print(json.dumps({"start": name}), flush=True)
    try:
        record = run_case(name)
    except Exception:
        record = {"harness_error": traceback.format_exc()[-1500:]}
    record["case"] = name
    print(json.dumps(record), flush=True)
"""


def fraction(counts: dict, within: int) -> float:
    kept = sum(counts[str(k)] for k in range(within + 1))
    return kept / counts["total"] if counts["total"] else 1.0


def distribution(counts: dict | None) -> str:
    if not counts:
        return "-"
    total = counts["total"] or 1
    return "/".join(f"{100 * counts[k] / total:.1f}" for k in ("0", "1", "2")) + \
        (f" (+{counts['more']} >2)" if counts["more"] else "")


def table(results: dict) -> str:
    """Markdown: per op and type, the % of elements at 0/1/2 steps from the
    CPU, fp32 and fp16 (and the CPU from the float twin)."""
    lines = ["| op | type | version | delegate fp32 (% at 0/1/2 steps) | delegate fp16 | "
             "CPU vs float twin |", "|---|---|---|---|---|---|"]
    for name in CASE_NAMES:
        record = results.get(name, {})
        op, type_name = name.rsplit("-", 1)
        cells = []
        for precision in PRECISIONS:
            run = record.get(precision, {})
            if "error" in run or "steps" not in run:
                cells.append("error")
            elif run.get("delegated") != run.get("nodes"):
                cells.append("not delegated")
            else:
                cells.append(distribution(run["steps"]))
        lines.append(f"| `{op}` | {type_name} | {record.get('version', '?')} | "
                     f"{cells[0]} | {cells[1]} | {distribution(record.get('twin'))} |")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def results():
    result = run_isolated(CHILD, timeout=300)
    parsed, crashed_in = parse_results(result.stdout)
    assert crashed_in is None, f"the child died in case {crashed_in}:\n{result.stderr[-3000:]}"
    assert result.returncode == 0, result.stderr[-3000:]
    print("\nquantized ops, % of output elements at 0/1/2 steps from the CPU:\n" + table(parsed))
    return parsed


def record_of(results: dict, name: str) -> dict:
    assert name in results, f"case {name} did not report"
    record = results[name]
    assert "harness_error" not in record, record["harness_error"]
    return record


@pytest.mark.parametrize("name", CASE_NAMES)
def test_cpu_reference_matches_the_float_twin(name, results):
    """The parameters respect the integer kernel's assumptions."""
    counts = record_of(results, name)["twin"]
    assert counts["max"] <= MAX_STEPS and fraction(counts, 1) >= MIN_WITHIN_ONE_STEP, counts


@pytest.mark.parametrize("precision", list(PRECISIONS))
@pytest.mark.parametrize("name", CASE_NAMES)
def test_quantized_op_is_delegated_and_matches_the_cpu(name, precision, results):
    run = record_of(results, name)[precision]
    assert "error" not in run, run["error"] + "\n" + run["warnings"]
    assert run["nodes"] == 1 and run["delegated"] == 1 and run["partitions"] == 1, (
        f"{name} not delegated ({run['delegated']} of {run['nodes']} nodes, "
        f"{run['partitions']} partitions): {run['warnings']}")
    counts = run["steps"]
    assert counts["max"] <= MAX_STEPS, f"{name} {precision}: {counts['more']} elements " \
                                       f"beyond {MAX_STEPS} steps (max {counts['max']}): {counts}"
    assert fraction(counts, 1) >= MIN_WITHIN_ONE_STEP, f"{name} {precision}: {counts}"


if __name__ == "__main__":
    if "--markdown" in sys.argv:
        out = run_isolated(CHILD, timeout=600)
        print(table(parse_results(out.stdout)[0]))
    elif len(sys.argv) > 1:
        for case in sys.argv[1:]:
            print(case, json.dumps(run_case(case)))
