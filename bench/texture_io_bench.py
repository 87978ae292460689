#!/usr/bin/env python3
"""Per-frame cost of a model with its image coming from a texture and its
output going to a texture, against the copy path (docs/gpu_io.md,
"Textures"), side by side in one run, interleaved.

Three interpreters of the same model, each with its own delegate, in one
EGL context of this process (the "application"):
  copy         set_tensor(float image) + invoke + get_tensor(output): the
               frame crosses to the GPU and the output back, as without
               bindings
  tex_in       the image bound as an RGBA8 texture, the output copied back
  tex_in_out   the image and the output bound as textures (output RGBA32F,
               no host copy): nothing crosses; the frame ends with glFinish,
               so the output texture is complete, as a readback would be
With --base-library, the same three again with that library (e.g. main's
build before a change): six interpreters, each mode's saving measured
against its own library's copy path, all in one process.
Frames rotate through the modes in every round (interleaved: drift and load
hit all alike); each frame of the texture modes is a new texture
upload the application would do anyway (not timed: a camera's frame arrives
on the GPU). Prints a table (median ms per frame, saved vs copy, bytes no
longer copied) and writes JSON with every sample.

    python3 bench/texture_io_bench.py --model ../shared/models/selfie_segmentation.tflite
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "python"))

import egl_app_context  # noqa: E402
import gl_textures as gl  # noqa: E402
from tflite_gles import gpu_textures  # noqa: E402
from tflite_runtimes import Interpreter, load_delegate  # noqa: E402

_gles = ctypes.CDLL("libGLESv2.so.2")


def make(model: str, library: str, fp16: bool):
    delegate = load_delegate(library, {"precision_loss_allowed": "true" if fp16 else "false"})
    interpreter = Interpreter(model_path=model, experimental_delegates=[delegate])
    interpreter.allocate_tensors()
    return delegate, interpreter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(REPO.parent / "shared" / "models" /
                                               "selfie_segmentation.tflite"))
    parser.add_argument("--library", default=os.environ.get(
        "TFLITE_GLES_LIB", str(REPO / "build" / "libtflite_gles.so")))
    parser.add_argument("--base-library", default=None,
                        help="also run every mode with this library, interleaved")
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    context = egl_app_context.ApplicationContext()
    context.make_current()  # before the delegates are applied: they use it
    libraries = {"": args.library}
    if args.base_library:
        libraries = {"base ": args.base_library, "new ": args.library}
    modes = ("copy", "tex_in", "tex_in_out")
    runs = {}
    for tag, library in libraries.items():
        for mode in modes:
            runs[tag + mode] = make(args.model, library, args.fp16) + (mode, tag, library)
    first = next(iter(runs.values()))[1]
    detail_in = first.get_input_details()[0]
    detail_out = first.get_output_details()[0]
    _, height, width, channels = detail_in["shape"]
    out_shape = tuple(detail_out["shape"])
    if channels > 4 or out_shape[-1] > 4:
        raise SystemExit("the model's image input and output must have 1 to 4 channels")
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (height, width, 4), dtype=np.uint8) for _ in range(4)]
    source = gl.make_texture(frames[0])
    target = gl.empty_texture(out_shape[2], out_shape[1], "rgba32f")
    for name, (delegate, interpreter, mode, tag, library) in runs.items():
        if mode == "copy":
            continue
        gpu_textures.bind_input_texture(delegate, detail_in["index"], source,
                                        channels=tuple(range(channels)), library=library)
        if mode == "tex_in_out":
            gpu_textures.bind_output_texture(delegate, detail_out["index"], target,
                                             host_copy=False, library=library)

    def frame(name: str, pixels: np.ndarray) -> float:
        delegate, interpreter, mode, _, _ = runs[name]
        if mode == "copy":
            image = (pixels[None, ..., :channels].astype(np.float32) / 255.0)
            start = time.perf_counter()
            interpreter.set_tensor(detail_in["index"], image)
            interpreter.invoke()
            interpreter.get_tensor(detail_out["index"])
            return time.perf_counter() - start
        gl.update_texture(source, pixels)
        _gles.glFinish()  # the frame's upload is the camera's, not timed
        start = time.perf_counter()
        interpreter.invoke()
        if mode == "tex_in":
            interpreter.get_tensor(detail_out["index"])
        else:
            _gles.glFinish()
        return time.perf_counter() - start

    samples = {name: [] for name in runs}
    names = list(runs)
    for round_index in range(args.warmup + args.rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed = frame(name, frames[round_index % len(frames)])
            if round_index >= args.warmup:
                samples[name].append(1000 * elapsed)
    # Every mode computed the same mask for the same frame.
    check = frames[0]
    difference = 0.0
    for tag in libraries:
        frame(tag + "copy", check)
        reference = runs[tag + "copy"][1].get_tensor(detail_out["index"])[0]
        frame(tag + "tex_in_out", check)
        bound = gl.read_texture(target, out_shape[2], out_shape[1], "rgba32f")[..., :out_shape[-1]]
        difference = max(difference, float(np.abs(bound - reference).max()))

    in_bytes = int(height * width * channels * 4)
    out_bytes = int(np.prod(out_shape)) * 4
    print(f"model {Path(args.model).name} {'fp16' if args.fp16 else 'fp32'}, "
          f"{args.rounds} interleaved rounds, largest |texture - copy| {difference:.2e}")
    print("| mode | median ms/frame | min | p10 | p90 | saved vs copy (median) | "
          "bytes not copied/frame |")
    print("|---|---|---|---|---|---|---|")
    report = {"model": Path(args.model).name, "fp16": args.fp16, "rounds": args.rounds,
              "libraries": libraries, "max_abs_difference": difference, "modes": {}}
    for name, values in samples.items():
        _, _, mode, tag, _ = runs[name]
        copy_ms = statistics.median(samples[tag + "copy"])
        median = statistics.median(values)
        deciles = statistics.quantiles(values, n=10, method="inclusive")
        saved = 0 if mode == "copy" else in_bytes + (out_bytes if mode == "tex_in_out" else 0)
        print(f"| {name} | {median:.3f} | {min(values):.3f} | {deciles[0]:.3f} | "
              f"{deciles[-1]:.3f} | "
              f"{copy_ms - median:+.3f} ms ({100 * (copy_ms - median) / copy_ms:+.1f} %) | "
              f"{saved} |")
        report["modes"][name] = {"median_ms": median, "samples_ms": values,
                                 "bytes_not_copied": saved}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    gl.delete_texture(source)
    gl.delete_texture(target)
    # Every interpreter and delegate goes here, while the context is current
    # (docs/gpu_io.md, "Lifetime"): the loop variables above and `first`
    # still held two of them.
    delegate = interpreter = first = None
    runs.clear()
    context.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
