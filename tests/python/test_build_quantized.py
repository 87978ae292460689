"""The quantized models of tools/build_quantized.py: built as TFLite's
converter lays them out, sane on the CPU (the int8 model picks the classes
its float twin picks on the photographs), and through the delegate: fully
delegated, and as close to the CPU as quantization allows.

int8 MobileNet-like: the delegate computes in float between a QUANTIZE and
a DEQUANTIZE (with every activation quantize-dequantized by the simulator),
TFLite in integers; the probabilities may differ by a few output steps
(1/256 each) and the top-1 class must be the same.
Dynamic range: TFLite's hybrid kernels quantize the activations to int8 on
the fly, the delegate multiplies dequantized weights in float: it must match
the float twin (same dequantized weights) as a float model does, and the CPU
within the hybrid kernels' own error.
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema

import gles_testing as gt  # noqa: I001 - puts tools/ on the path
import build_quantized as bq

PRECISIONS = {"fp32": {}, "fp16": {"precision_loss_allowed": "true"}}


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory):
    return bq.build_int8_mobilenet(tmp_path_factory.mktemp("models") / "int8.tflite")


@pytest.fixture(scope="module")
def hybrid_model(tmp_path_factory):
    return bq.build_dynamic_range_model(tmp_path_factory.mktemp("models") / "hybrid.tflite")


def ops_of(path) -> list[tuple[str, int]]:
    model = schema.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    codes = model.operatorCodes
    return [(names[codes[op.opcodeIndex].builtinCode], codes[op.opcodeIndex].version)
            for op in model.subgraphs[0].operators]


def tensors_of(path):
    model = schema.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    return model.subgraphs[0].tensors, model.subgraphs[0].operators


def test_int8_model_is_full_integer_with_per_channel_weights(int8_model):
    ops = ops_of(int8_model)
    assert ops[0] == ("QUANTIZE", 1) and ops[-1] == ("DEQUANTIZE", 2), ops
    assert {op for op, _ in ops} == {"QUANTIZE", "CONV_2D", "DEPTHWISE_CONV_2D", "ADD",
                                     "AVERAGE_POOL_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX",
                                     "DEQUANTIZE"}
    expected_versions = {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "ADD": 2, "AVERAGE_POOL_2D": 2,
                         "MEAN": 2, "FULLY_CONNECTED": 4, "SOFTMAX": 2}
    for op, version in ops[1:-1]:
        assert version == expected_versions[op], (op, version)
    tensors, operators = tensors_of(int8_model)
    for op in operators[1:-1]:
        for index in list(op.inputs) + list(op.outputs):
            t = tensors[index]
            assert t.type in (schema.TensorType.INT8, schema.TensorType.INT32), t.name
            if t.type == schema.TensorType.INT8 and t.buffer == 0:  # activations
                assert len(t.quantization.scale) == 1 and t.quantization.scale[0] > 0
    weights = [tensors[op.inputs[1]] for op, (name, _) in zip(operators, ops)
               if name in ("CONV_2D", "DEPTHWISE_CONV_2D")]
    for w in weights:
        channels = w.shape[3] if w.quantization.quantizedDimension == 3 else w.shape[0]
        assert len(w.quantization.scale) == channels > 1
        assert not any(w.quantization.zeroPoint)


def test_int8_model_picks_the_float_twins_classes_on_the_cpu(int8_model):
    report = bq.check_int8_mobilenet(int8_model)
    assert report["top1_agree"] == report["images"], report
    assert report["max_probability_diff"] < 0.1, report
    twin = bq.int8_mobilenet_float_twin()
    classes = {int(np.argmax(gt.run_tflite(twin, [x])[0])) for x in bq.photo_inputs()}
    assert len(classes) >= 3, f"the photographs get too few distinct classes: {classes}"


def test_dynamic_range_model_is_hybrid_and_close_to_its_float_twin_on_the_cpu(hybrid_model):
    assert ops_of(hybrid_model) == [("CONV_2D", 5), ("DEPTHWISE_CONV_2D", 6), ("RESHAPE", 1),
                                    ("FULLY_CONNECTED", 3), ("FULLY_CONNECTED", 12)]
    tensors, operators = tensors_of(hybrid_model)
    for op in operators:
        assert tensors[op.inputs[0]].type == schema.TensorType.FLOAT32
        if len(op.inputs) == 3:
            assert tensors[op.inputs[1]].type == schema.TensorType.INT8
    assert bq.check_dynamic_range_model(hybrid_model)["max_relative_error"] < 0.05


# fp16 misses top-1 on photo 7 of this random-weight calibrated net (58 vs 61
# of 256 where the CPU has 67 vs 50) since the quant branch's last rounding
# changes; fp32 and both real quantized MobileNets (test_quantized_models.py)
# agree in fp16. Known, not yet understood: strict, so a fix turns it red.
INT8_NET_PRECISIONS = [
    pytest.param(p, marks=pytest.mark.xfail(
        strict=True, reason="fp16 top-1 differs on photo 7 (issue 15 note)"))
    if p == "fp16" else p for p in PRECISIONS]


@pytest.mark.parametrize("precision", INT8_NET_PRECISIONS)
def test_int8_model_through_the_delegate(int8_model, precision):
    """Top-1 as the CPU on every photograph, and probabilities within the
    model's own quantization noise: at most twice (plus 4 output steps) the
    largest distance between the int8 model and its float twin on the CPU.
    (A one-step rounding difference at the input, e.g. at the half-way
    points that photographs scaled to [-1, 1] hit, grows through 16 layers
    to about as much as quantizing the float model does.)"""
    twin = bq.int8_mobilenet_float_twin()
    photos = bq.photo_inputs()
    cpu_interp = gt.interpreter(str(int8_model))
    cpu = [gt.invoke(cpu_interp, [x])[0] for x in photos]
    noise = max(float(np.abs(c - gt.invoke(gt.interpreter(twin), [x])[0]).max())
                for c, x in zip(cpu, photos))
    delegate = gt.make_delegate(PRECISIONS[precision])
    interp = gt.interpreter(str(int8_model), delegate)
    gpu = [gt.invoke(interp, [x])[0] for x in photos]
    stats = gt.stats(delegate)
    assert stats["nodes_delegated"] == stats["nodes_total"], stats
    assert stats["partitions"] == 1, stats
    bound = 2 * noise + 4 / 256
    for i, (g, c) in enumerate(zip(gpu, cpu)):
        assert np.argmax(g) == np.argmax(c), (i, g, c)
        diff = float(np.abs(g - c).max())
        assert diff <= bound, (f"{precision} photo {i}: probabilities differ by "
                               f"{diff * 256:.0f}/256, bound {bound * 256:.1f}/256")


@pytest.mark.parametrize("precision", list(PRECISIONS))
def test_dynamic_range_model_through_the_delegate(hybrid_model, precision):
    twin = bq.dynamic_range_model()[1]
    x = np.random.default_rng(3).uniform(-1, 1, [1, 12, 12, 8]).astype(np.float32)
    cpu, gpu, stats = gt.run_cpu_and_gpu(str(hybrid_model), [x], PRECISIONS[precision])
    assert stats["nodes_delegated"] == stats["nodes_total"] and stats["partitions"] == 1, stats
    float_twin = gt.invoke(gt.interpreter(twin), [x])
    gt.assert_close(gpu, float_twin, fp16=precision == "fp16",
                    tolerance=1e-4 if precision == "fp32" else None)
    assert gt.relative_error(gpu[0], cpu[0]) < 0.05
