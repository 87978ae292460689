"""The serialization cache (options serialization_dir + model_token) through
the real LiteRT interpreter, each delegate in a fresh child process as an
application would run: the first runs write one entry per program, a later
process loads every program from them (stats say so) and computes exactly
what the first did and what the CPU does; damaged, truncated and foreign
entries are rejected with a warning naming them, compiled from source and
rewritten; a directory that cannot be used gives a warning and correct
outputs. gl::ProgramBinaryCache's own cases are in
tests/cpp/program_binary_cache_test.cc.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from gles_testing import ModelBuilder, assert_close, interpreter, invoke
from isolation import HERE, REPO, run_isolated

# Runs the model through one delegate per entry of RUNS (a JSON list of
# [serialization_dir, model_token]) and prints, per run, the delegate's
# stats and program cache stats; outputs go to OUT_PREFIX<i>.npy.
CHILD = r"""
import ctypes, json, os, sys
import numpy as np
import gles_testing as gt
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
model, inputs, runs, out_prefix = sys.argv[1], np.load(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
results = []
for i, (directory, token) in enumerate(runs):
    options = {"model_token": token}
    if directory:
        options["serialization_dir"] = directory
    delegate = gt.make_delegate(options)
    interp = gt.interpreter(model, delegate)
    output = gt.invoke(interp, [inputs])[0]
    np.save(f"{out_prefix}{i}.npy", output)
    # The C library's view (os.environ is Python's copy from startup): the
    # delegate must have put back what it changed for the display's init.
    after = {name: (libc.getenv(name.encode()) or b"").decode()
             for name in ("MESA_SHADER_CACHE_DIR", "__GL_SHADER_DISK_CACHE_PATH")}
    results.append({"stats": gt.stats(delegate), "cache": gt.program_cache_stats(delegate),
                    "env_after": after})
    del interp
print(json.dumps(results))
"""


def build_model() -> bytes:
    """conv 1x1 + ReLU -> depthwise 3x3 -> conv 3x3 stride 2: five programs
    with the layout conversions."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    x = b.add_input([1, 12, 12, 6])

    def conv(x, in_c, out_c, kernel, stride, activation):
        out_hw = -(-b_shapes[x] // stride)
        out = b.add_tensor([1, out_hw, out_hw, out_c])
        b_shapes[out] = out_hw
        weights = b.add_const(rng.uniform(-0.5, 0.5, [out_c, kernel, kernel, in_c]).astype(np.float32))
        bias = b.add_const(rng.uniform(-1, 1, [out_c]).astype(np.float32))
        b.add_op("CONV_2D", [x, weights, bias], [out],
                 {"padding": "SAME", "stride_h": stride, "stride_w": stride,
                  "dilation_h_factor": 1, "dilation_w_factor": 1,
                  "fused_activation_function": activation})
        return out

    b_shapes = {x: 12}
    y = conv(x, 6, 12, 1, 1, "RELU")
    dw = b.add_tensor([1, 12, 12, 12])
    b_shapes[dw] = 12
    b.add_op("DEPTHWISE_CONV_2D",
             [y, b.add_const(rng.uniform(-0.5, 0.5, [1, 3, 3, 12]).astype(np.float32)),
              b.add_const(rng.uniform(-1, 1, [12]).astype(np.float32))],
             [dw], {"padding": "SAME", "stride_h": 1, "stride_w": 1, "depth_multiplier": 1,
                    "dilation_h_factor": 1, "dilation_w_factor": 1,
                    "fused_activation_function": "NONE"})
    out = conv(dw, 12, 10, 3, 2, "NONE")
    b.set_outputs([out])
    return b.build()


@pytest.fixture(autouse=True)
def with_layout_conversions(monkeypatch):
    """The child processes inherit this: the model's small input and output
    would otherwise cross directly, and its two layout-conversion programs
    (of the 5 the cache checks below count on) would not exist."""
    monkeypatch.setenv("TFLITE_GLES_X_DIRECT_TRANSFERS", "0")


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """The model on disk, its input, and the CPU kernels' output for it."""
    folder = tmp_path_factory.mktemp("serialization")
    model = folder / "model.tflite"
    model.write_bytes(build_model())
    x = np.random.default_rng(3).uniform(-2, 2, [1, 12, 12, 6]).astype(np.float32)
    np.save(folder / "input.npy", x)
    cpu = invoke(interpreter(str(model)), [x])[0]
    return {"model": str(model), "input": str(folder / "input.npy"), "cpu": cpu,
            "folder": folder}


def command(case, runs, tag):
    prefix = str(case["folder"] / f"{tag}_out")
    return [sys.executable, "-c", CHILD, case["model"], case["input"], json.dumps(runs),
            prefix], prefix


def run_child(case, runs, tag, env=None):
    """Runs the CHILD in a fresh process; returns (results, outputs, stderr)."""
    args, prefix = command(case, runs, tag)
    result = run_isolated("", args=args[1:], env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    results = json.loads(result.stdout.strip().splitlines()[-1])
    outputs = [np.load(f"{prefix}{i}.npy") for i in range(len(runs))]
    return results, outputs, result.stderr


DRIVER = "driver_shader_cache"


def entries(directory):
    """Our entries (and any temporary file), not the driver's subfolder."""
    return sorted(name for name in os.listdir(directory) if name != DRIVER)


def driver_files(directory):
    """{path: size} of every file the driver keeps under `directory`."""
    found = {}
    for root, _, names in os.walk(directory):
        for name in names:
            found[os.path.join(root, name)] = os.path.getsize(os.path.join(root, name))
    return found


@pytest.fixture
def no_driver_cache_settings(monkeypatch, tmp_path):
    """As on a user's machine that set nothing: no cache variables, and a
    home folder of its own (the default driver cache lives there), so that
    the machine's ~/.cache is neither read nor filled."""
    for name in ("MESA_SHADER_CACHE_DIR", "MESA_GLSL_CACHE_DIR", "MESA_SHADER_CACHE_DISABLE",
                 "MESA_GLSL_CACHE_DISABLE", "__GL_SHADER_DISK_CACHE_PATH",
                 "__GL_SHADER_DISK_CACHE"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    return home


def test_second_process_loads_every_program_and_computes_the_same(case, tmp_path):
    cache_dir = str(tmp_path / "cache")
    os.mkdir(cache_dir)
    # Two processes fill the empty directory at the same time: each writes
    # every entry through its own temporary file.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), str(REPO / "tools")]))
    children = []
    for tag in ("writer_a", "writer_b"):
        args, prefix = command(case, [[cache_dir, "model-1"]], tag)
        children.append((subprocess.Popen(args, env=env, cwd=str(REPO), text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE),
                         prefix))
    first, compiled = [], 0
    for child, prefix in children:
        stdout, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, stderr[-4000:]
        stats = json.loads(stdout.strip().splitlines()[-1])[0]
        programs = stats["stats"]["programs"]
        assert stats["cache"]["enabled"] == 1, stats
        assert stats["cache"]["binary_formats"] >= 1, stats
        # Whichever starts later may already find some of the other's
        # entries; every program it compiled, it wrote.
        cache = stats["cache"]
        assert cache["programs_compiled"] + cache["programs_loaded"] == programs, stats
        assert cache["entries_written"] == cache["programs_compiled"], stats
        assert cache["entries_rejected"] == 0, stats
        compiled += cache["programs_compiled"]
        # The INFO line counts them: "N entries written" ("1 entry written"
        # when the other writer was faster with all but one).
        assert f"{cache['entries_written']} entr" in stderr and " written" in stderr, stderr
        first.append(np.load(f"{prefix}0.npy"))
    assert programs >= 5
    assert compiled >= programs, "a program can only be loaded once written"
    # The model data of the one partition: one entry, written by both at once.
    data_entries = [n for n in entries(cache_dir) if n.endswith(".tfgdata")]
    assert len(data_entries) == 1 and data_entries[0].startswith("model-1-"), data_entries
    names = [n for n in entries(cache_dir) if not n.endswith(".tfgdata")]
    assert len(names) == programs, f"one file per program, no temporary left: {names}"
    assert all(n.startswith("model-1-") and n.endswith(".tfgprog") for n in names), names

    results, outputs, stderr = run_child(case, [[cache_dir, "model-1"]], "reader")
    cache = results[0]["cache"]
    assert cache["programs_loaded"] == programs, cache
    assert cache["programs_compiled"] == 0, cache
    assert cache["entries_written"] == 0 and cache["entries_rejected"] == 0, cache
    assert f"{programs} programs loaded from the cache, 0 compiled" in stderr, stderr
    loaded, converted, written = model_data_line(stderr)
    assert loaded >= 2 and converted == 0 and written == 0, stderr
    assert entries(cache_dir) == sorted(names + data_entries)
    # Same driver, same programs: the same bits as the runs that compiled.
    np.testing.assert_array_equal(outputs[0], first[0])
    np.testing.assert_array_equal(outputs[0], first[1])
    assert_close(outputs, [case["cpu"]])


def test_programs_with_a_uniform_block_load_and_compute_the_same(case, tmp_path):
    # The shared-memory GEMM (forced here; on by default off llvmpipe) reads
    # its shapes from a uniform block bound at init: a loaded binary must
    # keep that binding.
    env = {"TFLITE_GLES_SHARED_MEMORY_GEMM": "1"}
    runs = [[str(tmp_path), "model-1"]]
    written, first, _ = run_child(case, runs, "gemm_write", env)
    loaded, second, _ = run_child(case, runs, "gemm_load", env)
    programs = written[0]["stats"]["programs"]
    assert written[0]["cache"]["entries_written"] == programs, written
    assert loaded[0]["cache"]["programs_loaded"] == programs, loaded
    np.testing.assert_array_equal(second[0], first[0])
    assert_close(second, [case["cpu"]])


def test_damaged_truncated_and_foreign_entries_are_rejected_and_rewritten(case, tmp_path):
    cache_dir, other_dir = tmp_path / "cache", tmp_path / "other"
    cache_dir.mkdir()
    other_dir.mkdir()
    results, _, _ = run_child(case, [[str(cache_dir), "model-1"], [str(other_dir), "model-2"]],
                              "fill")
    programs = results[0]["stats"]["programs"]
    names = [n for n in entries(cache_dir) if n.endswith(".tfgprog")]
    damaged, truncated, foreign = (cache_dir / n for n in names[:3])
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0x01
    damaged.write_bytes(bytes(data))
    truncated.write_bytes(truncated.read_bytes()[:len(truncated.read_bytes()) - 100])
    shutil.copyfile(other_dir / [n for n in entries(other_dir) if n.endswith(".tfgprog")][0],
                    foreign)
    # A temporary file left by a writer that crashed is never read.
    (cache_dir / (names[3] + ".tmp-99999-0")).write_bytes(b"torn")

    # Two delegates in one process: the first repairs, the second finds all.
    results, outputs, stderr = run_child(case, [[str(cache_dir), "model-1"]] * 2, "repair")
    cache = results[0]["cache"]
    assert cache["entries_rejected"] == 3, cache
    assert cache["programs_loaded"] == programs - 3, cache
    assert cache["programs_compiled"] == 3 and cache["entries_written"] == 3, cache
    for path, reason in ((damaged, "checksum mismatch"), (truncated, "truncated"),
                         (foreign, "identity differs")):
        lines = [line for line in stderr.splitlines() if str(path) in line]
        assert lines and "rejected" in lines[0] and reason in lines[0], (reason, stderr)
    repaired = results[1]["cache"]
    assert repaired["programs_loaded"] == programs and repaired["entries_rejected"] == 0, repaired
    for output in outputs:
        assert_close([output], [case["cpu"]])


def test_unusable_directories_warn_and_outputs_stay_correct(case, tmp_path):
    # /sys refuses new files even to root; otherwise a read-only folder.
    if os.geteuid() == 0:
        unwritable = "/sys"
    else:
        unwritable = str(tmp_path / "locked")
        os.mkdir(unwritable, 0o500)
    missing = str(tmp_path / "absent")
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    runs = [[unwritable, "model-1"], [missing, "model-1"], [str(a_file), "model-1"]]
    results, outputs, stderr = run_child(case, runs, "unusable")
    assert f"cannot write to the serialization cache in '{unwritable}'" in stderr, stderr
    assert f"'{missing}' cannot be used: No such file or directory" in stderr, stderr
    assert f"'{a_file}' cannot be used: not a directory" in stderr, stderr
    written = results[0]["cache"]
    assert written["enabled"] == 1 and written["entries_written"] == 0, written
    assert unwritable in written["note"], written
    for result in results[1:]:
        assert result["cache"]["enabled"] == 0 and result["cache"]["note"], result
    for result, output in zip(results, outputs):
        assert result["cache"]["programs_compiled"] == result["stats"]["programs"], result
        assert_close([output], [case["cpu"]])
    if unwritable != "/sys":
        assert os.listdir(unwritable) == []


def test_the_drivers_own_cache_is_kept_in_the_serialization_dir(case, tmp_path,
                                                                 no_driver_cache_settings):
    # On llvmpipe a program binary is NIR: the machine code of the first
    # dispatch exists only in Mesa's disk cache (bench/program_binary_probe.py),
    # so the serialization cache keeps that cache in a subfolder of its own.
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    results, first, stderr = run_child(case, [[str(cache_dir), "model-1"]], "fill")
    assert results[0]["env_after"] == {"MESA_SHADER_CACHE_DIR": "",
                                       "__GL_SHADER_DISK_CACHE_PATH": ""}, results
    folder = cache_dir / DRIVER
    assert (f"driver shader cache: MESA_SHADER_CACHE_DIR and __GL_SHADER_DISK_CACHE_PATH "
            f"-> {folder}") in stderr, stderr
    filled = driver_files(folder)
    assert len(filled) >= 2, f"the driver wrote nothing into {folder}: {filled}"
    assert driver_files(no_driver_cache_settings) == {}, "the user's cache was used"

    # A second start finds every program and every machine code: no lookup
    # missed, so the driver adds no file (a miss compiles and writes one).
    results, second, _ = run_child(case, [[str(cache_dir), "model-1"]], "reuse")
    assert results[0]["cache"]["programs_loaded"] == results[0]["stats"]["programs"], results
    assert driver_files(folder) == filled
    np.testing.assert_array_equal(second[0], first[0])
    assert_close(second, [case["cpu"]])

    # Program binaries alone (the folder without the driver's part): the
    # driver compiles every program again at its first dispatch and writes
    # that machine code back, under the keys the filled folder holds.
    binaries_only = tmp_path / "binaries_only"
    shutil.copytree(cache_dir, binaries_only, ignore=shutil.ignore_patterns(DRIVER))
    results, _, _ = run_child(case, [[str(binaries_only), "model-1"]], "binaries")
    rewritten = {os.path.relpath(p, binaries_only) for p in driver_files(binaries_only / DRIVER)}
    assert len(rewritten) > results[0]["stats"]["programs"], rewritten
    assert rewritten <= {os.path.relpath(p, cache_dir) for p in filled}, rewritten


def test_a_driver_cache_the_user_chose_is_left_alone(case, tmp_path, no_driver_cache_settings,
                                                    monkeypatch):
    cache_dir, users = tmp_path / "cache", tmp_path / "users_mesa_cache"
    cache_dir.mkdir()
    monkeypatch.setenv("MESA_SHADER_CACHE_DIR", str(users))
    results, outputs, stderr = run_child(case, [[str(cache_dir), "model-1"]], "user")
    # Mesa's variable stays the user's; NVIDIA's (unset) is ours, then removed.
    assert results[0]["env_after"] == {"MESA_SHADER_CACHE_DIR": str(users),
                                       "__GL_SHADER_DISK_CACHE_PATH": ""}, results
    assert "left to the user: Mesa's (MESA_SHADER_CACHE_DIR is set)" in stderr, stderr
    assert driver_files(cache_dir / DRIVER) == {}
    assert len(driver_files(users)) >= 2
    assert_close(outputs, [case["cpu"]])


def test_damaged_driver_cache_files_are_not_trusted(case, tmp_path, no_driver_cache_settings):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    run_child(case, [[str(cache_dir), "model-1"]], "fill")
    files = sorted(driver_files(cache_dir / DRIVER))
    assert files
    # Every file of the driver's: half flipped in the middle, half cut short
    # (the driver checks its own entries; outputs must stay right).
    for i, path in enumerate(files):
        data = bytearray(open(path, "rb").read())
        if i % 2 == 0 and data:
            data[len(data) // 2] ^= 0xFF
        else:
            data = data[:len(data) // 3]
        with open(path, "wb") as f:
            f.write(bytes(data))
    results, outputs, _ = run_child(case, [[str(cache_dir), "model-1"]], "damaged")
    assert results[0]["cache"]["programs_loaded"] == results[0]["stats"]["programs"], results
    assert_close(outputs, [case["cpu"]])


APP_CONTEXT_CHILD = r"""
import sys
import numpy as np
import egl_app_context
import gles_testing as gt
model, inputs, directory, out = sys.argv[1], np.load(sys.argv[2]), sys.argv[3], sys.argv[4]
with egl_app_context.ApplicationContext() as application:
    application.make_current()
    delegate = gt.make_delegate({"serialization_dir": directory, "model_token": "model-1"})
    interp = gt.interpreter(model, delegate)
    np.save(out, gt.invoke(interp, [inputs])[0])
    assert gt.stats(delegate)["egl_display"] == "the application's current EGL context"
    del interp
    egl_app_context.release_current()
"""


def test_with_the_applications_context_the_driver_cache_is_the_applications(
        case, tmp_path, no_driver_cache_settings):
    # The application initialized its display before the delegate saw it:
    # the driver's cache is wherever the application's environment put it.
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    out = tmp_path / "app_out.npy"
    result = run_isolated(APP_CONTEXT_CHILD, args=["-c", APP_CONTEXT_CHILD, case["model"],
                                                   case["input"], str(cache_dir), str(out)])
    assert result.returncode == 0, result.stderr[-4000:]
    assert "driver shader cache left to the application" in result.stderr, result.stderr
    assert not (cache_dir / DRIVER).exists()
    assert len(entries(cache_dir)) >= 5, "program binaries are still kept"
    assert_close([np.load(out)], [case["cpu"]])


def model_data_line(stderr):
    """(loaded, converted, written) from the INFO line of the last delegate."""
    line = [l for l in stderr.splitlines() if "model data:" in l][-1]
    words = line.split("model data: ")[1].split()
    return int(words[0]), int(words[3]), int(words[5])


def test_model_data_is_reused_and_a_changed_model_never_loads_stale_data(case, tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    _, first, stderr = run_child(case, [[str(cache_dir), "model-1"]], "data_fill")
    # The two convolutions' packed weights (conv and FULLY_CONNECTED
    # weights are cached; the small depthwise and bias constants are not).
    loaded, converted, written = model_data_line(stderr)
    assert (loaded, written) == (0, 1) and converted >= 2, stderr
    _, second, stderr = run_child(case, [[str(cache_dir), "model-1"]], "data_reuse")
    assert model_data_line(stderr) == (converted, 0, 0), stderr
    np.testing.assert_array_equal(second[0], first[0])

    # The same graph with other weights, under the same token and folder:
    # its constants hash differently, so nothing stale is found.
    other = dict(case)
    other["model"] = str(tmp_path / "changed.tflite")
    data = bytearray(open(case["model"], "rb").read())
    weights = np.random.default_rng(7).uniform(-0.5, 0.5, [12, 1, 1, 6]).astype(np.float32)
    at = bytes(data).find(weights.tobytes())
    assert at > 0, "the first convolution's weights are in the file"
    data[at:at + weights.nbytes] = (weights * -1.5).tobytes()
    open(other["model"], "wb").write(bytes(data))
    cpu = invoke(interpreter(other["model"]), [np.load(case["input"])])[0]
    _, changed, stderr = run_child(other, [[str(cache_dir), "model-1"]], "data_changed")
    assert model_data_line(stderr) == (0, converted, 1), stderr
    assert_close(changed, [cpu])
    assert not np.allclose(changed[0], first[0])
    assert len([n for n in entries(cache_dir) if n.endswith(".tfgdata")]) == 2


@pytest.mark.parametrize("damage,reason", [
    ("flip", "checksum mismatch"), ("flip_first_blob", "checksum mismatch"),
    ("flip_first_blob_1kb_pieces", "checksum mismatch"),
    ("truncate", "truncated"), ("foreign", "identity differs"),
    ("garbage", "not a tflite-gles model-data entry")])
def test_damaged_model_data_entries_are_rejected_and_rewritten(case, tmp_path, damage, reason):
    cache_dir, other_dir = tmp_path / "cache", tmp_path / "other"
    cache_dir.mkdir()
    other_dir.mkdir()
    run_child(case, [[str(cache_dir), "model-1"], [str(other_dir), "model-2"]], "fill")
    entry = cache_dir / [n for n in entries(cache_dir) if n.endswith(".tfgdata")][0]
    data = bytearray(entry.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
    elif damage.startswith("flip_first_blob"):
        # The entry is streamed into the GPU buffers before its checksum
        # (at the end) is known: the damaged weights went up, and must then
        # be overwritten by the converted ones (the outputs below say so).
        identity, key, count = struct.unpack_from("<3I", data, 8)
        first = struct.unpack_from("<Q", data, 20)[0]
        start = 20 + 8 * count + identity + key
        for at in range(start + 3, start + first, 16):
            data[at] ^= 0x40  # every fourth float's exponent: weights turn huge
    elif damage == "truncate":
        data = data[:len(data) - 40]
    elif damage == "garbage":
        data = bytearray(b"not an entry")
    else:
        # A whole, valid entry of another token (as of another library build
        # or driver): its stored identity differs.
        data = (other_dir / [n for n in entries(other_dir) if n.endswith(".tfgdata")][0]
                ).read_bytes()
    entry.write_bytes(bytes(data))
    # This model's constants (at most a few KB) are read, hashed and uploaded
    # whole by default (NVIDIA reads every constant so); _1kb_pieces streams
    # them in 1 KB pieces, as llvmpipe's 256 KB pieces stream MobileNet's
    # (DeviceProfile::model_data_chunk_bytes).
    env = ({"TFLITE_GLES_X_MODEL_DATA_CHUNK_KB": "1"} if damage.endswith("_1kb_pieces")
           else None)
    results, outputs, stderr = run_child(case, [[str(cache_dir), "model-1"]] * 2, "repair",
                                         env)
    lines = [l for l in stderr.splitlines() if str(entry) in l]
    assert lines and "model-data entry rejected" in lines[0] and reason in lines[0], stderr
    for output in outputs:
        assert_close([output], [case["cpu"]])
    # The first delegate converted and rewrote it; the second loaded it.
    info = [l for l in stderr.splitlines() if "model data:" in l]
    assert len(info) == 2, stderr
    loaded, converted, written = model_data_line(info[0])
    assert loaded == 0 and converted >= 2 and written == 1, info
    assert model_data_line(info[1]) == (converted, 0, 0), info
