"""Large staged transfers in row bands (DeviceProfile::transfer_bands,
delegate/runtime/runtime_bands.cc): an input's copy into its staging and
its upload conversion, and an output's readback conversion and its copy
into TFLite's tensor, each in bands of rows pipelined between the CPU and
the GPU. On by default on real GPUs for transfers of >= 1 MB; forced here
on llvmpipe with TFLITE_GLES_X_TRANSFER_BANDS and a small
TFLITE_GLES_X_TRANSFER_BAND_MIN_KB, so that CI runs the banded path: band
edges inside rows of a batch and across batches, uneven bands, the copy
threads' parts within each band. Checked against LiteRT's CPU kernels over
several invokes with new values (a band left out shows as a stale one), and
bit for bit against the same model crossing whole (the conversions compute
the same values either way). The planned bands are reported at Prepare
(TFLITE_GLES_X_PHASES=1), which proves the banded path was taken.
"""

import numpy as np
import pytest

import gles_testing as gt
from gles_testing import ModelBuilder, assert_close, assert_fully_delegated


def add_mul_model(shape):
    """(x + y) * x: two staged inputs, one output with a readback
    conversion (3 channels: PHWC4 is not BHWC)."""
    b = ModelBuilder()
    x = b.add_input(shape)
    y = b.add_input(shape)
    s = b.add_tensor(shape)
    b.add_op("ADD", [x, y], [s], {"fused_activation_function": "NONE"})
    o = b.add_tensor(shape)
    b.add_op("MUL", [s, x], [o], {"fused_activation_function": "NONE"})
    return b.build()


def run(model, shape, options, invokes=3):
    """Outputs of `invokes` invokes (new inputs each), checked against the
    CPU's; returns them and the delegate's stats."""
    delegate = gt.make_delegate(options)
    gpu_interp = gt.interpreter(model, delegate)
    cpu_interp = gt.interpreter(model)
    outputs = []
    for i in range(invokes):
        inputs = gt.random_inputs([shape, shape], seed=10 + i, low=-3, high=3)
        gpu = gt.invoke(gpu_interp, inputs)
        assert_close(gpu, gt.invoke(cpu_interp, inputs), "precision_loss_allowed" in options)
        outputs.append(gpu[0].copy())
    stats = gt.stats(delegate)
    assert_fully_delegated(stats)
    return outputs, stats


def stage_transfers(monkeypatch):
    """Inputs staged (not sent directly), outputs through their readback
    conversion (llvmpipe relays them out on the CPU otherwise): the staged
    transfers that the bands cut."""
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_MAX_KB", "0")
    monkeypatch.setenv("TFLITE_GLES_X_CPU_READBACK_RELAYOUT", "0")
    # Copied: a tensor that is its staging (runtime_alias.cc) has no copy to band.
    monkeypatch.setenv("TFLITE_GLES_X_ALIAS_IO", "0")


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("threads", ["1", "3"])
@pytest.mark.parametrize("shape,bands", [
    ([1, 37, 29, 3], 4),   # 37 rows in 4 uneven bands
    ([2, 9, 31, 3], 3),    # 18 rows: bands cross the batch boundary
    ([1, 5, 64, 3], 8),    # more bands asked than rows: one per row
], ids=["37-rows", "two-batches", "5-rows"])
def test_banded_transfers_give_the_cpu_answer(monkeypatch, capfd, shape, bands, threads,
                                              precision):
    stage_transfers(monkeypatch)
    monkeypatch.setenv("TFLITE_GLES_X_COPY_THREADS", threads)
    monkeypatch.setenv("TFLITE_GLES_X_COPY_MIN_PART_KB", "1")
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BAND_MIN_KB", "1")
    monkeypatch.setenv("TFLITE_GLES_X_PHASES", "1")
    # Real GPUs' defaults: flushes after the bands, the readback's early wake.
    monkeypatch.setenv("TFLITE_GLES_X_BAND_FLUSHES", "1,2,4")
    monkeypatch.setenv("TFLITE_GLES_X_BAND_EARLY_WAKE", "1")
    options = {"precision_loss_allowed": "true"} if precision == "fp16" else {}
    model = add_mul_model(shape)
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BANDS", "0")
    whole, whole_stats = run(model, shape, options)
    assert "row bands" not in capfd.readouterr().err
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BANDS", str(bands))
    banded, banded_stats = run(model, shape, options)
    log = capfd.readouterr().err
    rows = shape[0] * shape[1]
    expected = min(bands, rows)
    assert log.count(f"crosses in {expected} row bands (upload)") == 2, log
    assert log.count(f"crosses in {expected} row bands (readback)") == 1, log
    # Same steps (a band is a range of its conversion's step), same values.
    assert banded_stats["dispatches"] == whole_stats["dispatches"]
    for w, b in zip(whole, banded):
        np.testing.assert_array_equal(b, w)


def test_small_transfers_stay_whole(monkeypatch, capfd):
    """Below the size (1 MB by default) nothing is banded, whatever the count."""
    stage_transfers(monkeypatch)
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BANDS", "4")
    monkeypatch.setenv("TFLITE_GLES_X_PHASES", "1")
    shape = [1, 37, 29, 3]
    run(add_mul_model(shape), shape, {})
    assert "row bands" not in capfd.readouterr().err


def test_a_profiled_invoke_crosses_whole(monkeypatch):
    """A profiled invoke times each step as one dispatch (bench/profile.py):
    the banded transfers run whole there, with the same values."""
    stage_transfers(monkeypatch)
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BANDS", "4")
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BAND_MIN_KB", "1")
    shape = [1, 37, 29, 3]
    model = add_mul_model(shape)
    plain, _ = run(model, shape, {})
    profiled, _ = run(model, shape, {"enable_profiling": "true"})
    for p, q in zip(plain, profiled):
        np.testing.assert_array_equal(p, q)


def test_readback_bands_alone(monkeypatch, capfd):
    """TFLITE_GLES_X_READBACK_BANDS counts the readbacks' bands apart from
    the uploads' (TFLITE_GLES_X_TRANSFER_BANDS sets both)."""
    stage_transfers(monkeypatch)
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BAND_MIN_KB", "1")
    monkeypatch.setenv("TFLITE_GLES_X_PHASES", "1")
    monkeypatch.setenv("TFLITE_GLES_X_TRANSFER_BANDS", "0")
    monkeypatch.setenv("TFLITE_GLES_X_READBACK_BANDS", "3")
    shape = [1, 37, 29, 3]
    run(add_mul_model(shape), shape, {})
    log = capfd.readouterr().err
    assert "(upload)" not in log and log.count("crosses in 3 row bands (readback)") == 1, log
