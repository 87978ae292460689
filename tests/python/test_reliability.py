"""Reliability of the delegate inside the real LiteRT runtime: resizing inputs
after delegation, the thread and EGLContext contract, concurrent
interpreters, leaks over create/delete cycles, a machine without a usable GPU,
and GPU allocation failures. docs/reliability.md lists what is guaranteed."""

import ctypes
import gc
import os
import threading

import numpy as np
import pytest

import egl_app_context
from gles_testing import (LIB, ModelBuilder, assert_close, interpreter, invoke, library,
                          make_delegate, random_inputs, stats)
from isolation import run_isolated


class LiveObjects(ctypes.Structure):
    """TfLiteGlesLiveObjects from delegate/include/tflite_gles/delegate.h."""
    _fields_ = [("delegates", ctypes.c_int64), ("owned_egl_contexts", ctypes.c_int64),
                ("gpu_buffers", ctypes.c_int64)]


def live_objects() -> dict:
    counts = LiveObjects()
    lib = library()
    lib.TfLiteGlesGetLiveObjects.argtypes = [ctypes.POINTER(LiveObjects)]
    lib.TfLiteGlesGetLiveObjects(ctypes.byref(counts))
    return {name: getattr(counts, name) for name, _ in LiveObjects._fields_}


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def add_relu_model(shape):
    """ADD of two inputs, then RELU: two delegated nodes, one partition."""
    b = ModelBuilder()
    x = b.add_input(shape)
    y = b.add_input(shape)
    s = b.add_tensor(shape)
    o = b.add_tensor(shape)
    b.add_op("ADD", [x, y], [s], {"fused_activation_function": "NONE"})
    b.add_op("RELU", [s], [o])
    return b.build()


def expected_add_relu(a, b):
    return np.maximum(a + b, 0)


def run_resized(interp, shape, seed):
    a, b = random_inputs([shape, shape], seed=seed)
    interp.set_tensor(interp.get_input_details()[0]["index"], a)
    interp.set_tensor(interp.get_input_details()[1]["index"], b)
    interp.invoke()
    out = interp.get_tensor(interp.get_output_details()[0]["index"])
    return out, expected_add_relu(a, b)


def resize_all(interp, shape):
    for detail in interp.get_input_details():
        interp.resize_tensor_input(detail["index"], shape)
    interp.allocate_tensors()


# --- 2. Resizing inputs after delegation -----------------------------------

REAPPLY = {"reapply_on_resize": True}


def test_resize_with_the_default_options_declines_cleanly_and_recovers():
    """By default the GPU program is built for the model's shapes (which lets
    models with GPU-only custom ops load): a resize makes Prepare fail with a
    message saying what to do, and resizing back makes it work again."""
    delegate = make_delegate()
    interp = interpreter(add_relu_model([1, 4, 4, 3]), delegate)
    interp.allocate_tensors()
    with pytest.raises(RuntimeError) as error:
        resize_all(interp, [1, 9, 7, 3])
    message = str(error.value)
    assert "was resized from 1x4x4x3 to 1x9x7x3" in message, message
    assert "reapply_on_resize=true" in message, message
    resize_all(interp, [1, 4, 4, 3])
    out, expected = run_resized(interp, [1, 4, 4, 3], seed=11)
    assert stats(delegate)["nodes_delegated"] == 2
    assert_close([out], [expected])


def test_resize_after_delegation_re_prepares_for_the_new_shape():
    """With reapply_on_resize, TFLite undoes and re-applies the delegate on
    resize; every shape must stay delegated and exact."""
    delegate = make_delegate(REAPPLY)
    interp = interpreter(add_relu_model([1, 4, 4, 3]), delegate)
    interp.allocate_tensors()
    for step, shape in enumerate([[1, 4, 4, 3], [1, 9, 7, 3], [2, 3, 5, 3], [1, 1, 1, 3]]):
        resize_all(interp, shape)
        out, expected = run_resized(interp, shape, seed=step)
        s = stats(delegate)
        assert s["nodes_delegated"] == 2 and s["partitions"] == 1, (shape, s)
        assert s["gpu_bytes"] > 0
        assert out.shape == tuple(shape)
        assert_close([out], [expected])


def test_resize_to_a_zero_sized_input_falls_back_to_the_cpu_and_back():
    delegate = make_delegate(REAPPLY)
    interp = interpreter(add_relu_model([1, 4, 4, 3]), delegate)
    interp.allocate_tensors()
    resize_all(interp, [1, 0, 4, 3])
    assert stats(delegate)["nodes_delegated"] == 0, "a zero-sized tensor was delegated"
    out, _ = run_resized(interp, [1, 0, 4, 3], seed=1)
    assert out.shape == (1, 0, 4, 3)
    resize_all(interp, [1, 5, 4, 3])
    assert stats(delegate)["nodes_delegated"] == 2
    out, expected = run_resized(interp, [1, 5, 4, 3], seed=2)
    assert_close([out], [expected])


def test_resize_on_another_thread_fails_cleanly_and_the_cpu_takes_over():
    delegate = make_delegate(REAPPLY)
    interp = interpreter(add_relu_model([1, 4, 4, 3]), delegate)
    interp.allocate_tensors()
    errors = []

    def resize_elsewhere():
        try:
            resize_all(interp, [1, 3, 3, 3])
        except RuntimeError as error:
            errors.append(str(error))

    worker = threading.Thread(target=resize_elsewhere)
    worker.start()
    worker.join()
    assert errors and "different thread" in errors[0], errors
    # TFLite restored the CPU plan; the model still answers correctly.
    interp.allocate_tensors()
    out, expected = run_resized(interp, [1, 3, 3, 3], seed=3)
    assert_close([out], [expected])
    assert stats(delegate)["nodes_delegated"] == 0


# --- 3. Threads and EGL contexts --------------------------------------------

def test_invoke_on_another_thread_is_refused_and_the_process_lives_on():
    delegate = make_delegate()
    interp = interpreter(add_relu_model([1, 4, 4, 3]), delegate)
    inputs = random_inputs([[1, 4, 4, 3]] * 2, seed=4)
    invoke(interp, inputs)
    errors = []

    def invoke_elsewhere():
        try:
            interp.invoke()
        except RuntimeError as error:
            errors.append(str(error))

    worker = threading.Thread(target=invoke_elsewhere)
    worker.start()
    worker.join()
    assert errors, "Invoke on another thread succeeded"
    assert "different thread than ModifyGraphWithDelegate" in errors[0], errors[0]
    out = invoke(interp, inputs)[0]
    assert_close([out], [expected_add_relu(*inputs)])


def test_invoke_with_the_applications_context_current_is_refused():
    delegate = make_delegate()
    interp = interpreter(add_relu_model([1, 4, 4, 3]), delegate)
    inputs = random_inputs([[1, 4, 4, 3]] * 2, seed=5)
    invoke(interp, inputs)
    with egl_app_context.ApplicationContext() as application:
        application.make_current()
        with pytest.raises(RuntimeError, match="another EGLContext is current"):
            interp.invoke()
        assert egl_app_context.current_context() == application.context, \
            "the delegate replaced the application's context"
        egl_app_context.release_current()
    out = invoke(interp, inputs)[0]  # no context current: ours comes back
    assert_close([out], [expected_add_relu(*inputs)])


def test_the_applications_current_context_is_used_and_then_required():
    with egl_app_context.ApplicationContext() as application:
        application.make_current()
        delegate = make_delegate()
        interp = interpreter(add_relu_model([1, 4, 4, 3]), delegate)
        inputs = random_inputs([[1, 4, 4, 3]] * 2, seed=6)
        out = invoke(interp, inputs)[0]
        assert stats(delegate)["egl_display"] == "the application's current EGL context"
        assert live_objects()["owned_egl_contexts"] >= 0
        assert_close([out], [expected_add_relu(*inputs)])
        egl_app_context.release_current()
        with pytest.raises(RuntimeError, match="no EGLContext is current"):
            interp.invoke()
        application.make_current()
        out = invoke(interp, inputs)[0]
        assert_close([out], [expected_add_relu(*inputs)])
        del interp, delegate
        gc.collect()


def test_two_delegates_on_one_thread_outlive_each_other():
    """Each makes its own context; deleting the first leaves the second working."""
    inputs = random_inputs([[1, 4, 4, 3]] * 2, seed=7)
    first = make_delegate()
    first_interp = interpreter(add_relu_model([1, 4, 4, 3]), first)
    second = make_delegate()
    second_interp = interpreter(add_relu_model([1, 4, 4, 3]), second)
    for interp in (first_interp, second_interp, first_interp):
        assert_close([invoke(interp, inputs)[0]], [expected_add_relu(*inputs)])
    assert "application" not in stats(second)["egl_display"]
    del first_interp, first
    gc.collect()
    assert_close([invoke(second_interp, inputs)[0]], [expected_add_relu(*inputs)])


def test_threads_with_their_own_interpreter_and_delegate_run_concurrently():
    threads, invokes, shape = 4, 25, [1, 6, 5, 7]
    model = add_relu_model(shape)
    failures, done = [], []
    start = threading.Barrier(threads)

    def work(seed):
        try:
            delegate = make_delegate({"log_level": "warning"})
            interp = interpreter(model, delegate)
            interp.allocate_tensors()
            start.wait()
            for i in range(invokes):
                a, b = random_inputs([shape, shape], seed=seed * 1000 + i)
                out = invoke(interp, [a, b])[0]
                np.testing.assert_allclose(out, expected_add_relu(a, b), rtol=1e-6, atol=1e-6)
            assert stats(delegate)["invokes"] == invokes
            done.append(seed)
        except BaseException as error:  # reported by the main thread
            failures.append(f"thread {seed}: {error!r}")

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not any(w.is_alive() for w in workers), "a worker hung"
    assert not failures, failures
    assert sorted(done) == list(range(threads))


def test_create_delete_cycles_leak_no_context_buffer_or_memory():
    model = add_relu_model([1, 8, 8, 5])
    inputs = random_inputs([[1, 8, 8, 5]] * 2, seed=8)

    def cycle():
        delegate = make_delegate({"log_level": "warning"})
        interp = interpreter(model, delegate)
        invoke(interp, inputs)
        del interp, delegate
        gc.collect()

    for _ in range(5):  # warm up: driver caches, allocator pools
        cycle()
    before, rss_before = live_objects(), rss_bytes()
    for _ in range(40):
        cycle()
    after, rss_after = live_objects(), rss_bytes()
    print(f"live before {before}, after {after}; RSS {rss_before >> 20} -> "
          f"{rss_after >> 20} MiB over 40 cycles")
    assert after == before, "a delegate, EGL context or GL buffer outlived its delegate"
    assert rss_after - rss_before < 16 << 20, "host memory grows with each delegate"


# --- 4. No usable GPU ---------------------------------------------------------

NO_GPU_CHILD = """
import numpy as np
from gles_testing import ModelBuilder, interpreter, invoke, make_delegate, random_inputs
b = ModelBuilder()
x = b.add_input([1, 3, 3, 4]); o = b.add_tensor([1, 3, 3, 4])
b.add_op("RELU", [x], [o])
model = b.build()
delegate = make_delegate({OPTIONS})
try:
    interpreter(model, delegate)
    print("APPLIED")
except RuntimeError as error:  # what the real runtime raises
    print("REFUSED:", error)
a = random_inputs([[1, 3, 3, 4]])[0]
out = invoke(interpreter(model), [a])[0]
print("CPU_OK" if np.array_equal(out, np.maximum(a, 0)) else "CPU_WRONG")
"""


@pytest.mark.parametrize("env,options,expected", [
    ({"TFLITE_GLES_EGL_PLATFORM": "bogus"}, {},
     "unknown EGL platform 'bogus' (valid: auto, device, surfaceless, default)"),
    # glvnd finds no vendor library: no EGL implementation at all.
    ({"__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/vendor.json"}, {},
     "tried device: "),
    ({"__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/vendor.json"},
     {"egl_platform": "surfaceless"}, "EGL platform 'surfaceless'; tried surfaceless: "),
    ({"TFLITE_GLES_EGL_PLATFORM": "default", "EGL_PLATFORM": "x11", "DISPLAY": ":987"}, {},
     "EGL platform 'default'; tried default: "),
], ids=["bogus_platform_variable", "no_egl_vendor", "no_egl_vendor_surfaceless",
        "default_display_without_x_server"])
def test_without_a_usable_gpu_the_delegate_is_refused_and_the_cpu_runs(env, options, expected):
    result = run_isolated(NO_GPU_CHILD.replace("{OPTIONS}", repr(options)), env=env, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    refused = [line for line in result.stdout.splitlines() if line.startswith("REFUSED:")]
    assert refused, f"the delegate applied without a GPU:\n{result.stdout}\n{result.stderr}"
    assert "tflite-gles: cannot run on the GPU" in refused[0], refused[0]
    assert expected in refused[0], refused[0]
    assert "CPU_OK" in result.stdout, result.stdout


# --- 5. GPU allocation failure -------------------------------------------------

def test_a_refused_gpu_allocation_fails_prepare_with_a_message():
    """TFLite prepares the delegate kernels inside ModifyGraphWithDelegate:
    a failed allocation is reported there and TFLite restores the CPU plan.
    The same on a resize that outgrows the limit."""
    code = """
import numpy as np
from gles_testing import interpreter, invoke, make_delegate, random_inputs
from test_reliability import add_relu_model, expected_add_relu, resize_all, run_resized
try:
    interpreter(add_relu_model([1, 64, 64, 8]), make_delegate())
    print("APPLIED")
except RuntimeError as error:
    print("REFUSED:", error)
interp = interpreter(add_relu_model([1, 4, 4, 8]), make_delegate({"reapply_on_resize": True}))
interp.allocate_tensors()
try:
    resize_all(interp, [1, 64, 64, 8])
    print("RESIZED")
except RuntimeError as error:
    print("RESIZE_REFUSED:", error)
resize_all(interp, [1, 64, 64, 8])
out, expected = run_resized(interp, [1, 64, 64, 8], seed=9)
print("CPU_OK" if np.array_equal(out, expected) else "CPU_WRONG")
"""
    # The output keeps its readback conversion, so that it shares the arena
    # (llvmpipe would read it back directly from a buffer of its own:
    # DeviceProfile::cpu_readback_relayout).
    result = run_isolated(code, env={"TFLITE_GLES_TEST_MAX_BUFFER_BYTES": "65536",
                                     "TFLITE_GLES_X_CPU_READBACK_RELAYOUT": "0"}, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = {line.split(":")[0]: line for line in result.stdout.splitlines()}
    for key in ("REFUSED", "RESIZE_REFUSED"):
        assert key in lines, result.stdout + result.stderr
        assert "preparing the GPU partition failed" in lines[key], lines[key]
        # The first buffer refused is the arena the three 131072-byte
        # tensors share (delegate/passes/memory_planner.h): 3 x 131072 bytes, plus
        # 256 on llvmpipe, whose last texture view is one 256-byte step
        # longer (ViewBytes in delegate/runtime/runtime_memory.cc).
        assert "GL_OUT_OF_MEMORY" in lines[key], lines[key]
        assert "393216 bytes" in lines[key] or "393472 bytes" in lines[key], lines[key]
    assert "CPU_OK" in lines, result.stdout


# --- 6. Options ------------------------------------------------------------------

VALID_KEYS = ["precision_loss_allowed", "inference_preference", "inference_priority1",
              "max_delegated_partitions", "serialization_dir", "model_token", "egl_platform",
              "storage", "enable_profiling", "experimental_flags", "log_level"]


@pytest.mark.parametrize("options,names", [
    ({"no_such_option": "1"}, "unknown option 'no_such_option'"),
    ({"": "1"}, "unknown option ''"),
    ({"precision_loss_allowed": ""}, "'' is not true|false|1|0"),
    ({"precision_loss_allowed": "yes please"}, "is not true|false|1|0"),
    ({"inference_preference": "fastest"}, "is not one of fast_single_answer|sustained_speed"),
    ({"inference_priority2": ""}, "is not one of auto|max_precision"),
    ({"max_delegated_partitions": "0"}, "is not an integer in [1, 1048576]"),
    ({"max_delegated_partitions": "-5"}, "is not an integer in [1, 1048576]"),
    ({"max_delegated_partitions": "99999999999999999999"}, "is not an integer in"),
    ({"max_delegated_partitions": "3x"}, "is not an integer in"),
    ({"egl_platform": "x11"}, "is not one of auto|device|surfaceless|default"),
    ({"egl_platform": ""}, "is not one of auto|device|surfaceless|default"),
    ({"storage": "image2d"}, "is not one of auto|ssbo|texture_buffer"),
    ({"experimental_flags": "-1"}, "is not an integer in [0, "),
    ({"log_level": "debug"}, "is not one of info|warning"),
    ({"serialization_dir": "/tmp/" + "d" * 5000, "model_token": "m"},
     "'serialization_dir' is 5005 characters long; the limit is 4096"),
    ({"model_token": "t" * 100000}, "'model_token' is 100000 characters long"),
], ids=lambda v: str(v)[:40] if isinstance(v, str) else None)
def test_bad_options_are_refused_with_the_valid_keys_and_ranges(options, names):
    with pytest.raises(ValueError, match="Failed to load delegate") as refused:
        make_delegate(options)
    message = str(refused.value)  # load_delegate appends the report_error text
    assert names in message, message
    for key in VALID_KEYS:
        assert key in message, f"{key} missing from: {message}"


def test_serialization_dir_without_a_model_token_is_refused():
    with pytest.raises(ValueError, match="model_token is empty"):
        make_delegate({"serialization_dir": "/tmp"})


class CDelegateOptions(ctypes.Structure):
    """TfLiteGlesDelegateOptions from delegate/include/tflite_gles/delegate.h."""
    _fields_ = [("is_precision_loss_allowed", ctypes.c_int32),
                ("inference_preference", ctypes.c_int32),
                ("inference_priority1", ctypes.c_int32),
                ("inference_priority2", ctypes.c_int32),
                ("inference_priority3", ctypes.c_int32),
                ("max_delegated_partitions", ctypes.c_int32),
                ("serialization_dir", ctypes.c_char_p), ("model_token", ctypes.c_char_p),
                ("egl_platform", ctypes.c_int32), ("storage", ctypes.c_int32),
                ("enable_profiling", ctypes.c_int32), ("experimental_flags", ctypes.c_uint64)]


@pytest.mark.parametrize("field,value,message", [
    ("egl_platform", 7, "egl_platform 7 is out of range"),
    ("storage", -1, "storage -1 is out of range"),
    ("inference_preference", 1000, "inference_preference 1000 is out of range"),
    ("inference_priority3", 9, "inference priority 9 is out of range"),
    ("max_delegated_partitions", 0, "max_delegated_partitions must be >= 1, got 0"),
    ("serialization_dir", b"/" * 4097, "'serialization_dir' is 4097 characters long"),
])
def test_the_c_api_refuses_out_of_range_options(field, value, message, capfd):
    lib = ctypes.CDLL(LIB)
    lib.TfLiteGlesDelegateOptionsDefault.restype = CDelegateOptions
    lib.TfLiteGlesDelegateCreate.argtypes = [ctypes.POINTER(CDelegateOptions)]
    lib.TfLiteGlesDelegateCreate.restype = ctypes.c_void_p
    lib.TfLiteGlesDelegateDelete.argtypes = [ctypes.c_void_p]
    options = lib.TfLiteGlesDelegateOptionsDefault()
    created = lib.TfLiteGlesDelegateCreate(ctypes.byref(options))
    assert created, "the default options were refused"
    lib.TfLiteGlesDelegateDelete(created)
    setattr(options, field, value)
    if field == "serialization_dir":
        options.model_token = b"model"
    assert not lib.TfLiteGlesDelegateCreate(ctypes.byref(options))
    assert message in capfd.readouterr().err


DELEGATE_FIRST_CHILD = """
from gles_testing import interpreter, invoke, make_delegate, random_inputs, single_op_model
model = single_op_model("ADD", [[1, 8, 8, 4], [1, 8, 8, 4]], {"fused_activation_function": "NONE"})
delegate = make_delegate({"enable_profiling": "true"})
interp = interpreter(model, delegate)
for _ in range(3):
    invoke(interp, random_inputs([[1, 8, 8, 4], [1, 8, 8, 4]]))
delegate.__del__()  # the delegate goes first, as Python's shutdown may order it
del interp          # TFLite frees the partitions only now
print("freed")
"""


def test_partitions_freed_after_their_delegate_do_not_touch_it():
    # Was a use-after-free: the partition updated its deleted owner's
    # counters and profile map (heap corruption at exit with profiling on).
    result = run_isolated(DELEGATE_FIRST_CHILD, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "freed" in result.stdout
