"""AVERAGE_POOL_2D, MAX_POOL_2D, MEAN, SOFTMAX, L2_NORMALIZATION,
RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR through the real LiteRT
interpreter: each single-op model runs on the CPU and through the delegate,
fully delegated, and the answers agree. Parameters the GPU kernels decline
leave the node on the CPU, with the reason logged and the right answer.

MediaPipe's MaxPoolingWithArgmax2D / MaxUnpooling2D are tested in
tests/cpp/pool_test.cc: the interpreter has no CPU kernel for them and
refuses such a model before any delegate sees it."""

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated, random_inputs,
                          run_cpu_and_gpu, run_switch_off_and_on, single_op_model)

CHANNELS = [1, 3, 4, 5, 8, 13]
PRECISIONS = [False, True]


def run_and_compare(model, shapes, fp16, seed=0, low=-2.0, high=2.0):
    inputs = random_inputs(shapes, seed=seed, low=low, high=high)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs, {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


def assert_stays_on_cpu(model, shapes, capfd, reason):
    """The node is declined with `reason` in the log, and the CPU answers."""
    inputs = random_inputs(shapes, seed=5)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs)
    assert stats["nodes_delegated"] == 0, stats
    assert reason in capfd.readouterr().err
    assert_close(gpu, cpu)


POOL_CASES = [  # filter, strides, padding, activation
    ((3, 3), (2, 2), "SAME", "NONE"),
    ((2, 3), (1, 2), "VALID", "RELU6"),
    ((2, 2), (2, 2), "SAME", "RELU"),
]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pooling(op, channels, fp16):
    shape = [2, 7, 9, channels]
    for (fh, fw), (sh, sw), padding, activation in POOL_CASES:
        model = single_op_model(op, [shape], {
            "padding": padding, "filter_height": fh, "filter_width": fw,
            "stride_h": sh, "stride_w": sw, "fused_activation_function": activation})
        run_and_compare(model, [shape], fp16, seed=channels, low=-4, high=4)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_global_pooling_of_a_large_map(op, fp16):
    # DeepLab's 33x33 global average pool: row sums first, then their mean.
    shape = [1, 33, 33, 40]
    model = single_op_model(op, [shape], {
        "padding": "VALID", "filter_height": 33, "filter_width": 33,
        "stride_h": 1, "stride_w": 1})
    run_and_compare(model, [shape], fp16)


def test_mean_and_average_pool_past_the_loop_limit():
    """llvmpipe stops an invocation's loops after 65535 iterations in all;
    these maps (the style-transfer model's instance norms) are larger."""
    shape = [1, 384, 384, 3]
    model = single_op_model("MEAN", [shape], {"keep_dims": True},
                            consts={1: np.array([1, 2], np.int32)})
    run_and_compare(model, [shape], False, low=0, high=1)
    shape = [1, 300, 257, 5]
    model = single_op_model("AVERAGE_POOL_2D", [shape], {
        "padding": "VALID", "filter_height": 300, "filter_width": 257,
        "stride_h": 1, "stride_w": 1})
    run_and_compare(model, [shape], False, low=0, high=1)


MEAN_CASES = [  # input shape (channels appended), axes, keep_dims
    ([2, 5, 7], [1, 2], True),
    ([2, 5, 7], [1, 2], False),
    ([1, 5, 7], [-1], False),
    ([2, 3, 5], [2, 3], True),
    ([1, 4, 3], [0, 1, 2, 3], False),
    ([3], [1], False),
]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_mean(channels, fp16):
    for prefix, axes, keep_dims in MEAN_CASES:
        shape = prefix + [channels]
        model = single_op_model("MEAN", [shape], {"keep_dims": keep_dims},
                                consts={1: np.array(axes, np.int32)})
        run_and_compare(model, [shape], fp16, seed=channels)


def test_mean_over_batch_stays_on_cpu(capfd):
    shape = [2, 3, 3, 4]
    model = single_op_model("MEAN", [shape], {"keep_dims": True},
                            consts={1: np.array([0], np.int32)})
    assert_stays_on_cpu(model, [shape], capfd, "batch axis")


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_softmax_and_l2_normalization(channels, fp16):
    for shape in ([2, 3, 5, channels], [3, channels]):
        for beta in (1.0, 0.4):
            model = single_op_model("SOFTMAX", [shape], {"beta": beta})
            run_and_compare(model, [shape], fp16, seed=channels, low=-9, high=9)
        run_and_compare(single_op_model("L2_NORMALIZATION", [shape]), [shape], fp16,
                        seed=channels)


@pytest.mark.parametrize("fp16", PRECISIONS)
def test_softmax_over_a_thousand_classes(fp16):
    shape = [1, 1001]
    model = single_op_model("SOFTMAX", [shape], {"beta": 1.0})
    # fp32: far below zero, so that an unmasked zero-padded lane taken as the
    # maximum would underflow every exp() (1001 classes leave 3 padded lanes).
    # fp16 storage rounds logits near 100 by up to 0.03, a 3% error in exp():
    # it gets a range it can hold.
    low, high = (-8, 8) if fp16 else (-120, -90)
    run_and_compare(model, [shape], fp16, low=low, high=high)


RESIZE_FLAGS = [(False, False), (True, False), (False, True)]


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def test_resize(op, channels, fp16):
    shape = [2, 5, 7, channels]
    flags = RESIZE_FLAGS + ([(True, True)] if op == "RESIZE_NEAREST_NEIGHBOR" else [])
    for size in ([11, 16], [3, 4]):
        for align_corners, half_pixel_centers in flags:
            model = single_op_model(op, [shape], {
                "align_corners": align_corners, "half_pixel_centers": half_pixel_centers},
                consts={1: np.array(size, np.int32)})
            run_and_compare(model, [shape], fp16, seed=channels)


def test_resize_from_a_single_pixel():
    shape = [1, 1, 1, 6]
    for op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
        model = single_op_model(op, [shape], {"align_corners": True},
                                consts={1: np.array([3, 5], np.int32)})
        run_and_compare(model, [shape], False)


@pytest.mark.parametrize("op,align_corners,half_pixel,view", [
    ("RESIZE_BILINEAR", False, False, True),
    ("RESIZE_BILINEAR", True, False, True),
    ("RESIZE_BILINEAR", False, True, True),
    ("RESIZE_NEAREST_NEIGHBOR", True, False, True),
    # Rounds o + 0.5 up: not a copy, so it keeps its dispatch.
    ("RESIZE_NEAREST_NEIGHBOR", True, True, False),
])
def test_resize_to_the_same_size_is_a_view(monkeypatch, op, align_corners, half_pixel, view):
    """TFLITE_GLES_X_RESIZE_VIEW: a resize to its input's own size (DeepLab's
    33 -> 33) is a view of its input where it is exactly a copy; the ADD after
    it reads the view. Both ways against TFLite's CPU kernels."""
    shape = [1, 5, 7, 6]
    b = ModelBuilder()
    x = b.add_input(shape)
    y = b.add_input(shape)
    t = b.add_tensor(shape)
    b.add_op("ADD", [x, y], [t], {"fused_activation_function": "NONE"})
    size = b.add_const(np.array(shape[1:3], np.int32))
    r = b.add_tensor(shape)
    b.add_op(op, [t, size], [r], {"align_corners": align_corners,
                                  "half_pixel_centers": half_pixel})
    o = b.add_tensor(shape)
    b.add_op("MUL", [r, y], [o], {"fused_activation_function": "NONE"})
    inputs = random_inputs([shape, shape], seed=3)
    cpu, (off, off_stats), (on, on_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_RESIZE_VIEW", b.build(), inputs)
    for s in (off_stats, on_stats):
        assert_fully_delegated(s)
    assert_close(off, cpu)
    assert_close(on, cpu)
    # The view drops the resize's dispatch (and may let MUL fold into ADD).
    fewer = on_stats["dispatches"] < off_stats["dispatches"]
    same = on_stats["dispatches"] == off_stats["dispatches"]
    assert (fewer if view else same), (off_stats, on_stats)


def test_pool_with_tanh_stays_on_cpu(capfd):
    shape = [1, 4, 4, 3]
    model = single_op_model("MAX_POOL_2D", [shape], {
        "padding": "SAME", "filter_height": 2, "filter_width": 2, "stride_h": 2,
        "stride_w": 2, "fused_activation_function": "TANH"})
    assert_stays_on_cpu(model, [shape], capfd, "activation")
