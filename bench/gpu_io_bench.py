"""Per-frame time with host copies vs GL buffers bound to the model's input
and output (docs/gpu_io.md), side by side in one process, interleaved.

    python bench/gpu_io_bench.py [--models selfie deeplab mobilenet] [--frames 20]

Each model gets two interpreters on one EGL context (the application's,
made here): "copy" sets the input tensor, invokes and reads the output
tensor, as a CPU application does; "bound" has its input in a GL buffer
(as if a camera or a render pass had put it there) and its output bound with
host_copy=False, so it only invokes (then glFinish, so the GPU work is in the
time); "bound phwc4" the same with both buffers in the delegate's PHWC4
layout. "bound+write" also writes the frame into the input buffer from the CPU
each frame (glBufferSubData), to separate the conversion the binding saves
from the upload. Frames alternate between the variants (copy, bound,
bound+write, copy, ...), so load changes hit all of them alike. Prints a
table: median ms per frame, time saved per frame, and the bytes per frame
that no longer cross between CPU and GPU memory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "python"))
from tflite_runtimes import Interpreter, OpResolverType, load_delegate  # noqa: E402
from tflite_gles import gpu_io  # noqa: E402

LIB = os.environ.get("TFLITE_GLES_LIB", str(REPO / "build" / "libtflite_gles.so"))
MODELS_DIR = Path(os.environ.get("TFLITE_GLES_MODELS", REPO.parent / "shared" / "models"))
MODELS = {
    "selfie": "selfie_segmentation.tflite",
    "deeplab": "deeplabv3_257_mv_gpu.tflite",
    "mobilenet": "mobilenet_v1_0.25_224.tflite",
    "rgba_conv": None,  # rgba_conv_model()
}


def rgba_conv_model() -> bytes:
    """A 3x3 convolution 1x256x256x4 -> 1x256x256x8 (seeded weights): an
    image model with whole PHWC4 slices at both ends, where a PHWC4 binding
    replaces the tensor itself (no conversion dispatch at all)."""
    from tflite_builder import single_op_model
    rng = np.random.default_rng(1)
    return single_op_model("CONV_2D", [[1, 256, 256, 4]],
                           {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                            "fused_activation_function": "RELU"},
                           {1: rng.uniform(-1, 1, (8, 3, 3, 4)).astype(np.float32),
                            2: rng.uniform(-1, 1, 8).astype(np.float32)})


def make(model, options: dict):
    delegate = load_delegate(LIB, options)
    source = ({"model_content": model} if isinstance(model, bytes)
              else {"model_path": str(model)})
    interp = Interpreter(**source, experimental_delegates=[delegate],
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interp.allocate_tensors()
    return delegate, interp


def to_phwc4(x: np.ndarray) -> np.ndarray:
    b, h, w, c = x.shape
    s = (c + 3) // 4
    padded = np.zeros((b, h, w, s * 4), np.float32)
    padded[..., :c] = x
    return padded.reshape(b, h, w, s, 4).transpose(0, 3, 1, 2, 4).reshape(-1)


def bench_model(name: str, frames: int, options: dict, gl: gpu_io.Gl) -> dict:
    path = MODELS_DIR / MODELS[name] if MODELS[name] else rgba_conv_model()
    _, copy = make(path, options)
    inp, out = copy.get_input_details()[0], copy.get_output_details()[0]
    rng = np.random.default_rng(0)
    frame_list = [rng.uniform(-1, 1, inp["shape"]).astype(np.float32) for _ in range(4)]
    bound = {}  # layout -> (interpreter, io, input buffer, output buffer)
    for layout in ("bhwc", "phwc4"):
        delegate, interp = make(path, options)
        io = gpu_io.GpuIo(delegate, LIB)
        buffers = (gl.create_buffer(io.buffer_bytes(inp["index"], layout)),
                   gl.create_buffer(io.buffer_bytes(out["index"], layout)))
        io.bind_buffer(inp["index"], buffers[0], layout)
        io.bind_buffer(out["index"], buffers[1], layout, host_copy=False)
        gl.write_buffer(buffers[0], frame_list[0] if layout == "bhwc" else to_phwc4(frame_list[0]))
        bound[layout] = (interp, io, *buffers, delegate)
    times = {"copy": [], "bound": [], "bound phwc4": [], "bound+write": []}

    def run_copy(frame):
        copy.set_tensor(inp["index"], frame)
        copy.invoke()
        return copy.get_tensor(out["index"])

    def run_bound(layout, frame=None):
        interp, _, in_buffer, _, _ = bound[layout]
        if frame is not None:
            gl.write_buffer(in_buffer, frame)
        interp.invoke()
        gl.finish()

    for i in range(frames + 2):  # two warm-up rounds
        frame = frame_list[i % len(frame_list)]
        for variant in times:
            start = time.perf_counter()
            if variant == "copy":
                run_copy(frame)
            elif variant == "bound":
                run_bound("bhwc")
            elif variant == "bound phwc4":
                run_bound("phwc4")
            else:
                run_bound("bhwc", frame)
            if i >= 2:
                times[variant].append((time.perf_counter() - start) * 1e3)
    # The bound output equals the copy path's (same frame in both).
    run_bound("bhwc", frame_list[0])
    got = gl.read_buffer(bound["bhwc"][3], int(np.prod(out["shape"])))
    want = run_copy(frame_list[0]).reshape(-1)
    error = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))
    median = {k: statistics.median(v) for k, v in times.items()}
    for layout, (interp, io, in_buffer, out_buffer, _) in bound.items():
        io.unbind(inp["index"])
        io.unbind(out["index"])
        gl.delete_buffer(in_buffer)
        gl.delete_buffer(out_buffer)
    return {
        "model": name, "frames": frames, "ms": median,
        "saved_ms": median["copy"] - median["bound"],
        "saved_pct": 100.0 * (median["copy"] - median["bound"]) / median["copy"],
        "bytes_not_copied": int(np.prod(inp["shape"]) * 4 + np.prod(out["shape"]) * 4),
        "rel_l2_bound_vs_copy": error,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--fp16", action="store_true", help="precision_loss_allowed")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    options = {"precision_loss_allowed": "true"} if args.fp16 else {}
    with gpu_io.EglContext() as context:
        context.make_current()
        gl = gpu_io.Gl()
        results = [bench_model(name, args.frames, options, gl) for name in args.models]
    load = os.getloadavg()[0]
    print(f"\nload average {load:.1f}; {'fp16' if args.fp16 else 'fp32'}; "
          f"median of {args.frames} interleaved frames")
    print("| model | copy ms | bound ms | bound phwc4 ms | bound+write ms | saved ms/frame "
          "| saved % | bytes not copied/frame | rel L2 bound vs copy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['model']} | {r['ms']['copy']:.3f} | {r['ms']['bound']:.3f} | "
              f"{r['ms']['bound phwc4']:.3f} | {r['ms']['bound+write']:.3f} | "
              f"{r['saved_ms']:.3f} | {r['saved_pct']:.1f} | "
              f"{r['bytes_not_copied']:,} | {r['rel_l2_bound_vs_copy']:.2g} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": load, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
