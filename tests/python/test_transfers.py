"""How inputs and outputs cross between the CPU and the GPU (delegate/
runtime/runtime_transfer.cc, docs/perf/log.md "Transfers (xfer)"), each path forced by its
switch and checked against LiteRT's CPU kernels, several invokes with new
values each (a stale buffer shows as a mismatch):

- direct transfers (TFLITE_GLES_X_DIRECT_TRANSFERS, _DIRECT_MAX_KB): the
  CPU reads and writes the tensor's own PHWC4 buffer (small inputs relaid
  out on the CPU where PHWC4 is not BHWC, outputs too with
  TFLITE_GLES_X_CPU_READBACK_RELAYOUT) and no conversion dispatch runs;
  the dispatch count proves which path ran;
- fp16 staging of inputs (TFLITE_GLES_X_HALF_UPLOAD) with fp16 storage;
- the readback wait (TFLITE_GLES_X_READBACK: map, fence, spin, mapped).

int32 tensors do not appear here: no kernel takes them, so none crosses.
"""

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, assert_fully_delegated


def add_model(shape, dtype=np.float32):
    b = ModelBuilder()
    x = b.add_input(shape, dtype)
    y = b.add_input(shape, dtype)
    o = b.add_tensor(shape, dtype)
    if dtype == np.bool_:
        b.add_op("LOGICAL_AND", [x, y], [o])
    else:
        b.add_op("ADD", [x, y], [o], {"fused_activation_function": "NONE"})
    return b.build()


def classifier_model(depth, classes, rng):
    """FULLY_CONNECTED [1, depth] -> [1, classes] -> SOFTMAX: the end of
    MobileNet, whose logits are read back directly."""
    b = ModelBuilder()
    x = b.add_input([1, depth])
    w = b.add_const(rng.uniform(-0.5, 0.5, [classes, depth]).astype(np.float32))
    bias = b.add_const(rng.uniform(-1, 1, [classes]).astype(np.float32))
    logits = b.add_tensor([1, classes])
    b.add_op("FULLY_CONNECTED", [x, w, bias], [logits],
             {"fused_activation_function": "NONE", "keep_num_dims": False})
    o = b.add_tensor([1, classes])
    b.add_op("SOFTMAX", [logits], [o], {"beta": 1.0})
    return b.build()


def run_invokes(model, make_inputs, options, exact, fp16, invokes=3):
    """Invokes the delegate and the CPU alike; returns the delegate's stats."""
    delegate = gt.make_delegate(options)
    gpu_interp = gt.interpreter(model, delegate)
    cpu_interp = gt.interpreter(model)
    for i in range(invokes):
        inputs = make_inputs(i)
        gpu = gt.invoke(gpu_interp, inputs)
        cpu = gt.invoke(cpu_interp, inputs)
        if exact:
            for g, c in zip(gpu, cpu):
                np.testing.assert_array_equal(g, c)
        else:
            assert_close(gpu, cpu, fp16)
    stats = gt.stats(delegate)
    assert_fully_delegated(stats)
    return stats


FP16 = {"precision_loss_allowed": "true"}

# (shape, whether PHWC4 is BHWC): one slice of 4 channels; one pixel per
# batch with whole slices; one pixel, one batch. For the others, direct
# inputs are relaid out on the CPU and outputs keep their conversion unless
# TFLITE_GLES_X_CPU_READBACK_RELAYOUT relays them out on the CPU too.
SHAPES = [
    ([2, 5, 7, 4], True),     # C == 4
    ([3, 1, 1, 8], True),     # H*W == 1, C % 4 == 0
    ([1, 1, 1, 5], True),     # H*W == 1, B == 1, padded lanes
    ([1, 1001], True),        # MobileNet's class count
    ([3, 1, 1, 6], False),    # H*W == 1 but B > 1 and C % 4 != 0
    ([2, 5, 7, 3], False),    # image-like, 3 channels
    ([2, 4, 5, 9], False),    # 3 slices, the last padded
]


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("shape,coincide", SHAPES, ids=[str(s[0]) for s in SHAPES])
def test_direct_transfers_give_the_cpu_answer_without_conversions(
        monkeypatch, shape, coincide, precision):
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    model = add_model(shape)
    options = FP16 if precision == "fp16" else {}

    def inputs(_):
        return [rng.uniform(-3, 3, shape).astype(np.float32) for _ in range(2)]

    dispatches = {}
    # Off; on (every tensor here is under the size limit); on with a limit
    # of 0 (uploads converted, outputs direct only where layouts coincide);
    # each with outputs of other layouts read back through a conversion
    # (relayout 0, real GPUs) or relaid out on the CPU (1, llvmpipe's
    # default: DeviceProfile::cpu_readback_relayout).
    for direct, limit, relayout in (("0", "64", "1"), ("1", "64", "0"), ("1", "0", "0"),
                                    ("1", "64", "1"), ("1", "0", "1")):
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", direct)
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", limit)
        monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", relayout)
        stats = run_invokes(model, inputs, options, exact=precision == "fp32",
                            fp16=precision == "fp16")
        dispatches[direct + "/" + limit + "/" + relayout] = stats["dispatches"]
    # Converted: 2 upload conversions, the ADD, 1 readback conversion. The
    # output crosses directly where the layouts coincide, or with relayout.
    readback = 0 if coincide else 1
    assert dispatches == {"0/64/1": 4, "1/64/0": 1 + readback, "1/0/0": 3 + readback,
                          "1/64/1": 1, "1/0/1": 3}, dispatches


@pytest.mark.parametrize("direct", ["0", "1"])
@pytest.mark.parametrize("shape", [[2, 5, 7, 4], [1, 1, 1, 7], [2, 3, 5, 3]])
def test_bool_tensors_cross_both_ways(monkeypatch, direct, shape):
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", direct)
    rng = np.random.default_rng(7)
    run_invokes(add_model(shape, np.bool_),
                lambda _: [rng.random(shape) < 0.5 for _ in range(2)], {}, True, False)


@pytest.mark.parametrize("half", ["0", "1"])
@pytest.mark.parametrize("storage", ["auto", "ssbo"])
def test_fp16_staged_inputs_stay_within_fp16_tolerance(monkeypatch, half, storage):
    """Half staging needs a samplerBuffer view of the staging; with storage=
    ssbo (and no staging view) it falls back to float staging."""
    monkeypatch.setenv("TFLITE_GLES_X_HALF_UPLOAD", half)
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")  # staged, converted
    # Copied: an aliased float input is staged as floats (runtime_alias.cc).
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_IO", "0")
    shape = [2, 9, 11, 3]
    rng = np.random.default_rng(11)
    model = add_model(shape)
    options = dict(FP16, storage=storage)
    run_invokes(model, lambda _: [rng.uniform(-3, 3, shape).astype(np.float32)
                                  for _ in range(2)], options, False, True)
    # Values beyond fp16's range saturate like fp16 storage always did;
    # within range the error bound holds (checked above). Bool through
    # half staging: exactly 0 and 1.
    bshape = [2, 9, 11, 3]
    run_invokes(add_model(bshape, np.bool_),
                lambda _: [rng.random(bshape) < 0.5 for _ in range(2)], options, True, False)


@pytest.mark.parametrize("readback", ["map", "fence", "spin", "mapped", "mapped_spin"])
@pytest.mark.parametrize("direct", ["0", "1"])
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_every_readback_wait_gives_the_cpu_answer(monkeypatch, readback, direct, precision):
    monkeypatch.setenv("TFLITE_GLES_X_READBACK", readback)
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", direct)
    fp16 = precision == "fp16"
    options = FP16 if fp16 else {}
    rng = np.random.default_rng(5)
    model = classifier_model(40, 1001, rng)
    run_invokes(model, lambda _: [rng.uniform(-1, 1, [1, 40]).astype(np.float32)],
                options, False, fp16, invokes=4)
    shape = [2, 6, 5, 3]
    run_invokes(add_model(shape), lambda _: [rng.uniform(-3, 3, shape).astype(np.float32)
                                             for _ in range(2)], options, not fp16, fp16)


def test_an_output_that_is_also_read_keeps_its_conversion(monkeypatch):
    """A tensor both read back and consumed by a later kernel stays in video
    memory (a direct readback would put it in host memory for that kernel)."""
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", "1")
    shape = [1, 3, 5, 4]
    b = ModelBuilder()
    x = b.add_input(shape)
    y = b.add_input(shape)
    mid = b.add_tensor(shape)
    out = b.add_tensor(shape)
    b.add_op("ADD", [x, y], [mid], {"fused_activation_function": "NONE"})
    b.add_op("MUL", [mid, y], [out], {"fused_activation_function": "NONE"})
    b.set_outputs([mid, out])
    rng = np.random.default_rng(9)
    stats = run_invokes(b.build(), lambda _: [rng.uniform(-3, 3, shape).astype(np.float32)
                                              for _ in range(2)], {}, True, False)
    # Direct uploads; ADD, MUL; `mid` read back through a conversion.
    assert stats["dispatches"] == 3, stats


def resize_output_model(shape, size, align_corners, half_pixel, also_read=False):
    """ADD -> RESIZE_BILINEAR as the output (DeepLab's end); with also_read
    the ADD's result feeds a MUL output as well."""
    b = ModelBuilder()
    x = b.add_input(shape)
    y = b.add_input(shape)
    mid = b.add_tensor(shape)
    out = b.add_tensor([shape[0], *size, shape[3]])
    b.add_op("ADD", [x, y], [mid], {"fused_activation_function": "NONE"})
    b.add_op("RESIZE_BILINEAR", [mid, b.add_const(np.array(size, np.int32))], [out],
             {"align_corners": align_corners, "half_pixel_centers": half_pixel})
    outputs = [out]
    if also_read:
        product = b.add_tensor(shape)
        b.add_op("MUL", [mid, y], [product], {"fused_activation_function": "NONE"})
        outputs.append(product)
    b.set_outputs(outputs)
    return b.build()


@pytest.mark.parametrize("rows", ["0", "1"], ids=["pixels", "rows"])
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("shape,size,align_corners,half_pixel", [
    ([1, 4, 4, 21], [25, 25], False, False),  # DeepLab's 8x + 1, 21 classes
    ([2, 5, 7, 6], [11, 16], False, True),    # two batches, half-pixel centres
    ([1, 3, 5, 9], [7, 4], True, False),      # align_corners, narrower in x
], ids=["deeplab-like", "half-pixel", "align-corners"])
def test_an_output_resize_runs_on_the_cpu_at_readback(
        monkeypatch, shape, size, align_corners, half_pixel, precision, rows):
    """TFLITE_GLES_X_CPU_READBACK_RESIZE (the default): the resize's input
    is read back and interpolated on the CPU, per pixel (llvmpipe) or as
    row blends (TFLITE_GLES_X_ROW_READBACK_RESIZE, real GPUs); the dispatch
    count proves that the resize's dispatch is gone, and where its input is
    read by another kernel too, that it stays."""
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", "1")
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", "1")
    monkeypatch.setenv("TFLITE_GLES_X_ROW_READBACK_RESIZE", rows)
    rng = np.random.default_rng(shape[-1])
    options = FP16 if precision == "fp16" else {}

    def inputs(_):
        return [rng.uniform(-3, 3, shape).astype(np.float32) for _ in range(2)]

    dispatches = {}
    for switch in ("0", "1"):
        monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RESIZE", switch)
        for also_read in (False, True):
            model = resize_output_model(shape, size, align_corners, half_pixel, also_read)
            stats = run_invokes(model, inputs, options, exact=False,
                                fp16=precision == "fp16")
            dispatches[switch, also_read] = stats["dispatches"]
    # ADD and the resize (and the MUL); on the CPU: the ADD alone.
    assert dispatches == {("0", False): 2, ("0", True): 3,
                          ("1", False): 1, ("1", True): 3}, dispatches


@pytest.mark.parametrize("shape,size", [
    ([1, 17, 17, 21], [257, 257]),   # DeepLab's 257x257x21: 5.5 MB, four parts
    ([2, 9, 9, 21], [181, 181]),     # the parts' rows cross the batch boundary
], ids=["deeplab", "two-batches"])
@pytest.mark.parametrize("kernel", ["pixels", "rows", "rows-streaming", "fp16-rows",
                                    "fp16-rows-serial"])
def test_a_cpu_resize_at_readback_split_among_copy_threads(monkeypatch, shape, size, kernel):
    """On real GPUs the copy threads (TFLITE_GLES_X_COPY_THREADS) share the
    rows of a resize done at readback; forced here with four threads, so
    each thread's rows, and the row-blend buffer each one keeps, are
    checked against TFLite's CPU kernels: the per-pixel loop, the row
    blends (each thread's cache of two source rows crossing its band's and
    the batches' edges) and their non-temporal stores. fp16: each thread
    converts its source rows from the mapped halves
    (TFLITE_GLES_X_HALF_READBACK_ROWS, the default), or one thread copies
    and converts the whole source first (=0)."""
    fp16 = kernel.startswith("fp16")
    for name, value in (("DIRECT_TRANSFERS", "1"), ("CPU_READBACK_RELAYOUT", "1"),
                        ("CPU_READBACK_RESIZE", "1"), ("COPY_THREADS", "4"),
                        ("ROW_READBACK_RESIZE", "0" if kernel == "pixels" else "1"),
                        ("STREAMING_READBACK", "1" if kernel == "rows-streaming" else "0"),
                        ("HALF_READBACK_ROWS", "0" if kernel.endswith("serial") else "1"),
                        ("READBACK", "mapped")):
        monkeypatch.setenv("TFLITE_GLES_X_" + name, value)
    rng = np.random.default_rng(size[0])
    model = resize_output_model(shape, size, align_corners=False, half_pixel=True)
    stats = run_invokes(model, lambda _: [rng.uniform(-3, 3, shape).astype(np.float32)
                                          for _ in range(2)], FP16 if fp16 else {},
                        exact=False, fp16=fp16)
    assert stats["dispatches"] == 1, stats  # the ADD; the resize ran on the CPU


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_with_aliased_outputs_an_output_resize_stays_on_the_gpu(monkeypatch, precision):
    """Zero-copy outputs (TFLITE_GLES_X_ALIAS_IO, real GPUs' default) take the
    CPU resize at readback back: the resize runs on the GPU and its readback
    conversion writes TFLite's tensor; TFLITE_GLES_X_CPU_READBACK_RESIZE=1
    still forces the CPU's. Both against TFLite's CPU kernels."""
    for name, value in (("DIRECT_TRANSFERS", "1"), ("CPU_READBACK_RELAYOUT", "0"),
                        ("ALIAS_IO", "1")):  # real GPUs' transfers
        monkeypatch.setenv("TFLITE_GLES_X_" + name, value)
    monkeypatch.delenv("TFLITE_GLES_X_CPU_READBACK_RESIZE", raising=False)
    shape, size = [1, 5, 6, 21], [33, 41]
    rng = np.random.default_rng(9)
    model = resize_output_model(shape, size, align_corners=False, half_pixel=True)
    fp16 = precision == "fp16"

    def inputs(_):
        return [rng.uniform(-3, 3, shape).astype(np.float32) for _ in range(2)]

    stats = run_invokes(model, inputs, FP16 if fp16 else {}, exact=False, fp16=fp16)
    assert stats["dispatches"] == 3, stats  # ADD, the resize, its readback conversion
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RESIZE", "1")
    stats = run_invokes(model, inputs, FP16 if fp16 else {}, exact=False, fp16=fp16)
    assert stats["dispatches"] == 1, stats  # the ADD; the resize ran on the CPU


def test_a_cpu_resize_at_readback_reads_through_an_identity_view(monkeypatch):
    """DeepLab's end: a 33 -> 33 RESIZE_BILINEAR (a view of its input since
    the identity resize became one) feeds the final resize; the CPU resize
    at readback reads the view's root, and the output matches TFLite's CPU."""
    for name in ("DIRECT_TRANSFERS", "CPU_READBACK_RELAYOUT", "CPU_READBACK_RESIZE"):
        monkeypatch.setenv("TFLITE_GLES_X_" + name, "1")
    shape, size = [1, 5, 5, 21], [33, 33]
    b = ModelBuilder()
    x, y = b.add_input(shape), b.add_input(shape)
    mid, same, out = b.add_tensor(shape), b.add_tensor(shape), b.add_tensor([1, *size, 21])
    b.add_op("ADD", [x, y], [mid], {"fused_activation_function": "NONE"})
    for src, dst, to in ((mid, same, shape[1:3]), (same, out, size)):
        b.add_op("RESIZE_BILINEAR", [src, b.add_const(np.array(to, np.int32))], [dst],
                 {"align_corners": False, "half_pixel_centers": False})
    b.set_outputs([out])
    rng = np.random.default_rng(5)
    stats = run_invokes(b.build(), lambda _: [rng.uniform(-3, 3, shape).astype(np.float32)
                                              for _ in range(2)], {}, exact=False, fp16=False)
    assert stats["dispatches"] == 1, stats  # the ADD alone: no resize on the GPU
