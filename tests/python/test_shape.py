"""Layout/shape ops through the real LiteRT interpreter: CONCATENATION,
RESHAPE, SQUEEZE, PAD, PADV2, MIRROR_PAD, SLICE, STRIDED_SLICE, SPLIT,
SPLIT_V, TRANSPOSE, DEPTH_TO_SPACE, SPACE_TO_DEPTH and the basic LSTM cell.
Each single-op model runs on the CPU and through the delegate, fully
delegated; data movement must be bit-exact in fp32. Parameters the kernels
decline leave the node on the CPU, with the reason logged and the right
answer."""

import numpy as np
import pytest

from gles_testing import (ModelBuilder, assert_close, assert_fully_delegated,
                          interpreter, make_delegate, random_inputs,
                          run_cpu_and_gpu, single_op_model, stats)

CHANNELS = [1, 3, 4, 5, 8, 13]
PRECISIONS = [False, True]


def run_and_compare(model, shapes, fp16, seed=0, exact=True, storage="auto"):
    inputs = random_inputs(shapes, seed=seed)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs, {"precision_loss_allowed": fp16,
                                                      "storage": storage})
    assert_fully_delegated(stats)
    if exact and not fp16:
        assert len(gpu) == len(cpu)
        for g, c in zip(gpu, cpu):
            np.testing.assert_array_equal(g, c)
    else:
        assert_close(gpu, cpu, fp16)
    return stats


def assert_stays_on_cpu(model, shapes, capfd, reason):
    """The node is declined with `reason` in the log, and the CPU answers."""
    inputs = random_inputs(shapes, seed=5)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs)
    assert stats["nodes_delegated"] == 0, stats
    log = capfd.readouterr().err
    assert reason in log, log
    assert_close(gpu, cpu)


def i32(values):
    return np.array(values, np.int32)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_concatenation_channels_and_other_axes(channels, fp16):
    c = channels
    # Channels 3 + c + 13 with a constant middle input. (The CPU kernel
    # refuses fused activations on CONCATENATION, so only the C++ tests
    # check those, against a naive reference.)
    const = np.random.default_rng(c).uniform(-2, 2, [1, 4, 5, c]).astype(np.float32)
    model = single_op_model("CONCATENATION", [[1, 4, 5, 3], [1, 4, 5, 13]],
                            {"axis": -1},
                            consts={1: const})
    run_and_compare(model, [[1, 4, 5, 3], [1, 4, 5, 13]], fp16, seed=c)
    for axis, shapes in [(0, [[1, 3, 5, c], [2, 3, 5, c]]),
                         (1, [[2, 2, 5, c], [2, 1, 5, c], [2, 3, 5, c]]),
                         (2, [[2, 3, 4, c], [2, 3, 1, c]]),
                         (1, [[2, 3, c], [2, 5, c]])]:
        model = single_op_model("CONCATENATION", shapes, {"axis": axis})
        run_and_compare(model, shapes, fp16, seed=c + axis)


def test_concatenation_of_many_inputs_on_channels():
    shapes = [[1, 3, 2, k % 5 + 1] for k in range(11)]
    model = single_op_model("CONCATENATION", shapes, {"axis": 3})
    run_and_compare(model, shapes, False)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_reshape_and_squeeze(channels, fp16):
    c = channels
    cases = [  # input shape, new shape, shape as constant input?
        ([2, 3, 4, c], [2, 12, c], True),      # a view: no dispatch
        ([2, 3, 4, c], [2, 3, 4 * c], False),  # channels change: relayout
        ([1, 6, c], [6, c], True),
        ([2, 3 * c], [2, 3, c, 1], False),
    ]
    for shape, new_shape, as_input in cases:
        if as_input:
            model = single_op_model("RESHAPE", [shape], consts={1: i32(new_shape)})
        else:
            model = single_op_model("RESHAPE", [shape], {"new_shape": new_shape})
        run_and_compare(model, [shape], fp16, seed=c)
    model = single_op_model("SQUEEZE", [[1, 3, 1, c]], {"squeeze_dims": [0, 2]})
    run_and_compare(model, [[1, 3, 1, c]], fp16, seed=c)
    model = single_op_model("SQUEEZE", [[2, 3, c + 1, 1]], {})
    run_and_compare(model, [[2, 3, c + 1, 1]], fp16, seed=c)


def test_reshape_that_keeps_the_layout_runs_no_kernel():
    shape = [2, 3, 4, 8]
    model = single_op_model("RESHAPE", [shape], consts={1: i32([2, 12, 8])})
    stats = run_and_compare(model, [shape], False)
    # Only the readback conversion: the reshape is a view of the input, which
    # crosses directly (a small tensor); no kernel writes the view, so it
    # reads back through a conversion.
    assert stats["dispatches"] == 1, stats


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_pad_padv2_mirror_pad(channels, fp16):
    c = channels
    shape = [2, 3, 5, c]
    paddings = i32([[0, 1], [1, 2], [2, 0], [1, 2]])
    run_and_compare(single_op_model("PAD", [shape], consts={1: paddings}),
                    [shape], fp16, seed=c)
    value = np.array(-1.25, np.float32)
    run_and_compare(single_op_model("PADV2", [shape],
                                    consts={1: paddings.astype(np.int64), 2: value}),
                    [shape], fp16, seed=c)
    cp = min(2, c - 1)
    reflect = i32([[0, 0], [2, 1], [1, 4], [cp, min(1, c - 1)]])
    run_and_compare(single_op_model("MIRROR_PAD", [shape], {"mode": "REFLECT"},
                                    consts={1: reflect}), [shape], fp16, seed=c)
    symmetric = i32([[1, 0], [3, 1], [5, 2], [1, c]])
    run_and_compare(single_op_model("MIRROR_PAD", [shape], {"mode": "SYMMETRIC"},
                                    consts={1: symmetric}), [shape], fp16, seed=c)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_slice_and_strided_slice(channels, fp16):
    c = channels
    shape = [2, 5, 7, c + 4]
    for begin in ([1, 1, 2, 0], [0, 2, 0, 1], [0, 0, 3, 4]):
        # The CPU kernel wants the output's rank preset: give its shape.
        out = [2 - begin[0], 3, 7 - begin[2], c]
        model = single_op_model("SLICE", [shape], output_shapes=[out],
                                consts={1: i32(begin), 2: i32([-1, 3, -1, c])})
        run_and_compare(model, [shape], fp16, seed=c)
    cases = [  # begin, end, strides, options
        ([1, 0, -6, 1], [2, 5, 7, 0], [1, 2, 3, 1], {"begin_mask": 9, "end_mask": 8}),
        ([0, 4, 6, -1], [2, 0, 0, 0], [1, -1, -2, -1], {"end_mask": 10}),
        ([0, -2, 1, 0], [2, 0, 5, 2], [1, 1, 1, 1], {"shrink_axis_mask": 2}),
        ([0, 1], [0, 3], [1, 1], {"ellipsis_mask": 1}),                 # [..., 1:3]
        ([1, 0, 1], [2, 0, 9], [1, 1, 2], {"ellipsis_mask": 2}),         # [1:2, ..., 1:9:2]
        ([1], [2], [1], {}),                                            # [1:2] (short spec)
        ([0, 2], [0, 3], [1, 1], {"ellipsis_mask": 1, "shrink_axis_mask": 2}),  # [..., 2]
        ([0, 0, 1], [0, 0, 3], [1, 1, 1], {"ellipsis_mask": 1, "new_axis_mask": 2,
                                           "shrink_axis_mask": 0}),     # [..., None, 1:3]
    ]
    for begin, end, strides, options in cases:
        if options.get("new_axis_mask"):
            shape = [2, 5, c + 4]  # the new axis makes the output rank 4
        model = single_op_model("STRIDED_SLICE", [shape], options,
                                consts={1: i32(begin), 2: i32(end), 3: i32(strides)})
        run_and_compare(model, [shape], fp16, seed=c)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_split_and_split_v(channels, fp16):
    c = channels
    shape = [2, 3, 6, c]
    model = single_op_model("SPLIT", [shape], {"num_splits": 3},
                            consts={0: np.array(2, np.int32)}, num_outputs=3)
    run_and_compare(model, [shape], fp16, seed=c)
    shape = [2, 3, c + 5]
    model = single_op_model("SPLIT_V", [shape], {"num_splits": 3},
                            consts={1: i32([c, 3, -1]), 2: np.array(-1, np.int32)},
                            num_outputs=3)
    run_and_compare(model, [shape], fp16, seed=c)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_transpose_depth_to_space_space_to_depth(channels, fp16):
    c = channels
    for shape, perm in [([2, 3, 5, c], [0, 2, 1, 3]), ([2, 3, 5, c], [0, 3, 1, 2]),
                        ([2, 3, 5, c], [3, 2, 0, 1]), ([3, 5, c], [2, 0, 1]),
                        ([5, c], [1, 0])]:
        model = single_op_model("TRANSPOSE", [shape], consts={1: i32(perm)})
        run_and_compare(model, [shape], fp16, seed=c)
    deep = [2, 3, 2, 4 * c]
    run_and_compare(single_op_model("DEPTH_TO_SPACE", [deep], {"block_size": 2}),
                    [deep], fp16, seed=c)
    wide = [2, 6, 4, c]
    run_and_compare(single_op_model("SPACE_TO_DEPTH", [wide], {"block_size": 2}),
                    [wide], fp16, seed=c)


def lstm_model(batch, input_depth, depth, seed, kernel_type="BASIC"):
    rng = np.random.default_rng(seed)
    total = input_depth + depth
    weights = rng.uniform(-0.5, 0.5, [4 * depth, total]).astype(np.float32)
    biases = rng.uniform(-0.5, 0.5, [4 * depth]).astype(np.float32)
    return single_op_model(
        "LSTM", [[batch, input_depth], [batch, depth], [batch, depth]],
        {"fused_activation_function": "TANH", "kernel_type": kernel_type},
        consts={2: weights, 3: biases}, num_outputs=4, version=2)


@pytest.mark.parametrize("fp16", PRECISIONS)
@pytest.mark.parametrize("batch,input_depth,depth", [(1, 3, 4), (2, 5, 13), (2, 8, 5)])
def test_basic_lstm_cell(batch, input_depth, depth, fp16):
    model = lstm_model(batch, input_depth, depth, seed=depth)
    shapes = [[batch, input_depth], [batch, depth], [batch, depth]]
    run_and_compare(model, shapes, fp16, seed=depth, exact=False)


def test_declined_strided_slice_shrink_with_begin_mask_stays_on_cpu(capfd):
    shape = [1, 4, 4, 3]
    model = single_op_model("STRIDED_SLICE", [shape],
                            {"begin_mask": 2, "shrink_axis_mask": 2},
                            consts={1: i32([0, 2, 0, 0]), 2: i32([1, 3, 4, 3]),
                                    3: i32([1, 1, 1, 1])})
    assert_stays_on_cpu(model, [shape], capfd,
                        "shrink_axis_mask and begin_mask on the same axis")


def test_declined_non_constant_pad_value_stays_on_cpu(capfd):
    shape = [1, 3, 3, 2]
    paddings = i32([[0, 0], [1, 1], [1, 1], [0, 0]])
    model = single_op_model("PADV2", [shape, []], consts={1: paddings})
    inputs = random_inputs([shape, []], seed=5)
    cpu, gpu, stats = run_cpu_and_gpu(model, inputs)
    assert stats["nodes_delegated"] == 0, stats
    assert "the pad value (input 2) must be a constant tensor" in capfd.readouterr().err
    assert_close(gpu, cpu)


def test_declined_transpose_of_rank_5_stays_on_cpu(capfd):
    shape = [1, 2, 3, 2, 2]
    model = single_op_model("TRANSPOSE", [shape], consts={1: i32([0, 2, 1, 3, 4])})
    assert_stays_on_cpu(model, [shape], capfd, "rank 5 > 4 is not supported")


@pytest.mark.parametrize("storage", ["ssbo", "texture_buffer"])
@pytest.mark.parametrize("fp16", PRECISIONS)
def test_views_and_relayouts_in_a_chain(fp16, storage):
    """Reshape views feed other kernels, are partition outputs, and are views
    of intermediates; concat, pad, slice and a relayout reshape follow."""
    b = ModelBuilder()

    def op(name, inputs, shape, options=None):
        out = b.add_tensor(shape)
        b.add_op(name, inputs, [out], options)
        return out

    x = b.add_input([2, 3, 4, 8])
    y = b.add_input([2, 12, 8])
    flat = op("RESHAPE", [x, b.add_const(i32([2, 12, 8]))], [2, 12, 8])  # view
    summed = op("ADD", [flat, y], [2, 12, 8], {"fused_activation_function": "NONE"})
    back = op("RESHAPE", [summed, b.add_const(i32([2, 3, 4, 8]))], [2, 3, 4, 8])  # view
    joined = op("CONCATENATION",
                [back, b.add_const(np.full([2, 3, 4, 3], 0.5, np.float32))],
                [2, 3, 4, 11], {"axis": 3})
    padded = op("PAD", [joined, b.add_const(i32([[0, 0], [1, 0], [0, 0], [0, 0]]))],
                [2, 4, 4, 11])
    sliced = op("STRIDED_SLICE", [padded, b.add_const(i32([0, 1, 0, 0])),
                                  b.add_const(i32([2, 4, 4, 11])),
                                  b.add_const(i32([1, 1, 1, 1]))], [2, 3, 4, 11])
    deep = op("RESHAPE", [sliced, b.add_const(i32([2, 3, 44]))], [2, 3, 44])  # relayout
    b.set_outputs([flat, deep])
    stats = run_and_compare(b.build(), [[2, 3, 4, 8], [2, 12, 8]], fp16, exact=False,
                            storage=storage)
    assert stats["nodes_total"] == 7, stats


def test_basic_lstm_updates_its_state_inputs_like_the_cpu():
    """The CPU kernel copies its new activation and state into the
    prev_activation / prev_state inputs; a second Invoke then continues the
    sequence. The delegate must behave the same."""
    model = lstm_model(2, 5, 6, seed=3)
    shapes = [[2, 5], [2, 6], [2, 6]]
    results = []
    for delegate in (None, make_delegate()):
        interp = interpreter(model, delegate)
        interp.allocate_tensors()
        details = interp.get_input_details()
        for detail, value in zip(details, random_inputs(shapes, seed=4)):
            interp.set_tensor(detail["index"], value)
        interp.invoke()
        state_inputs = [interp.get_tensor(d["index"]).copy() for d in details[1:]]
        interp.set_tensor(details[0]["index"], random_inputs([[2, 5]], seed=9)[0])
        interp.invoke()  # continues from the written-back state
        outputs = [interp.get_tensor(d["index"]).copy()
                   for d in interp.get_output_details()]
        results.append((state_inputs, outputs))
        if delegate is not None:
            assert_fully_delegated(stats(delegate))
        del interp
    (cpu_states, cpu_outputs), (gpu_states, gpu_outputs) = results
    assert_close(gpu_states, cpu_states)
    assert_close(gpu_outputs, cpu_outputs)


@pytest.mark.parametrize("fp16", PRECISIONS)
def test_every_shader_variant_family_with_ssbo_reads(fp16):
    """The SSBO read path (devices without texture buffers) of each shader:
    concat by lanes, mirror padding, the block ops, flat relayout, LSTM."""
    cases = [
        (single_op_model("CONCATENATION", [[1, 3, 4, 3], [1, 3, 4, 6]], {"axis": 3}),
         [[1, 3, 4, 3], [1, 3, 4, 6]]),
        (single_op_model("MIRROR_PAD", [[1, 3, 4, 5]], {"mode": "SYMMETRIC"},
                         consts={1: i32([[0, 0], [1, 2], [2, 1], [1, 1]])}), [[1, 3, 4, 5]]),
        (single_op_model("DEPTH_TO_SPACE", [[1, 2, 3, 12]], {"block_size": 2}),
         [[1, 2, 3, 12]]),
        (single_op_model("SPACE_TO_DEPTH", [[1, 4, 6, 3]], {"block_size": 2}),
         [[1, 4, 6, 3]]),
        (single_op_model("RESHAPE", [[2, 3, 5]], consts={1: i32([2, 15])}), [[2, 3, 5]]),
    ]
    for model, shapes in cases:
        run_and_compare(model, shapes, fp16, storage="ssbo")
    run_and_compare(lstm_model(2, 3, 5, seed=1), [[2, 3], [2, 5], [2, 5]], fp16,
                    exact=False, storage="ssbo")
