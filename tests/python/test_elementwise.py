"""ADD, SUB, MUL with fused activations and broadcasting, and RELU, RELU6,
LOGISTIC, through the real LiteRT interpreter: each single-op model runs on
the CPU and through the delegate, fully delegated, and the answers agree."""

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated,
                          random_inputs, run_cpu_and_gpu)

CHANNELS = [1, 3, 4, 5, 8, 13]
PRECISIONS = [False, True]


def binary_model(op, shape_a, shape_b, activation, const_b=None):
    b = ModelBuilder()
    x = b.add_input(shape_a)
    y = b.add_const(const_b) if const_b is not None else b.add_input(shape_b)
    out_shape = np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
    o = b.add_tensor(list(out_shape))
    b.add_op(op, [x, y], [o], {"fused_activation_function": activation})
    return b.build()


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("activation", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_same_shape(op, activation, channels, fp16):
    shape = [1, 5, 7, channels]
    model = binary_model(op, shape, shape, activation)
    inputs = random_inputs([shape, shape], seed=channels)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs, {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_per_channel_and_scalar_constants(op, channels, fp16):
    shape = [2, 4, 3, channels]
    rng = np.random.default_rng(channels)
    for const in (rng.uniform(0.5, 2, [channels]).astype(np.float32),
                  np.array(1.5, np.float32)):
        model = binary_model(op, shape, list(const.shape), "NONE", const_b=const)
        cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([shape], seed=3),
                                          {"precision_loss_allowed": fp16})
        assert_fully_delegated(stats)
        assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("op", ["RELU", "RELU6", "LOGISTIC"])
def test_unary(op, channels, fp16):
    shape = [1, 6, 5, channels]
    b = ModelBuilder()
    x = b.add_input(shape)
    o = b.add_tensor(shape)
    b.add_op(op, [x], [o])
    inputs = random_inputs([shape], seed=channels, low=-9, high=9)
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), inputs, {"precision_loss_allowed": fp16})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)
