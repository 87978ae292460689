"""Inputs reach the GPU either through persistently mapped staging buffers
written with memcpy (DeviceProfile::mapped_upload_staging, where the driver
has GL_EXT_buffer_storage: llvmpipe and NVIDIA both do) or through
glBufferSubData (TFLITE_GLES_X_MAPPED_UPLOAD=0). Both must give the CPU's
answers on every invoke, each with new input values (a stale or half-written
staging buffer would show as a mismatch), for float32 and bool inputs."""

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, assert_fully_delegated
from test_fusion import Chain


def float_model(shape):
    b = ModelBuilder()
    x = b.add_input(shape)
    y = b.add_input(shape)
    o = b.add_tensor(shape)
    b.add_op("ADD", [x, y], [o], {"fused_activation_function": "NONE"})
    return b.build()


def bool_model(shape):
    b = ModelBuilder()
    x = b.add_input(shape, np.bool_)
    y = b.add_input(shape, np.bool_)
    o = b.add_tensor(shape, np.bool_)
    b.add_op("LOGICAL_AND", [x, y], [o])
    return b.build()


@pytest.mark.parametrize("mapped", ["0", "1"])
@pytest.mark.parametrize("kind", ["float32", "bool"])
def test_every_invoke_sees_its_own_inputs(monkeypatch, mapped, kind):
    monkeypatch.setenv("TFLITE_GLES_X_MAPPED_UPLOAD", mapped)
    # The copy into the staging (test_alias_io.py has the tensor as staging).
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_IO", "0")
    shape = [2, 9, 7, 3]
    model = float_model(shape) if kind == "float32" else bool_model(shape)
    delegate = gt.make_delegate({})
    gpu_interp = gt.interpreter(model, delegate)
    cpu_interp = gt.interpreter(model)
    rng = np.random.default_rng(int(mapped) + 10)
    for _ in range(6):
        if kind == "float32":
            inputs = [rng.uniform(-3, 3, shape).astype(np.float32) for _ in range(2)]
        else:
            inputs = [rng.random(shape) < 0.5 for _ in range(2)]
        gpu = gt.invoke(gpu_interp, inputs)
        cpu = gt.invoke(cpu_interp, inputs)
        if kind == "float32":
            assert_close(gpu, cpu, False)
        else:
            np.testing.assert_array_equal(gpu[0], cpu[0])
    assert_fully_delegated(gt.stats(delegate))



def image_conv_model(shape):
    """A 3x3 stride-2 convolution reading the input: a vision model's first
    layer (GPUs that fuse the upload read the BHWC staging in it)."""
    c = Chain(shape, seed=5)
    return c.build([c.conv(c.x, 8, kernel=3, stride=2, activation="RELU")])


# Streaming (non-temporal) stores into the mapped staging: BHWC staging of
# an odd size (a tail shorter than one 64-byte step), a direct PHWC4 upload
# (4 channels: no relayout) and fp16's halves, each with new values on
# every invoke.
@pytest.mark.parametrize("streaming", ["0", "1"])
@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("shape,model", [
    ([1, 101, 103, 3], image_conv_model),  # 125 KB: BHWC staging
    ([1, 5, 7, 4], float_model),           # direct upload, 560 bytes
    ([1, 97, 89, 4], float_model),         # 138 KB of whole slices
])
def test_streaming_stores_deliver_every_invoke(monkeypatch, streaming, fp16, shape, model):
    monkeypatch.setenv("TFLITE_GLES_X_MAPPED_UPLOAD", "1")
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_IO", "0")  # the copies are the subject
    monkeypatch.setenv("TFLITE_GLES_X_STREAMING_UPLOAD", streaming)
    m = model(shape)
    delegate = gt.make_delegate({"precision_loss_allowed": "true"} if fp16 else {})
    gpu_interp = gt.interpreter(m, delegate)
    cpu_interp = gt.interpreter(m)
    n_inputs = len(gpu_interp.get_input_details())
    rng = np.random.default_rng(shape[1] * 2 + int(streaming))
    for _ in range(4):
        inputs = [rng.uniform(-3, 3, shape).astype(np.float32) for _ in range(n_inputs)]
        assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs), fp16)
    assert_fully_delegated(gt.stats(delegate))


@pytest.mark.parametrize("streaming_readback", ["0", "1"])
@pytest.mark.parametrize("fp16", [False, True])
def test_megabyte_transfers_on_threads(monkeypatch, fp16, streaming_readback):
    """Inputs and outputs of >= 1.5 MB copied on several threads, in 2 or 4 parts
    (TFLITE_GLES_X_COPY_THREADS, delegate/runtime/host_copy.h; real GPUs
    use it, llvmpipe only when forced), with the streaming stores real GPUs
    use (and, with TFLITE_GLES_X_STREAMING_READBACK, the output's copy too):
    every invoke sees its own inputs, and the outputs are whole (a part left
    uncopied would keep the previous invoke's values)."""
    monkeypatch.setenv("TFLITE_GLES_X_COPY_THREADS", "4")
    monkeypatch.setenv("TFLITE_GLES_X_STREAMING_UPLOAD", "1")
    monkeypatch.setenv("TFLITE_GLES_X_STREAMING_READBACK", streaming_readback)
    # Parts of >= 1 MB (the default: 2 parts) or >= 300 KB (4 parts,
    # the threads' limit: TFLITE_GLES_X_COPY_MIN_PART_KB).
    monkeypatch.setenv("TFLITE_GLES_X_COPY_MIN_PART_KB", "1024" if streaming_readback == "0" else "300")
    if streaming_readback == "1":
        # The readback conversion and its mapped staging, as on NVIDIA
        # (llvmpipe otherwise relays the output out on the CPU, no copy).
        monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", "0")
    shape = [1, 181, 203, 15]  # 2.2 MB a tensor: 2 or 4 parts, odd bytes
    model = float_model(shape)
    delegate = gt.make_delegate({"precision_loss_allowed": fp16})
    gpu_interp = gt.interpreter(model, delegate)
    cpu_interp = gt.interpreter(model)
    rng = np.random.default_rng(21)
    for _ in range(3):
        inputs = [rng.uniform(-3, 3, shape).astype(np.float32) for _ in range(2)]
        assert_close(gt.invoke(gpu_interp, inputs), gt.invoke(cpu_interp, inputs), fp16)
    assert_fully_delegated(gt.stats(delegate))
