#!/usr/bin/env python3
"""Camera-to-overlay on the GPU with no CPU copy of the frame or the mask:
the Python twin of tools/gpu_pipeline_example.cc, and the one that runs
here (no library on this machine exports TFLite's C API, docs/cpp_usage.md;
LiteRT's Python interpreter drives the run, every GL step is the same).

  photograph --decode--> texture --RESIZE pass--> model-size texture
     --bound input--> selfie segmentation (tflite-gles) --bound output-->
     mask texture --COMPOSITE pass (with the photograph)--> result texture
     --the one readback--> PNG

    python3 tools/gpu_pipeline_example.py                  # astronaut -> docs/images/gpu_pipeline.png
    python3 tools/gpu_pipeline_example.py --image coffee --out /tmp/x.png --mask-out /tmp/m.png

--mask-out also reads the mask back (for tests/python/test_gpu_pipeline_example.py).
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "python"))

import egl_app_context  # noqa: E402
from sample_images import image_path  # noqa: E402
from tflite_gles import gpu_textures  # noqa: E402
from tflite_runtimes import Interpreter, load_delegate  # noqa: E402

SHADER = REPO / "tools" / "gpu_pipeline.comp"
DEFAULT_MODEL = REPO.parent / "shared" / "models" / "selfie_segmentation.tflite"

GL_TEXTURE_2D = 0x0DE1
GL_TEXTURE0 = 0x84C0
GL_RGBA = 0x1908
GL_RGBA8 = 0x8058
GL_UNSIGNED_BYTE = 0x1401
GL_TEXTURE_MIN_FILTER = 0x2801
GL_TEXTURE_MAG_FILTER = 0x2800
GL_TEXTURE_WRAP_S = 0x2802
GL_TEXTURE_WRAP_T = 0x2803
GL_LINEAR = 0x2601
GL_CLAMP_TO_EDGE = 0x812F
GL_UNPACK_ALIGNMENT = 0x0CF5
GL_PACK_ALIGNMENT = 0x0D05
GL_COMPUTE_SHADER = 0x91B9
GL_COMPILE_STATUS = 0x8B81
GL_LINK_STATUS = 0x8B82
GL_WRITE_ONLY = 0x88B9
GL_ALL_BARRIER_BITS = 0xFFFFFFFF
GL_FRAMEBUFFER = 0x8D40
GL_COLOR_ATTACHMENT0 = 0x8CE0
GL_FRAMEBUFFER_COMPLETE = 0x8CD5


class Gl:
    """The few GLES 3.1 entry points the pipeline calls; each checked."""

    def __init__(self):
        self.lib = ctypes.CDLL("libGLESv2.so.2")
        u, i, p = ctypes.c_uint, ctypes.c_int, ctypes.c_void_p
        for name, restype, args in [
            ("glGetError", u, []), ("glGenTextures", None, [i, p]),
            ("glDeleteTextures", None, [i, p]), ("glBindTexture", None, [u, u]),
            ("glActiveTexture", None, [u]), ("glTexStorage2D", None, [u, i, u, i, i]),
            ("glTexSubImage2D", None, [u, i, i, i, i, i, u, u, p]),
            ("glTexParameteri", None, [u, u, i]), ("glPixelStorei", None, [u, i]),
            ("glCreateShader", u, [u]), ("glShaderSource", None, [u, i, p, p]),
            ("glCompileShader", None, [u]), ("glGetShaderiv", None, [u, u, p]),
            ("glGetShaderInfoLog", None, [u, i, p, ctypes.c_char_p]),
            ("glCreateProgram", u, []), ("glAttachShader", None, [u, u]),
            ("glLinkProgram", None, [u]), ("glGetProgramiv", None, [u, u, p]),
            ("glDeleteShader", None, [u]), ("glDeleteProgram", None, [u]),
            ("glUseProgram", None, [u]), ("glDispatchCompute", None, [u, u, u]),
            ("glBindImageTexture", None, [u, u, i, ctypes.c_ubyte, i, u, u]),
            ("glMemoryBarrier", None, [u]), ("glGenFramebuffers", None, [i, p]),
            ("glDeleteFramebuffers", None, [i, p]), ("glBindFramebuffer", None, [u, u]),
            ("glFramebufferTexture2D", None, [u, u, u, u, i]),
            ("glCheckFramebufferStatus", u, [u]),
            ("glReadPixels", None, [i, i, i, i, u, u, p]),
        ]:
            function = getattr(self.lib, name)
            function.restype, function.argtypes = restype, args

    def __getattr__(self, name):
        function = getattr(self.lib, name)

        def checked(*args):
            result = function(*args)
            error = self.lib.glGetError()
            if error:
                raise RuntimeError(f"{name}: GL error 0x{error:x}")
            return result
        return checked

    def texture(self, width: int, height: int, pixels: np.ndarray | None = None) -> int:
        """An immutable RGBA8 texture, bilinear, clamped (image-writable)."""
        name = ctypes.c_uint(0)
        self.glGenTextures(1, ctypes.byref(name))
        self.glBindTexture(GL_TEXTURE_2D, name.value)
        self.glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, width, height)
        for parameter, value in [(GL_TEXTURE_MIN_FILTER, GL_LINEAR),
                                 (GL_TEXTURE_MAG_FILTER, GL_LINEAR),
                                 (GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE),
                                 (GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE)]:
            self.glTexParameteri(GL_TEXTURE_2D, parameter, value)
        if pixels is not None:
            data = np.ascontiguousarray(pixels, np.uint8)
            self.glPixelStorei(GL_UNPACK_ALIGNMENT, 1)
            self.glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA,
                                 GL_UNSIGNED_BYTE, data.ctypes.data)
        self.glBindTexture(GL_TEXTURE_2D, 0)
        return name.value

    def program(self, define: str) -> int:
        lines = SHADER.read_text().split("\n", 1)
        source = f"{lines[0]}\n#define {define} 1\n{lines[1]}".encode()
        shader = self.glCreateShader(GL_COMPUTE_SHADER)
        text = ctypes.c_char_p(source)
        self.glShaderSource(shader, 1, ctypes.byref(text), None)
        self.glCompileShader(shader)
        status = ctypes.c_int(0)
        self.glGetShaderiv(shader, GL_COMPILE_STATUS, ctypes.byref(status))
        if not status.value:
            log = ctypes.create_string_buffer(4096)
            self.glGetShaderInfoLog(shader, 4096, None, log)
            raise RuntimeError(f"{SHADER.name} ({define}): {log.value.decode()}")
        program = self.glCreateProgram()
        self.glAttachShader(program, shader)
        self.glLinkProgram(program)
        self.glDeleteShader(shader)
        self.glGetProgramiv(program, GL_LINK_STATUS, ctypes.byref(status))
        if not status.value:
            raise RuntimeError(f"{SHADER.name} ({define}) does not link")
        return program

    def run_pass(self, program: int, target: int, width: int, height: int,
                 samplers: list[int]) -> None:
        self.glUseProgram(program)
        for unit, texture in enumerate(samplers):
            self.glActiveTexture(GL_TEXTURE0 + unit)
            self.glBindTexture(GL_TEXTURE_2D, texture)
        self.glBindImageTexture(0, target, 0, 0, 0, GL_WRITE_ONLY, GL_RGBA8)
        self.glDispatchCompute((width + 7) // 8, (height + 7) // 8, 1)
        # The image stores, visible to the next pass's sampling, the
        # delegate's texelFetch and the framebuffer read.
        self.glMemoryBarrier(GL_ALL_BARRIER_BITS)

    def read(self, texture: int, width: int, height: int) -> np.ndarray:
        framebuffer = ctypes.c_uint(0)
        self.glGenFramebuffers(1, ctypes.byref(framebuffer))
        self.glBindFramebuffer(GL_FRAMEBUFFER, framebuffer.value)
        self.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                                    texture, 0)
        assert self.glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE
        out = np.empty((height, width, 4), np.uint8)
        self.glPixelStorei(GL_PACK_ALIGNMENT, 1)
        self.glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, out.ctypes.data)
        self.glBindFramebuffer(GL_FRAMEBUFFER, 0)
        self.glDeleteFramebuffers(1, ctypes.byref(framebuffer))
        return out

    def delete(self, *textures: int) -> None:
        names = (ctypes.c_uint * len(textures))(*textures)
        self.glDeleteTextures(len(textures), names)


def load_photo(name: str) -> np.ndarray:
    path = Path(name) if Path(name).is_file() else image_path(name)
    rgb = np.asarray(Image.open(path).convert("RGB"))
    return np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 255, np.uint8)], axis=-1)


def run(image: str, model: Path, out: Path, mask_out: Path | None, library: str,
        fp16: bool, frames: int) -> dict:
    photo_rgba = load_photo(image)
    height, width = photo_rgba.shape[:2]
    context = egl_app_context.ApplicationContext()
    # Current before the interpreter applies the delegate: the delegate then
    # runs in this context, and the textures made here are its names too.
    context.make_current()
    gl = Gl()
    try:
        delegate = load_delegate(library, {"precision_loss_allowed": "true" if fp16 else "false"})
        interpreter = Interpreter(model_path=str(model), experimental_delegates=[delegate])
        interpreter.allocate_tensors()
        source = interpreter.get_input_details()[0]
        target = interpreter.get_output_details()[0]
        _, model_h, model_w, _ = source["shape"]
        photo = gl.texture(width, height, photo_rgba)
        model_input = gl.texture(model_w, model_h)
        mask = gl.texture(model_w, model_h)
        result = gl.texture(width, height)
        resize, composite = gl.program("RESIZE"), gl.program("COMPOSITE")
        # Selfie segmentation takes RGB in [0, 1]: RGBA8 reads as that already.
        gpu_textures.bind_input_texture(delegate, source["index"], model_input,
                                        channels=(0, 1, 2), library=library)
        gpu_textures.bind_output_texture(delegate, target["index"], mask, library=library)
        times = []
        for _ in range(frames):  # a camera would upload a new frame each time
            start = time.perf_counter()
            gl.run_pass(resize, model_input, model_w, model_h, [photo])
            interpreter.invoke()
            gl.run_pass(composite, result, width, height, [photo, mask])
            picture = gl.read(result, width, height)  # the one readback
            times.append(time.perf_counter() - start)
        Image.fromarray(picture[..., :3]).save(out)
        if mask_out is not None:
            Image.fromarray(gl.read(mask, model_w, model_h)[..., 0]).save(mask_out)
        # Unbound before the textures go (a deleted texture fails the next
        # Invoke) and before the interpreter (which ends bindings with a warning).
        gpu_textures.unbind_texture(delegate, source["index"], library=library)
        gpu_textures.unbind_texture(delegate, target["index"], library=library)
        gl.delete(photo, model_input, mask, result)
        gl.glDeleteProgram(resize)
        gl.glDeleteProgram(composite)
        del interpreter
        return {"frames": frames, "best_ms": 1000 * min(times), "size": (width, height),
                "model_size": (int(model_w), int(model_h))}
    finally:
        context.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="astronaut",
                        help="a sample photograph's name (tools/sample_images.py) or a path")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "gpu_pipeline.png")
    parser.add_argument("--mask-out", type=Path, default=None,
                        help="also read the mask back and write it (8-bit, model size)")
    parser.add_argument("--library", default=str(REPO / "build" / "libtflite_gles.so"))
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--frames", type=int, default=1)
    args = parser.parse_args()
    report = run(args.image, args.model, args.out, args.mask_out, args.library, args.fp16,
                 args.frames)
    print(f"wrote {args.out}: {report['size'][0]}x{report['size'][1]}, model "
          f"{report['model_size'][0]}x{report['model_size'][1]}, best frame "
          f"{report['best_ms']:.1f} ms of {report['frames']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
