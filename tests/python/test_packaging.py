"""tflite-gles as others install it, used from outside the repository.

Python: `pip wheel` builds the wheel from pyproject.toml (scikit-build-core
runs CMake into build-wheel/, reused between runs), pip installs it into a
fresh virtual environment in a temporary directory, and a script there (cwd
the temporary directory, `python -I`, the repository nowhere on sys.path)
loads the delegate through `tflite_gles.load_delegate()` and runs a real
model through it and on the CPU, with ai-edge-litert and with tflite-runtime.
The runtimes come from the project's environments (.venv,
.venv-tflite-runtime) through a .pth file, so nothing is downloaded and pip
runs with --no-index.

C/C++: `cmake --install build --prefix <tmp>`, then tests/consumer is built
against that tree with find_package(tflite_gles) and, separately, with
`pkg-config --cflags --libs tflite_gles`, and both programs run.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
# scikit-build-core's build directory: a second run only rebuilds what changed.
WHEEL_BUILD = REPO / "build-wheel"
RUNTIME_VENVS = {
    "ai_edge_litert": Path(os.environ.get("TFLITE_GLES_VENV", REPO / ".venv")),
    "tflite_runtime": Path(os.environ.get("TFLITE_GLES_VENV_TFLITE_RUNTIME",
                                          REPO / ".venv-tflite-runtime")),
}
PIP_EXTRAS = {"ai_edge_litert": "litert", "tflite_runtime": "tflite-runtime"}
# A real float model that the delegate runs whole (tests/python/test_models.py).
MODEL = "mobilenet_v1_0.25_224.tflite"
FP32_MODEL_TOLERANCE = 1e-4   # relative L2, as in test_models.py


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    """Runs `cmd`; on failure the assertion shows its output."""
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {result.returncode}\n"
        f"stdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}")
    return result


def shared_model() -> Path:
    sys.path.insert(0, str(REPO / "tools"))
    import model_catalog
    path = model_catalog.SHARED_MODELS / MODEL
    assert path.is_file(), f"{path} is missing (the shared models)"
    return path


# --- Python: the wheel ---------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
           "-w", out, f"--config-settings=build-dir={WHEEL_BUILD}", REPO]
    # With scikit-build-core installed (tools/install_deps.sh), no isolated
    # build environment is downloaded; without it pip fetches it from PyPI.
    if importlib.util.find_spec("scikit_build_core") is not None:
        cmd.insert(4, "--no-build-isolation")
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
    run(cmd, env=env)
    (path,) = out.glob("tflite_gles-*.whl")
    return path


def test_wheel_holds_the_package_and_its_library_only(wheel):
    # One wheel for every Python 3 of the platform: the library is dlopened.
    assert wheel.name.split("-")[2:4] == ["py3", "none"], wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    package = sorted(n for n in names if not n.split("/")[0].endswith(".dist-info"))
    # The GPU binding helpers (docs/gpu_io.md) are part of the package.
    assert package == ["tflite_gles/__init__.py", "tflite_gles/gpu_io.py",
                       "tflite_gles/gpu_textures.py", "tflite_gles/libtflite_gles.so"], package


def site_packages(python: Path) -> str:
    return run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
               ).stdout.strip()


def make_venv(runtime: str, wheel: Path, root: Path) -> Path:
    """A new virtual environment under `root` with the wheel pip-installed,
    seeing the project's `runtime` environment through a .pth file."""
    source = RUNTIME_VENVS[runtime]
    source_python = source / "bin" / "python"
    assert source_python.exists(), (
        f"no {runtime} environment at {source}: run 'bash tools/install_deps.sh'")
    venv = root / "venv"
    run([source_python, "-m", "venv", venv])
    purelib = site_packages(source_python)
    Path(site_packages(venv / "bin" / "python"), "project_runtime.pth").write_text(purelib + "\n")
    # With the extra that names the runtime, so pip checks it is satisfied;
    # --no-index: nothing may be downloaded.
    run([venv / "bin" / "python", "-m", "pip", "install", "--no-index",
         "--disable-pip-version-check", f"{wheel}[{PIP_EXTRAS[runtime]}]"])
    return venv


OUTSIDE_SCRIPT = textwrap.dedent("""
    import ctypes, importlib, json, os, sys
    import numpy as np

    repo, model, runtime, runtime_site = sys.argv[1:5]

    def inside(path):  # in the repository, but not the runtime's .venv there
        path = os.path.realpath(path or ".")
        return (path.startswith(repo + os.sep)
                and not path.startswith(os.path.realpath(runtime_site) + os.sep)
                and path != os.path.realpath(runtime_site))
    assert not [p for p in sys.path if p and inside(p)], sys.path
    assert not inside(os.getcwd()), os.getcwd()

    import tflite_gles
    assert tflite_gles.__file__.startswith(sys.prefix + os.sep), tflite_gles.__file__
    assert tflite_gles.runtime() == runtime, tflite_gles.runtime()
    interpreter = importlib.import_module(runtime + ".interpreter")
    plain = interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES

    def run(delegates):
        interp = interpreter.Interpreter(model_path=model, experimental_delegates=delegates,
                                         experimental_op_resolver_type=plain)
        interp.allocate_tensors()
        detail = interp.get_input_details()[0]
        rng = np.random.default_rng(7)
        interp.set_tensor(detail["index"],
                          rng.uniform(-1, 1, detail["shape"]).astype(np.float32))
        interp.invoke()
        return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]

    class Stats(ctypes.Structure):  # TfLiteGlesDelegateStats, tflite_gles/delegate.h
        _fields_ = [("nodes_total", ctypes.c_int32), ("nodes_delegated", ctypes.c_int32),
                    ("partitions", ctypes.c_int32), ("programs", ctypes.c_int32),
                    ("dispatches", ctypes.c_int32), ("gpu_bytes", ctypes.c_int64),
                    ("invokes", ctypes.c_int64), ("renderer", ctypes.c_char * 128),
                    ("gl_version", ctypes.c_char * 128), ("egl_display", ctypes.c_char * 512)]

    delegate = tflite_gles.load_delegate({"log_level": "warning"})
    gpu = run([delegate])
    cpu = run(None)
    stats = Stats()
    library = ctypes.CDLL(tflite_gles.library_path())
    assert library.TfLiteGlesDelegateGetStats(
        ctypes.c_void_p(delegate._get_native_delegate_pointer()), ctypes.byref(stats)) == 0
    errors = [float(np.linalg.norm(g.astype(np.float64) - c) / np.linalg.norm(c))
              for g, c in zip(gpu, cpu)]
    outside = [m.__file__ for m in list(sys.modules.values())
               if getattr(m, "__file__", None) and inside(m.__file__)]
    print(json.dumps({"errors": errors, "shapes": [list(g.shape) for g in gpu],
                      "nodes_total": stats.nodes_total,
                      "nodes_delegated": stats.nodes_delegated,
                      "invokes": stats.invokes, "renderer": stats.renderer.decode(),
                      "library": tflite_gles.library_path(), "repo_modules": outside}))
""")


@pytest.mark.parametrize("runtime", sorted(RUNTIME_VENVS))
def test_installed_package_runs_a_model_outside_the_repository(runtime, wheel, tmp_path):
    venv = make_venv(runtime, wheel, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    model = work / MODEL
    shutil.copy(shared_model(), model)
    script = work / "use_tflite_gles.py"
    script.write_text(OUTSIDE_SCRIPT)
    runtime_site = site_packages(RUNTIME_VENVS[runtime] / "bin" / "python")
    result = run([venv / "bin" / "python", "-I", script, REPO.resolve(), model, runtime,
                  runtime_site], cwd=work)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["library"].startswith(str(venv)), report
    assert report["repo_modules"] == [], report
    assert report["invokes"] == 1 and report["renderer"], report
    assert report["nodes_total"] > 0 and report["nodes_delegated"] == report["nodes_total"], report
    assert report["shapes"] == [[1, 1001]], report
    assert max(report["errors"]) <= FP32_MODEL_TOLERANCE, report


# --- C/C++: cmake --install, find_package and pkg-config ------------------------

@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    assert (BUILD / "CMakeCache.txt").exists(), "no build/: run 'bash tools/build.sh' first"
    prefix = tmp_path_factory.mktemp("prefix")
    run(["cmake", "--install", BUILD, "--prefix", prefix])
    return prefix


def pc_dir(prefix: Path) -> Path:
    (pc,) = glob.glob(str(prefix / "**" / "pkgconfig" / "tflite_gles.pc"), recursive=True)
    return Path(pc).parent


def test_install_tree_has_header_library_cmake_package_and_pc(prefix):
    assert (prefix / "include" / "tflite_gles" / "delegate.h").is_file()
    assert glob.glob(str(prefix / "lib*" / "**" / "libtflite_gles.so"), recursive=True)
    assert glob.glob(str(prefix / "lib*" / "**" / "tflite_glesConfig.cmake"), recursive=True)
    # The .pc names the tree it was installed to, not the configured prefix.
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc_dir(prefix)))
    said = run(["pkg-config", "--variable=prefix", "tflite_gles"], env=env).stdout.strip()
    assert Path(said).resolve() == prefix.resolve(), said


def test_cmake_consumer_finds_links_and_runs(prefix, tmp_path):
    build = tmp_path / "build"
    run(["cmake", "-S", REPO / "tests" / "consumer", "-B", build,
         f"-DCMAKE_PREFIX_PATH={prefix}"])
    run(["cmake", "--build", build])
    result = run([build / "consumer"], cwd=tmp_path)
    assert "consumer: ok" in result.stdout


def test_pkg_config_consumer_compiles_links_and_runs(prefix, tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc_dir(prefix)))
    flags = run(["pkg-config", "--cflags", "--libs", "tflite_gles"], env=env).stdout.split()
    libdir = run(["pkg-config", "--variable=libdir", "tflite_gles"], env=env).stdout.strip()
    program = tmp_path / "consumer"
    run(["cc", "-std=c99", "-Wall", "-Werror", REPO / "tests" / "consumer" / "main.c",
         "-o", program, *flags])
    result = run([program], cwd=tmp_path, env=dict(os.environ, LD_LIBRARY_PATH=libdir))
    assert "consumer: ok" in result.stdout
