"""The elementwise family through the real LiteRT interpreter: each single-op
model runs on the CPU and through the delegate, fully delegated, and the
answers agree. Binary ops with fused activations and every broadcast form,
unary ops on their valid domains and at large magnitudes, LOGICAL_AND on bool
tensors, DEQUANTIZE of constants (fp16, int8 per channel, uint8), and the
cases the kernels decline (which must stay on the CPU and still agree)."""

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated,
                          random_inputs, run_cpu_and_gpu)
from tflite_builder import QuantParams

CHANNELS = [1, 3, 4, 5, 8, 13]
PRECISIONS = [False, True]
FUSED_ACTIVATION_OPS = ["ADD", "SUB", "MUL", "DIV"]
PLAIN_BINARY_OPS = ["MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "POW", "PRELU"]


def options(fp16):
    return {"precision_loss_allowed": fp16}


def binary_model(op, shape_a, shape_b, activation=None, const_b=None):
    b = ModelBuilder()
    x = b.add_input(shape_a)
    y = b.add_const(const_b) if const_b is not None else b.add_input(shape_b)
    out_shape = np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
    o = b.add_tensor(list(out_shape))
    b.add_op(op, [x, y], [o],
             {"fused_activation_function": activation} if activation else None)
    return b.build()


def binary_operands(op, shape_a, shape_b, seed):
    """Inputs in the op's domain: POW bases positive (std::pow of a negative
    base with a fractional exponent is NaN); DIV divisors down to 1e-3."""
    if op == "POW":
        a = random_inputs([shape_a], seed=seed, low=0.1, high=3)[0]
        return a, random_inputs([shape_b], seed=seed + 1, low=-3, high=3)[0]
    return tuple(random_inputs([shape_a, shape_b], seed=seed, low=-4, high=4))


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("activation", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("op", FUSED_ACTIVATION_OPS)
def test_binary_same_shape(op, activation, channels, fp16):
    shape = [1, 5, 7, channels]
    model = binary_model(op, shape, shape, activation)
    inputs = binary_operands(op, shape, shape, seed=channels)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs, options(fp16))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("op", PLAIN_BINARY_OPS)
def test_binary_same_shape_without_activation(op, channels, fp16):
    shape = [1, 5, 7, channels]
    model = binary_model(op, shape, shape)
    inputs = binary_operands(op, shape, shape, seed=channels)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs, options(fp16))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("op", FUSED_ACTIVATION_OPS + PLAIN_BINARY_OPS)
def test_binary_per_channel_and_scalar_constants(op, channels, fp16):
    shape = [2, 4, 3, channels]
    rng = np.random.default_rng(channels)
    # Positive constants: valid divisors, exponents and PReLU slopes alike.
    for const in (rng.uniform(0.5, 2, [channels]).astype(np.float32),
                  rng.uniform(0.5, 2, [1, 1, channels]).astype(np.float32),
                  np.array(1.5, np.float32)):
        model = binary_model(op, shape, list(const.shape),
                             "NONE" if op in FUSED_ACTIVATION_OPS else None, const_b=const)
        x = binary_operands(op, shape, [1], seed=3)[0]
        cpu, gpu, stats = run_cpu_and_gpu(model, [x], options(fp16))
        assert_fully_delegated(stats)
        assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("op", FUSED_ACTIVATION_OPS + PLAIN_BINARY_OPS)
def test_binary_single_channel_splat_and_spatial_broadcast(op, fp16):
    for shape_a, shape_b in (([1, 3, 4, 5], [1, 3, 4, 1]),   # splat over channels
                             ([2, 3, 4, 6], [2, 1, 4, 6]),   # broadcast over height
                             ([1, 3, 4, 1], [1, 3, 4, 7])):  # first input splats
        if op == "PRELU" and shape_a != list(np.broadcast_shapes(shape_a, shape_b)):
            continue  # TFLite's PRELU requires output shape == input shape
        model = binary_model(op, shape_a, shape_b)
        inputs = binary_operands(op, shape_a, shape_b, seed=5)
        cpu, gpu, stats = run_cpu_and_gpu(model, inputs, options(fp16))
        assert_fully_delegated(stats)
        assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
def test_div_by_small_numbers_and_constant_numerator(fp16):
    shape = [1, 4, 6, 7]
    rng = np.random.default_rng(9)
    divisor = (rng.uniform(1e-3, 1e-2, shape) * rng.choice([-1, 1], shape)).astype(np.float32)
    b = ModelBuilder()
    x = b.add_input(shape)
    numerator = b.add_const(np.array(3.0, np.float32))
    o = b.add_tensor(shape)
    b.add_op("DIV", [numerator, x], [o], {"fused_activation_function": "NONE"})
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), [divisor], options(fp16))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


def test_pow_of_negative_bases_with_integral_exponents():
    shape = [1, 2, 3, 4]
    base = random_inputs([shape], seed=4, low=-3, high=3)[0]
    for exponent in (2.0, 3.0, -1.0):
        model = binary_model("POW", shape, [], const_b=np.array(exponent, np.float32))
        cpu, gpu, stats = run_cpu_and_gpu(model, [base])
        assert_fully_delegated(stats)
        assert_close(gpu, cpu)


@pytest.mark.parametrize("fp16", PRECISIONS)
def test_prelu_alpha_forms(fp16):
    shape = [1, 5, 6, 7]
    x = random_inputs([shape], seed=2, low=-3, high=3)[0]
    rng = np.random.default_rng(2)
    for alpha_shape in ([7], [1, 1, 7], [5, 6, 7], [5, 1, 7]):
        alpha = rng.uniform(0.05, 0.5, alpha_shape).astype(np.float32)
        model = binary_model("PRELU", shape, alpha_shape, const_b=alpha)
        cpu, gpu, stats = run_cpu_and_gpu(model, [x], options(fp16))
        assert_fully_delegated(stats)
        assert_close(gpu, cpu, fp16)
    # A non-constant alpha of the same shape.
    alpha = random_inputs([shape], seed=3, low=0.05, high=0.5)[0]
    cpu, gpu, stats = run_cpu_and_gpu(binary_model("PRELU", shape, shape), [x, alpha],
                                      options(fp16))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


def unary_model(op, shape, op_options=None):
    b = ModelBuilder()
    x = b.add_input(shape)
    o = b.add_tensor(shape)
    b.add_op(op, [x], [o], op_options)
    return b.build()


UNARY_OPS = {
    # op: (low, high) of the inputs: each op's valid domain.
    "RELU": (-9, 9), "RELU6": (-9, 9), "RELU_N1_TO_1": (-3, 3), "RELU_0_TO_1": (-3, 3),
    "LOGISTIC": (-9, 9), "TANH": (-9, 9), "EXP": (-10, 10), "SQRT": (1e-3, 100),
    "RSQRT": (1e-3, 100), "ABS": (-9, 9), "NEG": (-9, 9), "SQUARE": (-9, 9),
    "LEAKY_RELU": (-9, 9), "ELU": (-9, 9), "HARD_SWISH": (-9, 9),
}


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("op", list(UNARY_OPS))
def test_unary(op, channels, fp16):
    shape = [1, 6, 5, channels]
    low, high = UNARY_OPS[op]
    op_options = {"alpha": 0.3} if op == "LEAKY_RELU" else None
    inputs = random_inputs([shape], seed=channels, low=low, high=high)
    cpu, gpu, stats = run_cpu_and_gpu(unary_model(op, shape, op_options), inputs,
                                      options(fp16))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("op", ["TANH", "LOGISTIC", "ELU", "EXP"])
def test_unary_large_magnitudes(op, fp16):
    """Where a naive formula overflows exp(): no NaN/Inf the CPU does not
    produce. EXP stays below fp16's 65504 in fp16 (exp(11) = 59874) and goes
    to exp(88) ~ 1.6e38 in fp32."""
    shape = [1, 4, 8, 6]
    low, high = (-100, 100) if op != "EXP" else ((-80, 11) if fp16 else (-80, 88))
    inputs = random_inputs([shape], seed=11, low=low, high=high)
    cpu, gpu, stats = run_cpu_and_gpu(unary_model(op, shape), inputs, options(fp16))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


def test_exp_overflow_in_fp16_saturates_instead_of_inf():
    shape = [1, 2, 3, 4]
    inputs = random_inputs([shape], seed=12, low=12, high=20)
    cpu, gpu, stats = run_cpu_and_gpu(unary_model("EXP", shape), inputs, options(True))
    assert_fully_delegated(stats)
    assert np.isfinite(cpu[0]).all()
    np.testing.assert_array_equal(gpu[0], np.full(shape, 65504, np.float32))


@pytest.mark.parametrize("fp16", PRECISIONS)
def test_logical_and_of_bool_tensors(fp16):
    rng = np.random.default_rng(6)
    for shape_a, shape_b, const in (([1, 3, 4, 5], [1, 3, 4, 5], False),
                                    ([2, 3, 4, 6], [6], True),
                                    ([1, 3, 4, 7], [1, 3, 4, 1], False)):
        b = ModelBuilder()
        x = b.add_input(shape_a, np.bool_)
        value_b = rng.random(shape_b) < 0.5
        y = b.add_const(value_b) if const else b.add_input(shape_b, np.bool_)
        o = b.add_tensor(list(np.broadcast_shapes(tuple(shape_a), tuple(shape_b))), np.bool_)
        b.add_op("LOGICAL_AND", [x, y], [o])
        inputs = [rng.random(shape_a) < 0.5] + ([] if const else [value_b])
        cpu, gpu, stats = run_cpu_and_gpu(b.build(), inputs, options(fp16))
        assert_fully_delegated(stats)
        assert gpu[0].dtype == np.bool_
        np.testing.assert_array_equal(gpu[0], cpu[0])


def dequantize_add_model(weights, quant=None, weights_also_output=False):
    """x + DEQUANTIZE(constant weights); optionally the dequantized weights
    are a graph output too."""
    shape = list(weights.shape)
    b = ModelBuilder()
    x = b.add_input(shape)
    w = b.add_const(weights, quant=quant)
    w_float = b.add_tensor(shape)
    b.add_op("DEQUANTIZE", [w], [w_float])
    o = b.add_tensor(shape)
    b.add_op("ADD", [x, w_float], [o], {"fused_activation_function": "NONE"})
    b.set_outputs([o, w_float] if weights_also_output else [o])
    return b.build()


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("weights_also_output", [False, True])
def test_dequantize_fp16_weights_fold_into_one_partition(weights_also_output, fp16):
    shape = [1, 4, 5, 6]
    weights = random_inputs([shape], seed=8)[0].astype(np.float16)
    model = dequantize_add_model(weights, weights_also_output=weights_also_output)
    cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([shape], seed=9), options(fp16))
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)
    if weights_also_output:  # written from the folded constant, exactly
        np.testing.assert_array_equal(gpu[1], weights.astype(np.float32))


def test_dequantize_int8_per_channel_and_uint8_per_tensor():
    shape = [2, 3, 4, 5]
    rng = np.random.default_rng(10)
    cases = [(rng.integers(-127, 128, shape).astype(np.int8),
              QuantParams(scale=list(rng.uniform(0.01, 0.1, shape[axis])),
                          zero_point=[0] * shape[axis], quantized_dimension=axis))
             for axis in (0, 1, 3)]
    cases.append((rng.integers(0, 256, shape).astype(np.uint8),
                  QuantParams(scale=0.05, zero_point=128)))
    for weights, quant in cases:
        model = dequantize_add_model(weights, quant, weights_also_output=True)
        cpu, gpu, stats = run_cpu_and_gpu(model, random_inputs([shape], seed=11))
        assert_fully_delegated(stats)
        assert_close(gpu, cpu)


def test_declined_cases_stay_on_the_cpu_and_agree():
    shape = [1, 3, 4, 5]
    # DEQUANTIZE of a non-constant (an fp16 graph input).
    b = ModelBuilder()
    x = b.add_input(shape, np.float16)
    o = b.add_tensor(shape)
    b.add_op("DEQUANTIZE", [x], [o])
    declined = [(b.build(), [random_inputs([shape], seed=1)[0].astype(np.float16)])]
    # A non-constant input of lower rank (it would need a relayout).
    declined.append((binary_model("MAXIMUM", shape, [4, 5]),
                     random_inputs([shape, [4, 5]], seed=2)))
    # int32 tensors.
    b = ModelBuilder()
    x, y = b.add_input(shape, np.int32), b.add_input(shape, np.int32)
    o = b.add_tensor(shape, np.int32)
    b.add_op("MINIMUM", [x, y], [o])
    rng = np.random.default_rng(3)
    declined.append((b.build(), [rng.integers(-50, 50, shape).astype(np.int32)
                                 for _ in range(2)]))
    # Fused TANH: the CPU kernels ignore it (a + b), so the GPU must not run it.
    declined.append((binary_model("ADD", shape, shape, "TANH"), random_inputs([shape] * 2, seed=4)))
    for model, inputs in declined:
        cpu, gpu, stats = run_cpu_and_gpu(model, inputs)
        assert stats["nodes_delegated"] == 0, stats
        for g, c in zip(gpu, cpu):
            np.testing.assert_array_equal(g, c)


def test_dequantize_output_read_by_a_cpu_op_too():
    """DEQUANTIZE -> ADD on the GPU and -> FLOOR (no GPU kernel) on the CPU:
    the DEQUANTIZE stays with its CPU consumer (issue 20: a CPU op needs the
    tensor as TFLite's DEQUANTIZE makes it), and the ADD on the GPU folds
    the constant itself."""
    shape = [1, 3, 4, 5]
    weights = (random_inputs([shape], seed=13, low=-5, high=5)[0]).astype(np.float16)
    b = ModelBuilder()
    x = b.add_input(shape)
    w = b.add_const(weights)
    w_float = b.add_tensor(shape)
    b.add_op("DEQUANTIZE", [w], [w_float])
    added = b.add_tensor(shape)
    b.add_op("ADD", [x, w_float], [added], {"fused_activation_function": "NONE"})
    floored = b.add_tensor(shape)
    b.add_op("FLOOR", [w_float], [floored])
    b.set_outputs([added, floored])
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), random_inputs([shape], seed=14))
    assert stats["nodes_delegated"] == 1 and stats["partitions"] == 1, stats
    assert_close(gpu, cpu)
    np.testing.assert_array_equal(gpu[1], np.floor(weights.astype(np.float32)))


@pytest.mark.parametrize("op", FUSED_ACTIVATION_OPS)
def test_overflow_and_division_by_zero_match_the_cpu(op):
    """The CPU clamps ADD/SUB/MUL/DIV to [-FLT_MAX, FLT_MAX] (the activation
    range of NONE), so overflows and x/0 give +-3.4e38 there, not Inf; 0/0
    stays NaN. fp32 only: fp16 storage saturates at 65504 by design.
    Divisors stay within [2^-126, 2^126], where GLSL specifies division
    (NVIDIA computes 3e38 / 3e38 as 0 through an underflowing reciprocal)."""
    shape = [1, 1, 2, 4]
    a = np.array([3e38, -3e38, 0, 3, 1e30, -2, 5, 7], np.float32).reshape(shape)
    large = 0.25 if op == "DIV" else 3e38
    b = np.array([large, large, 0, 0, 1e30, 0, 2, 1e-30], np.float32).reshape(shape)
    cpu, gpu, stats = run_cpu_and_gpu(binary_model(op, shape, shape, "NONE"), [a, b])
    assert_fully_delegated(stats)
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-6)  # NaN == NaN here


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("storage", ["ssbo", "texture_buffer"])
def test_chain_of_new_ops_under_both_read_paths(storage, fp16):
    """DIV -> PRELU -> ELU -> SQUARED_DIFFERENCE -> HARD_SWISH -> MAXIMUM in one
    partition, reading through SSBO loads and through samplerBuffer views."""
    shape = [1, 6, 5, 7]
    rng = np.random.default_rng(21)
    b = ModelBuilder()
    x, y = b.add_input(shape), b.add_input(shape)
    t = [b.add_tensor(shape) for _ in range(6)]
    b.add_op("DIV", [x, b.add_const(rng.uniform(0.5, 2, [7]).astype(np.float32))], [t[0]],
             {"fused_activation_function": "NONE"})
    b.add_op("PRELU", [t[0], b.add_const(rng.uniform(0.1, 0.3, [1, 1, 7]).astype(np.float32))],
             [t[1]])
    b.add_op("ELU", [t[1]], [t[2]])
    b.add_op("SQUARED_DIFFERENCE", [t[2], y], [t[3]])
    b.add_op("HARD_SWISH", [t[3]], [t[4]])
    b.add_op("MAXIMUM", [t[4], b.add_const(np.array(0.5, np.float32))], [t[5]])
    inputs = random_inputs([shape, shape], seed=22)
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), inputs,
                                      {"precision_loss_allowed": fp16, "storage": storage})
    assert_fully_delegated(stats)
    assert_close(gpu, cpu, fp16)


def test_overflow_in_an_add_fused_into_a_convolution_matches_the_cpu():
    """CONV_2D -> ADD is fused into the convolution's store (delegate/passes/fusion.h);
    the fused ADD clamps to +-FLT_MAX like the unfused one and the CPU."""
    shape = [1, 4, 4, 3]
    b = ModelBuilder()
    x = b.add_input(shape)
    conv = b.add_tensor([1, 4, 4, 4])
    weights = np.full([4, 1, 1, 3], 1e38, np.float32) * np.array([1, -1, 1, -1],
                                                                 np.float32).reshape(4, 1, 1, 1)
    b.add_op("CONV_2D", [x, b.add_const(weights), b.add_const(np.zeros(4, np.float32))],
             [conv], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                      "fused_activation_function": "NONE"})
    o = b.add_tensor([1, 4, 4, 4])
    b.add_op("ADD", [conv, b.add_const(np.array([3e38, -3e38, 1, 1], np.float32))], [o],
             {"fused_activation_function": "NONE"})
    x_value = np.random.default_rng(23).uniform(0.5, 1, shape).astype(np.float32) / 3
    cpu, gpu, stats = run_cpu_and_gpu(b.build(), [x_value])
    assert_fully_delegated(stats)
    # The fused conv + ADD alone: the small input and output cross directly
    # (no layout conversions, DeviceProfile::direct_transfers).
    assert stats["dispatches"] == 1, stats
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-5)
