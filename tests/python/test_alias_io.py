"""Zero-copy model I/O (DeviceProfile::alias_model_io, TFLITE_GLES_X_ALIAS_IO;
delegate/runtime/runtime_alias.cc): a partition's float input or output
staged through a persistently mapped buffer gets that mapping as its TFLite
tensor's memory (kTfLiteCustom, set in the kernel's Prepare), so set_tensor
writes where the GPU reads, get_tensor reads where it wrote, and the invoke
copies nothing. Checked against the CPU with the switch off and on, in both
runtimes (TFLITE_GLES_TEST_RUNTIME=tflite_runtime runs these under TF 2.14's
interpreter): several invokes with new inputs, fp16, interpreter.tensor()
views, resize_tensor_input + allocate_tensors (both delegate modes), two
interpreters at once, deleting interpreters, an input that a CPU op and two
partitions also read. Prepare reports each aliased tensor
(TFLITE_GLES_X_PHASES=1), which proves the zero-copy path was taken.
"""

import gc
import re

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, assert_fully_delegated
from test_fusion import Chain

ALIAS = "TFLITE_GLES_X_ALIAS_IO"
SHAPE = [1, 40, 36, 3]  # 17 KB: staged with DIRECT_MAX_KB=0; 3 channels: a conversion


def staged(monkeypatch, alias):
    """Inputs staged and outputs through their readback conversion (llvmpipe
    sends small ones directly and relays outputs out on the CPU otherwise),
    aliasing off or on, and Prepare's report of what it aliased."""
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", "0")
    monkeypatch.setenv("TFLITE_GLES_X_PHASES", "1")
    monkeypatch.setenv(ALIAS, alias)


def aliased(log):
    """{(tensor index, "input"/"output")} that Prepare made their staging."""
    return {(int(i), role) for i, role in
            re.findall(r"tensor (\d+) is its GPU staging \((input|output), no copy\)", log)}


def add_mul_model(shape):
    """(x + y) * x: two inputs, one output."""
    b = ModelBuilder()
    x, y = b.add_input(shape), b.add_input(shape)
    s, o = b.add_tensor(shape), b.add_tensor(shape)
    b.add_op("ADD", [x, y], [s], {"fused_activation_function": "NONE"})
    b.add_op("MUL", [s, x], [o], {"fused_activation_function": "NONE"})
    return b.build(), (x, y), o


def options_for(precision):
    return {"precision_loss_allowed": "true"} if precision == "fp16" else {}


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("alias", ["0", "1"])
def test_invokes_with_new_inputs_give_the_cpu_answer(monkeypatch, capfd, alias, precision):
    staged(monkeypatch, alias)
    model, (x, y), o = add_mul_model(SHAPE)
    delegate = gt.make_delegate(options_for(precision))
    gpu_interp, cpu_interp = gt.interpreter(model, delegate), gt.interpreter(model)
    for seed in range(4):
        inputs = gt.random_inputs([SHAPE, SHAPE], seed=seed, low=-3, high=3)
        gpu = gt.invoke(gpu_interp, inputs)
        assert_close(gpu, gt.invoke(cpu_interp, inputs), precision == "fp16")
        # The inputs read back as they were set (from the staging, aliased).
        np.testing.assert_array_equal(gpu_interp.get_tensor(x), inputs[0])
        np.testing.assert_array_equal(gpu_interp.get_tensor(y), inputs[1])
    assert_fully_delegated(gt.stats(delegate))
    expected = {(x, "input"), (y, "input"), (o, "output")} if alias == "1" else set()
    assert aliased(capfd.readouterr().err) == expected


def test_fp16_half_inputs_can_stay_copied(monkeypatch, capfd):
    """TFLITE_GLES_X_ALIAS_HALF_INPUTS=0: with fp16 storage the inputs keep
    their half staging (copied and converted by the CPU), the output is
    still the staging."""
    staged(monkeypatch, "1")
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_HALF_INPUTS", "0")
    model, (x, y), o = add_mul_model(SHAPE)
    gpu_interp = gt.interpreter(model, gt.make_delegate(options_for("fp16")))
    cpu_interp = gt.interpreter(model)
    for seed in range(3):
        inputs = gt.random_inputs([SHAPE, SHAPE], seed=90 + seed, low=-3, high=3)
        assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs), True)
    assert aliased(capfd.readouterr().err) == {(o, "output")}


@pytest.mark.parametrize("alias", ["0", "1"])
def test_tensor_views_write_inputs_and_read_outputs(monkeypatch, alias):
    """interpreter.tensor(): numpy views of data.raw, i.e. of the staging
    itself when aliased. Python refuses to invoke while a view lives, so
    each is dropped before the invoke (as the interpreter's docs require)."""
    staged(monkeypatch, alias)
    model, (x, y), o = add_mul_model(SHAPE)
    gpu_interp, cpu_interp = gt.interpreter(model, gt.make_delegate()), gt.interpreter(model)
    gpu_interp.allocate_tensors()
    for seed in range(3):
        inputs = gt.random_inputs([SHAPE, SHAPE], seed=20 + seed)
        gpu_interp.tensor(x)()[...] = inputs[0]
        gpu_interp.tensor(y)()[...] = inputs[1]
        gpu_interp.invoke()
        got = gpu_interp.tensor(o)().copy()
        assert_close([got], gt.invoke(cpu_interp, inputs))


def test_resize_without_reapply_refuses_and_recovers(monkeypatch):
    """The default delegate (AllowDynamicTensors) refuses a resized input at
    allocate_tensors. After that the input must be unallocated, as TFLite
    leaves an arena tensor, not our smaller staging with the new byte count:
    set_tensor refuses instead of writing past it. Resizing back works,
    aliased again."""
    staged(monkeypatch, "1")
    model, (x, y), o = add_mul_model(SHAPE)
    gpu_interp, cpu_interp = gt.interpreter(model, gt.make_delegate()), gt.interpreter(model)
    inputs = gt.random_inputs([SHAPE, SHAPE], seed=3)
    assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs))
    bigger = [1, 48, 36, 3]
    gpu_interp.resize_tensor_input(x, bigger)
    gpu_interp.resize_tensor_input(y, bigger)
    with pytest.raises(RuntimeError):
        gpu_interp.allocate_tensors()
    with pytest.raises(ValueError):
        gpu_interp.set_tensor(x, np.zeros(bigger, np.float32))
    gpu_interp.resize_tensor_input(x, SHAPE)
    gpu_interp.resize_tensor_input(y, SHAPE)
    for seed in range(2):
        inputs = gt.random_inputs([SHAPE, SHAPE], seed=30 + seed)
        assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs))


@pytest.mark.parametrize("alias", ["0", "1"])
def test_resize_with_reapply_rebuilds_and_aliases_again(monkeypatch, capfd, alias):
    """reapply_on_resize: the resize undoes the delegate (its kernels' Free
    gives the tensors back) and allocate_tensors applies it again for the new
    shape, whose new staging the tensors become."""
    staged(monkeypatch, alias)
    model, (x, y), o = add_mul_model(SHAPE)
    gpu_interp = gt.interpreter(model, gt.make_delegate({"reapply_on_resize": "true"}))
    cpu_interp = gt.interpreter(model)
    for shape in (SHAPE, [1, 48, 36, 3], [2, 20, 36, 3], SHAPE):
        for interp in (gpu_interp, cpu_interp):
            interp.resize_tensor_input(x, shape)
            interp.resize_tensor_input(y, shape)
        capfd.readouterr()
        for seed in range(2):
            inputs = gt.random_inputs([shape, shape], seed=40 + seed)
            assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs))
        if shape != SHAPE and alias == "1":
            assert aliased(capfd.readouterr().err) == {(x, "input"), (y, "input"),
                                                       (o, "output")}


def test_two_interpreters_at_once(monkeypatch):
    staged(monkeypatch, "1")
    model, _, _ = add_mul_model(SHAPE)
    first = gt.interpreter(model, gt.make_delegate())
    second = gt.interpreter(model, gt.make_delegate())
    cpu_interp = gt.interpreter(model)
    for seed in range(3):
        a = gt.random_inputs([SHAPE, SHAPE], seed=50 + seed)
        b = gt.random_inputs([SHAPE, SHAPE], seed=60 + seed)
        for interp in (first, second):
            interp.allocate_tensors()
        for detail, value in zip(first.get_input_details(), a):
            first.set_tensor(detail["index"], value)
        for detail, value in zip(second.get_input_details(), b):
            second.set_tensor(detail["index"], value)
        first.invoke()
        second.invoke()
        got_a = [first.get_tensor(d["index"]) for d in first.get_output_details()]
        got_b = [second.get_tensor(d["index"]) for d in second.get_output_details()]
        assert_close(got_a, gt.invoke(cpu_interp, a))
        assert_close(got_b, gt.invoke(cpu_interp, b))


@pytest.mark.parametrize("delegate_first", [False, True])
def test_deleting_interpreters(monkeypatch, delegate_first):
    """Interpreters (and their delegates) deleted in either order, then new
    ones made: nothing touches a freed staging buffer."""
    staged(monkeypatch, "1")
    model, _, _ = add_mul_model(SHAPE)
    cpu_interp = gt.interpreter(model)
    for seed in range(3):
        delegate = gt.make_delegate()
        interp = gt.interpreter(model, delegate)
        inputs = gt.random_inputs([SHAPE, SHAPE], seed=70 + seed)
        outputs = gt.invoke(interp, inputs)
        if delegate_first:
            del delegate
            gc.collect()
        del interp
        gc.collect()
        assert_close(outputs, gt.invoke(cpu_interp, inputs))


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("alias", ["0", "1"])
def test_input_read_by_a_cpu_op_and_two_partitions(monkeypatch, capfd, alias, precision):
    """x, y -> ADD (GPU) -> s (an output); x -> CUMSUM (CPU only) -> t;
    t, y -> MUL (GPU) -> o. y is read by both partitions: the first makes it
    its staging, the second copies from it. x is read by the CPU op straight
    from the first partition's staging; t, the CPU op's output, is the second
    partition's input."""
    staged(monkeypatch, alias)
    b = ModelBuilder()
    x, y = b.add_input(SHAPE), b.add_input(SHAPE)
    s, t, o = b.add_tensor(SHAPE), b.add_tensor(SHAPE), b.add_tensor(SHAPE)
    b.add_op("ADD", [x, y], [s], {"fused_activation_function": "NONE"})
    b.add_op("CUMSUM", [x, b.add_const(np.array(2, np.int32))], [t])
    b.add_op("MUL", [t, y], [o], {"fused_activation_function": "NONE"})
    b.set_outputs([s, o])
    model = b.build()
    delegate = gt.make_delegate({"max_delegated_partitions": "2", **options_for(precision)})
    gpu_interp, cpu_interp = gt.interpreter(model, delegate), gt.interpreter(model)
    for seed in range(3):
        inputs = gt.random_inputs([SHAPE, SHAPE], seed=80 + seed)
        assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs),
                     precision == "fp16")
    assert gt.stats(delegate)["partitions"] == 2
    if alias == "1":
        assert aliased(capfd.readouterr().err) == {
            (x, "input"), (y, "input"), (s, "output"), (t, "input"), (o, "output")}


@pytest.mark.parametrize("fuse,unfuse", [("0", "0"), ("1", "0"), ("1", "1")])
def test_an_input_a_fused_convolution_reads_stays_copied(monkeypatch, capfd, fuse, unfuse):
    """A convolution fused with its input's upload (TFLITE_GLES_FUSE_UPLOAD,
    upload_fusion.h) reads the staging several times per pixel, which is
    slow from memory mapped for reading too: that input keeps its copy into
    write-only staging; unfused (or, >= 512 KB, not fused because it could be
    aliased, TFLITE_GLES_X_ALIAS_UNFUSE), its conversion reads it once and it
    is aliased. The output is aliased either way."""
    staged(monkeypatch, "1")
    monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", fuse)
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_UNFUSE", unfuse)
    shape = [1, 241, 239, 3]  # 691 KB
    c = Chain(shape, seed=7)
    model = c.build([c.conv(c.x, 8, kernel=3, stride=2, activation="RELU")])
    gpu_interp, cpu_interp = gt.interpreter(model, gt.make_delegate()), gt.interpreter(model)
    for seed in range(3):
        inputs = gt.random_inputs([shape], seed=100 + seed)
        assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs))
    roles = sorted(role for _, role in aliased(capfd.readouterr().err))
    assert roles == (["output"] if (fuse, unfuse) == ("1", "0") else ["input", "output"])


def test_a_small_fused_input_stays_fused_and_copied(monkeypatch, capfd):
    """Below 512 KB an input stays fused (and copied) even with
    TFLITE_GLES_X_ALIAS_UNFUSE=1: palm's and face detection's gained nothing."""
    staged(monkeypatch, "1")
    monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_UNFUSE", "1")
    shape = [1, 33, 31, 3]
    c = Chain(shape, seed=8)
    model = c.build([c.conv(c.x, 8, kernel=3, stride=2, activation="RELU")])
    gpu_interp, cpu_interp = gt.interpreter(model, gt.make_delegate()), gt.interpreter(model)
    inputs = gt.random_inputs([shape], seed=110)
    assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs))
    assert sorted(role for _, role in aliased(capfd.readouterr().err)) == ["output"]
