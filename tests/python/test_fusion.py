"""Epilogue fusion (delegate/passes/fusion.h) through the real LiteRT interpreter:
models with convolution + elementwise chains run on the CPU kernels, through
the delegate with fusion (the default) and with it turned off
(experimental_flags TFLITE_GLES_EXPERIMENTAL_NO_FUSION); all three agree, and
fusion saves exactly the dispatches it should: none where the convolution's
output is needed elsewhere (a second reader, a model output).
"""

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated,
                          random_inputs, run_cpu_and_gpu, run_switch_off_and_on)

NO_FUSION = 2  # TFLITE_GLES_EXPERIMENTAL_NO_FUSION


def window(stride=1, activation="NONE"):
    return {"padding": "SAME", "stride_h": stride, "stride_w": stride,
            "dilation_h_factor": 1, "dilation_w_factor": 1,
            "fused_activation_function": activation}


class Chain:
    """A ModelBuilder with seeded random weights and shape bookkeeping."""

    def __init__(self, in_shape, seed):
        self.rng = np.random.default_rng(seed)
        self.b = ModelBuilder()
        self.input_shapes = [in_shape]
        self.x = self.b.add_input(in_shape)
        self.shapes = {self.x: in_shape}

    def const(self, shape, low=-0.5, high=0.5):
        index = self.b.add_const(self.rng.uniform(low, high, shape).astype(np.float32))
        self.shapes[index] = shape
        return index

    def extra_input(self, shape):
        index = self.b.add_input(shape)
        self.input_shapes.append(shape)
        self.shapes[index] = shape
        return index

    def conv(self, x, out_c, kernel=1, stride=1, activation="NONE"):
        n, h, w, c = self.shapes[x]
        out = self.b.add_tensor([n, -(-h // stride), -(-w // stride), out_c])
        self.shapes[out] = [n, -(-h // stride), -(-w // stride), out_c]
        self.b.add_op("CONV_2D", [x, self.const([out_c, kernel, kernel, c]),
                                  self.const([out_c], -1, 1)],
                      [out], window(stride, activation))
        return out

    def depthwise(self, x, activation="NONE"):
        n, h, w, c = self.shapes[x]
        out = self.b.add_tensor([n, h, w, c])
        self.shapes[out] = [n, h, w, c]
        self.b.add_op("DEPTHWISE_CONV_2D", [x, self.const([1, 3, 3, c]),
                                            self.const([c], -1, 1)],
                      [out], dict(window(1, activation), depth_multiplier=1))
        return out

    def transpose_conv(self, x, out_c, kernel=3, stride=2):
        n, h, w, c = self.shapes[x]
        shape = [n, h * stride, w * stride, out_c]
        out = self.b.add_tensor(shape)
        self.shapes[out] = shape
        self.b.add_op("TRANSPOSE_CONV",
                      [self.b.add_const(np.array(shape, np.int32)),
                       self.const([out_c, kernel, kernel, c]), x, self.const([out_c], -1, 1)],
                      [out], {"padding": "SAME", "stride_h": stride, "stride_w": stride},
                      version=3)
        return out

    def fully_connected(self, x, outputs):
        rows, depth = self.shapes[x]
        out = self.b.add_tensor([rows, outputs])
        self.shapes[out] = [rows, outputs]
        self.b.add_op("FULLY_CONNECTED", [x, self.const([outputs, depth]),
                                          self.const([outputs], -1, 1)],
                      [out], {"fused_activation_function": "NONE"})
        return out

    def binary(self, op, a, b, activation="NONE"):
        shape = self.shapes[a] if len(self.shapes[a]) >= len(self.shapes[b]) else self.shapes[b]
        out = self.b.add_tensor(shape)
        self.shapes[out] = shape
        options = {"fused_activation_function": activation} if op in (
            "ADD", "SUB", "MUL", "DIV") else None
        self.b.add_op(op, [a, b], [out], options)
        return out

    def unary(self, op, x):
        out = self.b.add_tensor(self.shapes[x])
        self.shapes[out] = self.shapes[x]
        self.b.add_op(op, [x], [out])
        return out

    def build(self, outputs):
        self.b.set_outputs(outputs)
        return self.b.build()


def run_both(model, inputs, fp16):
    """CPU outputs, then (outputs, stats) with fusion and without it."""
    cpu, fused, fused_stats = run_cpu_and_gpu(model, inputs, {"precision_loss_allowed": fp16})
    _, plain, plain_stats = run_cpu_and_gpu(
        model, inputs, {"precision_loss_allowed": fp16, "experimental_flags": NO_FUSION})
    return cpu, (fused, fused_stats), (plain, plain_stats)


def conv_add_relu(c):
    """1x1 conv + ADD of a same-shape model input (fused RELU6) + RELU."""
    y = c.conv(c.x, 12)
    skip = c.extra_input(c.shapes[y])
    return [c.unary("RELU", c.binary("ADD", y, skip, activation="RELU6"))], 2


def depthwise_mul_hard_swish(c):
    """Depthwise 3x3 (fused RELU) * per-channel constant, then HARD_SWISH."""
    y = c.depthwise(c.x, activation="RELU")
    return [c.unary("HARD_SWISH", c.binary("MUL", y, c.const([c.shapes[y][3]], 0.5, 2)))], 2


def conv3x3_scalar_logistic(c):
    """3x3 stride-2 conv + scalar constant, then LOGISTIC."""
    y = c.conv(c.x, 7, kernel=3, stride=2)
    return [c.unary("LOGISTIC", c.binary("ADD", y, c.const([1])))], 2


def transpose_conv_mul_logistic(c):
    """TRANSPOSE_CONV (stride 2) * a same-shape input, then LOGISTIC (selfie
    segmentation's last layer has the LOGISTIC): both fold into its store."""
    y = c.transpose_conv(c.x, 5)
    m = c.binary("MUL", y, c.extra_input(c.shapes[y]))
    return [c.unary("LOGISTIC", m)], 2


def residual_sub_reversed(c):
    """x -> conv1 -> conv2; SUB(conv1, conv2): conv2 is the second operand
    (order matters), conv1 feeds both conv2 and the SUB so it stays."""
    y1 = c.conv(c.x, 8)
    y2 = c.conv(y1, 8, kernel=3)
    return [c.unary("TANH", c.binary("SUB", y1, y2))], 2


def fc_maximum_leaky(c):
    """FULLY_CONNECTED, MAXIMUM with a same-shape input, LEAKY_RELU."""
    flat = c.b.add_tensor([c.shapes[c.x][0], int(np.prod(c.shapes[c.x][1:]))])
    c.shapes[flat] = [c.shapes[c.x][0], int(np.prod(c.shapes[c.x][1:]))]
    c.b.add_op("RESHAPE", [c.x, c.b.add_const(np.array(c.shapes[flat], np.int32))], [flat])
    y = c.fully_connected(flat, 10)
    other = c.extra_input(c.shapes[y])
    m = c.binary("MAXIMUM", other, y)
    out = c.b.add_tensor(c.shapes[m])
    c.b.add_op("LEAKY_RELU", [m], [out], {"alpha": 0.25})
    return [out], 2


def two_readers(c):
    """The conv output feeds RELU and ADD: it must stay in memory, so neither
    folds into the conv; the ADD folds into the RELU (an elementwise
    producer), reading the conv output as its operand."""
    y = c.conv(c.x, 8)
    return [c.binary("ADD", c.unary("RELU", y), y)], 1


def conv_output_is_model_output(c):
    """The conv output is a model output as well as RELU's input: not fused."""
    y = c.conv(c.x, 8)
    return [y, c.unary("RELU", y)], 0


def elementwise_scale_offset_relu(c):
    """x * per-channel scale + per-channel offset, RELU (an instance norm's
    apply step): the ADD and the RELU fold into the MUL."""
    ch = c.shapes[c.x][3]
    y = c.binary("MUL", c.x, c.const([ch], 0.5, 2))
    return [c.unary("RELU", c.binary("ADD", y, c.const([ch])))], 2


def elementwise_unary_then_tensor(c):
    """EXP of the input, times a same-shape input, minus a scalar literal:
    both fold into the EXP (its operand after input A)."""
    e = c.unary("EXP", c.x)
    m = c.binary("MUL", c.extra_input(c.shapes[c.x]), e)
    return [c.binary("SUB", m, c.const([1]))], 2


def elementwise_second_operand_once(c):
    """(x + a) * b * d with a, b, d same-shape inputs: the MUL by b folds into
    the ADD, but the MUL by d does not (one tensor operand per producer)."""
    shape = c.shapes[c.x]
    s = c.binary("ADD", c.x, c.extra_input(shape))
    p = c.binary("MUL", s, c.extra_input(shape))
    return [c.binary("MUL", p, c.extra_input(shape))], 1


def conv_prelu_residual_prelu(c):
    """ENet's bottleneck: conv3x3 -> PRELU (per-channel alpha, folds into the
    conv), conv1x1 + x (the ADD folds), PRELU of the sum with a scalar
    alpha: the conv already has its one tensor operand, but a literal needs
    none, so it folds too."""
    ch = c.shapes[c.x][3]
    y = c.binary("PRELU", c.conv(c.x, ch, kernel=3), c.const([1, 1, ch], 0.05, 0.4))
    z = c.binary("ADD", c.conv(y, ch), c.x)
    return [c.binary("PRELU", z, c.const([1], 0.1, 0.3))], 3


def conv_add_prelu_keeps_second_operand(c):
    """conv + x, then PRELU with per-channel alpha: the conv has its tensor
    operand already (x), so the PRELU stays (no second operand on a conv)."""
    ch = c.shapes[c.x][3]
    z = c.binary("ADD", c.conv(c.x, ch), c.x)
    return [c.binary("PRELU", z, c.const([ch], 0.05, 0.4))], 1


CHAINS = [conv_prelu_residual_prelu, conv_add_prelu_keeps_second_operand, conv_add_relu, depthwise_mul_hard_swish, conv3x3_scalar_logistic,
          transpose_conv_mul_logistic,
          residual_sub_reversed, fc_maximum_leaky, two_readers,
          conv_output_is_model_output, elementwise_scale_offset_relu,
          elementwise_unary_then_tensor, elementwise_second_operand_once]


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("chain", CHAINS, ids=lambda f: f.__name__)
def test_fused_chain_agrees_and_saves_dispatches(chain, fp16, monkeypatch):
    # The counts are those of one epilogue operand per producer; real GPUs fold a
    # second one by default (TFLITE_GLES_X_EPILOGUE_IN2, tested on its own).
    monkeypatch.setenv("TFLITE_GLES_X_EPILOGUE_IN2", "0")
    c = Chain([2, 9, 7, 6], seed=11)
    outputs, saved = chain(c)
    model = c.build(outputs)
    inputs = random_inputs(c.input_shapes, seed=5)
    cpu, (fused, fused_stats), (plain, plain_stats) = run_both(model, inputs, fp16)
    assert_fully_delegated(fused_stats)
    assert_fully_delegated(plain_stats)
    assert_close(fused, cpu, fp16)
    assert_close(plain, cpu, fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == saved


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("second", ["1", "0"])
def test_gemm_takes_prelu_after_residual_add(monkeypatch, fp16, second):
    """ENet's bottleneck end on the tiled GEMM that real GPUs run (forced
    here): 1x1 conv + x, then PRELU with per-channel alpha. The ADD takes
    gemm.comp's epilogue operand, alpha its second one (EPILOGUE_IN2):
    both fold (2 dispatches saved); without the second operand, 1."""
    monkeypatch.setenv("TFLITE_GLES_SHARED_MEMORY_GEMM", "1")
    monkeypatch.setenv("TFLITE_GLES_X_EPILOGUE_IN2", second)
    c = Chain([1, 12, 10, 20], seed=13)
    ch = c.shapes[c.x][3]
    z = c.binary("ADD", c.conv(c.x, ch), c.x)
    model = c.build([c.binary("PRELU", z, c.const([1, 1, ch], 0.05, 0.4))])
    inputs = random_inputs(c.input_shapes, seed=4)
    cpu, (fused, fused_stats), (plain, plain_stats) = run_both(model, inputs, fp16)
    assert_fully_delegated(fused_stats)
    assert_close(fused, cpu, fp16)
    assert_close(plain, cpu, fp16)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == (2 if second == "1" else 1)


def test_mobilenet_v2_style_block_fuses_residual(monkeypatch):
    """Expand 1x1 (RELU6) -> depthwise (RELU6) -> project 1x1 -> ADD of the
    block input: the ADD folds into the projection; values stay right. (The
    depthwise stays on its own: where gemm.comp runs, it would fold into the
    projection as well, delegate/passes/dw_fusion.h, and save a second dispatch.)"""
    monkeypatch.setenv("TFLITE_GLES_FUSE_DEPTHWISE", "0")
    c = Chain([1, 10, 10, 8], seed=3)
    expand = c.conv(c.x, 24, activation="RELU6")
    dw = c.depthwise(expand, activation="RELU6")
    project = c.conv(dw, 8)
    out = c.binary("ADD", project, c.x)
    model = c.build([out])
    inputs = random_inputs(c.input_shapes, seed=2)
    cpu, (fused, fused_stats), (_, plain_stats) = run_both(model, inputs, False)
    assert_close(fused, cpu, False)
    assert plain_stats["dispatches"] - fused_stats["dispatches"] == 1


def concat(c, inputs, axis=3):
    shape = list(c.shapes[inputs[0]])
    shape[axis] = sum(c.shapes[i][axis] for i in inputs)
    out = c.b.add_tensor(shape)
    c.shapes[out] = shape
    c.b.add_op("CONCATENATION", inputs, [out], {"axis": axis,
                                                "fused_activation_function": "NONE"})
    return out


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("case", ["prelu-slices", "prelu-lanes", "add-logistic", "rows"])
def test_concat_takes_epilogues(monkeypatch, fp16, case):
    """TFLITE_GLES_X_CONCAT_EPILOGUE (on by default on real GPUs): the
    elementwise steps after a CONCATENATION fold into its store, with their
    operand after its inputs; the hair stand-in's initial block ends in one
    (a 3x3 conv's 12 channels and a pooling's 4, then PRELU)."""
    c = Chain([1, 19, 17, 4], seed=21)
    widths = {"prelu-slices": (12, 4), "prelu-lanes": (6, 5)}.get(case, (8, 8))
    parts = [c.conv(c.x, w, kernel=3) for w in widths]
    joined = concat(c, parts, axis=1 if case == "rows" else 3)
    shape = c.shapes[joined]
    if case.startswith("prelu"):
        y = c.binary("PRELU", joined, c.const([1, 1, shape[-1]], 0.05, 0.4))
    else:
        y = c.unary("LOGISTIC", c.binary("ADD", joined, c.extra_input(shape)))
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=4)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_CONCAT_EPILOGUE", model, inputs,
        {"precision_loss_allowed": fp16})
    assert_fully_delegated(fused_stats)
    assert_close(plain, cpu, fp16)
    assert_close(fused, cpu, fp16)
    # (ADD + LOGISTIC are one elementwise dispatch either way.)
    assert fused_stats["dispatches"] == plain_stats["dispatches"] - 1


def test_split_concat_keeps_its_epilogue_apart(monkeypatch):
    """A concatenation of more inputs than one dispatch binds is several
    dispatches over one output: none of them takes the step."""
    c = Chain([1, 6, 5, 4], seed=22)
    parts = [c.conv(c.x, 4) for _ in range(10)]
    y = c.unary("RELU", concat(c, parts))
    model = c.build([y])
    inputs = random_inputs(c.input_shapes, seed=4)
    cpu, (plain, plain_stats), (fused, fused_stats) = run_switch_off_and_on(
        monkeypatch, "TFLITE_GLES_X_CONCAT_EPILOGUE", model, inputs)
    assert_close(fused, cpu)
    assert fused_stats["dispatches"] == plain_stats["dispatches"]
