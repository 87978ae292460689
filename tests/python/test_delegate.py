"""The delegate inside the real LiteRT runtime: partitioning around an
unsupported op, max_delegated_partitions, the thread contract, option
parsing, and the display override."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from gles_testing import (LIB, REPO, ModelBuilder, assert_close, invoke,
                          interpreter, make_delegate, random_inputs, stats)

SHAPE = [1, 6, 5, 7]
# SIN is an op no kernel of ours claims: it must stay on the CPU.
UNSUPPORTED_OP = "SIN"


def model_with_unsupported_op_in_the_middle() -> bytes:
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    y = b.add_input(SHAPE)
    s = b.add_tensor(SHAPE)
    t = b.add_tensor(SHAPE)
    o = b.add_tensor(SHAPE)
    b.add_op("ADD", [x, y], [s], {"fused_activation_function": "RELU"})
    b.add_op(UNSUPPORTED_OP, [s], [t])
    b.add_op("MUL", [t, y], [o], {"fused_activation_function": "NONE"})
    return b.build()


def test_unsupported_op_in_the_middle_runs_in_two_partitions(capfd):
    model = model_with_unsupported_op_in_the_middle()
    inputs = random_inputs([SHAPE, SHAPE], seed=5)
    cpu = invoke(interpreter(model), inputs)
    delegate = make_delegate({"max_delegated_partitions": 2})
    gpu = invoke(interpreter(model, delegate), inputs)
    s = stats(delegate)
    assert (s["nodes_total"], s["nodes_delegated"], s["partitions"]) == (3, 2, 2), s
    assert_close(gpu, cpu)
    log = capfd.readouterr().err
    assert "WARNING: tflite-gles: SIN v1 cannot be handled by this delegate" in log, log
    assert "no GPU kernel for this op" in log, log
    assert "delegated 2 of 3 nodes in 2 partitions" in log, log


def test_max_delegated_partitions_keeps_the_largest(capfd):
    model = model_with_unsupported_op_in_the_middle()
    inputs = random_inputs([SHAPE, SHAPE], seed=6)
    cpu = invoke(interpreter(model), inputs)
    delegate = make_delegate({"max_delegated_partitions": 1})
    gpu = invoke(interpreter(model, delegate), inputs)
    s = stats(delegate)
    assert (s["nodes_delegated"], s["partitions"]) == (1, 1), s
    assert_close(gpu, cpu)
    log = capfd.readouterr().err
    assert "delegated 1 of 3 nodes in 1 partition" in log
    # Both nodes left on the CPU are named with their reason: SIN by the
    # support check, the dropped partition's node by the partition limit.
    assert "SIN v1 cannot be handled by this delegate (1 node stays on the CPU: node 1)" \
        in log, log
    dropped = [line for line in log.splitlines() if "max_delegated_partitions=1" in line]
    assert len(dropped) == 1 and "stays on the CPU" in dropped[0], log
    assert ("node 0 (ADD v1)" in dropped[0]) != ("node 2 (MUL v1)" in dropped[0]), log


def simple_model() -> bytes:
    b = ModelBuilder()
    x = b.add_input(SHAPE)
    y = b.add_input(SHAPE)
    o = b.add_tensor(SHAPE)
    b.add_op("SUB", [x, y], [o], {"fused_activation_function": "RELU6"})
    return b.build()


def test_invoke_on_another_thread_fails_clearly_and_the_process_lives_on():
    model = simple_model()
    inputs = random_inputs([SHAPE, SHAPE], seed=7)
    cpu = invoke(interpreter(model), inputs)
    delegate = make_delegate()
    interp = interpreter(model, delegate)
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    errors = []

    def invoke_elsewhere():
        try:
            interp.invoke()
        except RuntimeError as error:
            errors.append(str(error))

    worker = threading.Thread(target=invoke_elsewhere)
    worker.start()
    worker.join()
    assert len(errors) == 1, "Invoke on another thread must fail"
    assert "different thread than ModifyGraphWithDelegate" in errors[0], errors[0]
    # The owning thread still gets the right answer afterwards.
    interp.invoke()
    gpu = [interp.get_tensor(d["index"]) for d in interp.get_output_details()]
    assert_close(gpu, cpu)


@pytest.mark.parametrize("options, expected", [
    ({"bogus_key": "1"}, "unknown option 'bogus_key'"),
    ({"max_delegated_partitions": "0"}, "max_delegated_partitions"),
    ({"precision_loss_allowed": "maybe"}, "true|false"),
    ({"egl_platform": "wayland"}, "auto|device|surfaceless|default"),
    ({"serialization_dir": "/tmp"}, "model_token"),
])
def test_bad_options_are_refused_with_the_valid_keys(options, expected):
    with pytest.raises(ValueError) as error:
        make_delegate(options)
    message = str(error.value)
    assert expected in message, message
    assert "Valid options" in message or "model_token" in message, message
    if "Valid options" in message:
        for key in ("precision_loss_allowed", "max_delegated_partitions", "egl_platform"):
            assert key in message


def test_forced_display_that_cannot_work_fails_and_cpu_still_works():
    # A fresh process: the override is read when the context is made.
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO / 'tests' / 'python')!r})
        import numpy as np
        from gles_testing import interpreter, invoke, make_delegate, random_inputs
        from test_delegate import simple_model, SHAPE
        model = simple_model()
        inputs = random_inputs([SHAPE, SHAPE], seed=8)
        try:
            interpreter(model, make_delegate())
            print("DELEGATE APPLIED")
        except RuntimeError as error:
            print("REFUSED:", error)
        out = invoke(interpreter(model), inputs)[0]
        ref = np.clip(inputs[0] - inputs[1], 0, 6)
        print("CPU OK" if np.allclose(out, ref, atol=1e-6) else "CPU WRONG")
    """)
    env = dict(os.environ, TFLITE_GLES_EGL_PLATFORM="no-such-platform")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=120, cwd=str(REPO / "tests" / "python"))
    assert result.returncode == 0, result.stderr
    assert "REFUSED:" in result.stdout and "no-such-platform" in result.stdout, result.stdout
    assert "CPU OK" in result.stdout, result.stdout


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("storage", ["ssbo", "texture_buffer"])
def test_every_storage_choice_gives_the_cpu_answer(storage, fp16):
    model = model_with_unsupported_op_in_the_middle()
    inputs = random_inputs([SHAPE, SHAPE], seed=9)
    cpu = invoke(interpreter(model), inputs)
    delegate = make_delegate({"storage": storage, "precision_loss_allowed": fp16,
                              "max_delegated_partitions": 2})
    gpu = invoke(interpreter(model, delegate), inputs)
    assert stats(delegate)["nodes_delegated"] == 2
    assert_close(gpu, cpu, fp16)
