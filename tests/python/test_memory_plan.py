"""The memory planner through the real interpreter: intermediates share one
arena by lifetime, the arena stays within 1.1x of the lifetime lower bound,
and results are exactly what they were with one buffer per tensor."""

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, assert_fully_delegated, invoke

NO_MEMORY_PLAN = 1  # TFLITE_GLES_EXPERIMENTAL_NO_MEMORY_PLAN
NO_FUSION = 2       # TFLITE_GLES_EXPERIMENTAL_NO_FUSION: every op its own tensor


def block_model(seed=0):
    """Pointwise/depthwise layers of changing widths with a skip connection
    (the block input is read again by the final ADD), so tensors of several
    sizes have overlapping and disjoint lifetimes."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()

    def conv(x, cin, cout, size, act="RELU6"):
        y = b.add_tensor([1, size, size, cout])
        w = rng.uniform(-0.5, 0.5, [cout, 1, 1, cin]).astype(np.float32)
        bias = rng.uniform(-0.1, 0.1, cout).astype(np.float32)
        b.add_op("CONV_2D", [x, b.add_const(w), b.add_const(bias)], [y],
                 {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                  "fused_activation_function": act})
        return y

    def depthwise(x, c, size):
        y = b.add_tensor([1, size, size, c])
        w = rng.uniform(-0.5, 0.5, [1, 3, 3, c]).astype(np.float32)
        bias = rng.uniform(-0.1, 0.1, c).astype(np.float32)
        b.add_op("DEPTHWISE_CONV_2D", [x, b.add_const(w), b.add_const(bias)], [y],
                 {"padding": "SAME", "stride_w": 1, "stride_h": 1, "depth_multiplier": 1,
                  "fused_activation_function": "RELU6"})
        return y

    x = b.add_input([1, 12, 12, 5])
    t = conv(x, 5, 8, 12)
    skip = t
    t = conv(t, 8, 24, 12)   # expand
    t = depthwise(t, 24, 12)
    t = conv(t, 24, 8, 12, act="NONE")  # project
    s = b.add_tensor([1, 12, 12, 8])
    b.add_op("ADD", [t, skip], [s], {"fused_activation_function": "NONE"})
    t = conv(s, 8, 13, 12)
    t = depthwise(t, 13, 12)
    o = b.add_tensor([1, 12, 12, 13])
    b.add_op("LOGISTIC", [t], [o])
    return b.build()


def run(model, inputs_list, options):
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(model, delegate)
    outputs = [invoke(interp, inputs) for inputs in inputs_list]
    return outputs, gt.stats(delegate), gt.memory_stats(delegate)


@pytest.mark.parametrize("fp16", [False, True])
def test_arena_is_near_the_lifetime_bound_and_results_match_the_cpu(fp16, monkeypatch):
    # The output read back through its conversion (a staging buffer of its
    # own), so that the tensor itself lives in the arena: llvmpipe would
    # otherwise read it back directly (DeviceProfile::cpu_readback_relayout)
    # from a buffer of its own, as it does the input.
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", "0")
    model = block_model()
    inputs_list = [gt.random_inputs([[1, 12, 12, 5]], seed=s) for s in (1, 2)]
    planned, stats, memory = run(model, inputs_list, {"precision_loss_allowed": fp16,
                                                      "experimental_flags": str(NO_FUSION)})
    assert_fully_delegated(stats)
    # Two invokes with different data: a tensor overwritten too early by one
    # sharing its bytes would show in either.
    for inputs, gpu in zip(inputs_list, planned):
        assert_close(gpu, invoke(gt.interpreter(model), inputs), fp16)
    # The 7 intermediates and the output share the arena; the input crosses
    # directly (a small tensor) and has its own buffer.
    assert memory["arena_tensors"] == 8, memory
    assert memory["lower_bound_bytes"] <= memory["arena_bytes"], memory
    assert memory["arena_bytes"] <= 1.1 * memory["lower_bound_bytes"], memory
    assert memory["arena_bytes"] < 0.6 * memory["tensors_sum_bytes"], memory
    assert stats["gpu_bytes"] == memory["arena_bytes"] + memory["other_bytes"]


def test_one_buffer_per_tensor_gives_identical_results_with_more_memory():
    model = block_model()
    inputs_list = [gt.random_inputs([[1, 12, 12, 5]], seed=3)]
    planned, planned_stats, _ = run(model, inputs_list, {})
    unplanned, unplanned_stats, memory = run(model, inputs_list,
                                             {"experimental_flags": str(NO_MEMORY_PLAN)})
    assert memory["arena_tensors"] == 0 and memory["arena_bytes"] == 0, memory
    for a, b in zip(planned[0], unplanned[0]):
        np.testing.assert_array_equal(a, b)
    assert unplanned_stats["gpu_bytes"] > planned_stats["gpu_bytes"]
