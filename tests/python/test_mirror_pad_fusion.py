"""MIRROR_PAD done in the gather of the convolution that reads it
(delegate/passes/mirror_pad_fusion.h, conv2d.comp GATHER_MIRROR): the real
LiteRT CPU kernels against the delegate with the fusion off and on, on random
data, at every border case: REFLECT and SYMMETRIC, paddings of 0 on one side,
asymmetric, and the largest each mode allows (size - 1, size), so that taps
reach the reflection of the far edge; strides, dilation, batch 2, channel
counts that leave lanes padded, the split sum (K_SPLIT) and a first layer
that reads the image's upload staging itself (BHWC_INPUT). The fusion saves
exactly the pad's dispatch (and a first layer's upload conversion, which
then folds into the convolution too), and none where it must not fuse.
"""

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated,
                          random_inputs, run_switch_off_and_on)

SWITCH = "TFLITE_GLES_X_FUSE_MIRROR_PAD"


def pad_conv_model(in_shape, pads, mode, filter_shape, stride=1, dilation=1,
                   conv_padding="VALID", second_reader=False, channel_pad=0, seed=0):
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input(in_shape)
    (top, bottom), (left, right) = pads
    padded_shape = [in_shape[0], in_shape[1] + top + bottom, in_shape[2] + left + right,
                    in_shape[3] + channel_pad]
    paddings = np.array([[0, 0], [top, bottom], [left, right], [0, channel_pad]], np.int32)
    padded = b.add_tensor(padded_shape)
    b.add_op("MIRROR_PAD", [x, b.add_const(paddings)], [padded], {"mode": mode})
    out_c, kh, kw = filter_shape[0], filter_shape[1], filter_shape[2]
    filter_shape = [out_c, kh, kw, padded_shape[3]]

    def size(i, k):
        if conv_padding == "SAME":
            return -(-i // stride)
        return (i - (k - 1) * dilation - 1) // stride + 1

    o = b.add_tensor([in_shape[0], size(padded_shape[1], kh), size(padded_shape[2], kw), out_c])
    b.add_op("CONV_2D", [padded, b.add_const(rng.uniform(-0.5, 0.5, filter_shape)
                                             .astype(np.float32)),
                         b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32))],
             [o], {"padding": conv_padding, "stride_h": stride, "stride_w": stride,
                   "dilation_h_factor": dilation, "dilation_w_factor": dilation,
                   "fused_activation_function": "RELU"},
             version=2 if dilation > 1 else 1)
    outputs = [o]
    if second_reader:  # the padded tensor is read again: it must stay
        r = b.add_tensor(padded_shape)
        b.add_op("RELU", [padded], [r])
        outputs.append(r)
    b.set_outputs(outputs)
    return b.build()


# (input, ((top, bottom), (left, right)), mode, filter OHW(I), stride,
#  dilation, K_SPLIT, first layer on the upload staging)
CASES = [
    ([1, 9, 8, 5], ((1, 1), (1, 1)), "REFLECT", [6, 3, 3], 1, 1, False, False),
    ([1, 10, 9, 3], ((4, 4), (4, 4)), "REFLECT", [8, 9, 9], 1, 1, False, True),
    ([1, 7, 6, 8], ((2, 0), (0, 3)), "SYMMETRIC", [4, 3, 2], 2, 1, False, False),
    ([1, 4, 5, 4], ((3, 3), (4, 4)), "REFLECT", [5, 3, 3], 1, 2, False, False),
    ([1, 3, 4, 6], ((3, 3), (4, 4)), "SYMMETRIC", [3, 5, 5], 1, 1, False, False),
    ([2, 6, 7, 5], ((2, 1), (1, 2)), "REFLECT", [4, 3, 3], 1, 1, False, False),
    ([1, 14, 12, 16], ((1, 1), (1, 1)), "REFLECT", [8, 3, 3], 2, 1, True, False),
    ([1, 12, 11, 3], ((4, 4), (4, 4)), "SYMMETRIC", [3, 9, 9], 1, 1, True, True),
]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("in_shape,pads,mode,kernel,stride,dilation,ksplit,first_layer", CASES)
def test_mirror_pad_in_the_convolution_gather(monkeypatch, in_shape, pads, mode, kernel,
                                               stride, dilation, ksplit, first_layer, fp16):
    monkeypatch.setenv("TFLITE_GLES_X_CONV_KSPLIT", "1" if ksplit else "0")
    if first_layer:
        monkeypatch.setenv("TFLITE_GLES_FUSE_UPLOAD", "1")
        monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    model = pad_conv_model(in_shape, pads, mode, kernel, stride, dilation, seed=in_shape[3])
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs([in_shape], seed=4),
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    # A first layer also loses its upload conversion: with the pad gone the
    # convolution reads the image itself, straight from its staging.
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == (2 if first_layer else 1)


@pytest.mark.parametrize("case", ["second_reader", "channel_pad", "same_conv"])
def test_mirror_pad_that_must_stay(monkeypatch, case):
    """A padded tensor that another op reads, a pad on channels too, and a
    convolution with zero padding of its own after the mirror pad: the pad
    keeps its dispatch, results stay right."""
    model = pad_conv_model([1, 6, 7, 5], ((1, 2), (2, 1)), "REFLECT", [4, 3, 3],
                           second_reader=case == "second_reader",
                           channel_pad=2 if case == "channel_pad" else 0,
                           conv_padding="SAME" if case == "same_conv" else "VALID", seed=7)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, SWITCH, model, random_inputs([[1, 6, 7, 5]], seed=5))
    assert_close(fused, cpu, False)
    assert plain_stats["dispatches"] == fused_stats["dispatches"]
