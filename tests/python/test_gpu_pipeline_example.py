"""tools/gpu_pipeline_example.py end to end: a photograph through the GPU
resize pass, selfie segmentation with texture in and texture out, and the
composite pass; its mask against LiteRT's CPU kernels on the same pixels."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from PIL import Image

from gles_testing import LIB, REPO, interpreter

sys.path.insert(0, str(REPO / "tools"))
import model_catalog  # noqa: E402
from sample_images import image_path  # noqa: E402

SELFIE = model_catalog.CATALOG["selfie_segmentation"]
MODEL = SELFIE.path
# The GPU's mask (fp32, stored as 8 bits) and the CPU's, both thresholded at
# one half, overlap at least this much (intersection over union).
IOU_BOUND = 0.99


def gl_bilinear_resize(rgb: np.ndarray, width: int, height: int) -> np.ndarray:
    """What the RESIZE pass computes: texture() at each target pixel's
    center, bilinear, clamped to the edge, stored to RGBA8 (rounded)."""
    src_h, src_w = rgb.shape[:2]
    x = (np.arange(width) + 0.5) * src_w / width - 0.5
    y = (np.arange(height) + 0.5) * src_h / height - 0.5
    x0 = np.clip(np.floor(x).astype(int), 0, src_w - 1)
    y0 = np.clip(np.floor(y).astype(int), 0, src_h - 1)
    x1, y1 = np.clip(x0 + 1, 0, src_w - 1), np.clip(y0 + 1, 0, src_h - 1)
    fx = np.clip(x - np.floor(x), 0, 1)[None, :, None]
    fy = np.clip(y - np.floor(y), 0, 1)[:, None, None]
    image = rgb.astype(np.float64) / 255.0
    top = image[y0][:, x0] * (1 - fx) + image[y0][:, x1] * fx
    bottom = image[y1][:, x0] * (1 - fx) + image[y1][:, x1] * fx
    return np.round((top * (1 - fy) + bottom * fy) * 255.0) / 255.0


def test_the_pipeline_example_segments_the_astronaut_like_the_cpu(tmp_path):
    out, mask_out = tmp_path / "pipeline.png", tmp_path / "mask.png"
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gpu_pipeline_example.py"), "--image", "astronaut",
         "--model", str(MODEL), "--out", str(out), "--mask-out", str(mask_out),
         "--library", LIB], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    photo = np.asarray(Image.open(image_path("astronaut")).convert("RGB"))
    picture = np.asarray(Image.open(out).convert("RGB"))
    assert picture.shape == photo.shape  # composited at the photograph's size
    gpu_mask = np.asarray(Image.open(mask_out), np.float32) / 255.0
    # LiteRT's CPU lacks MediaPipe's last op: its builtin twin (model_catalog).
    cpu = interpreter(model_catalog.cpu_reference_model(SELFIE))
    cpu.allocate_tensors()
    _, height, width, _ = cpu.get_input_details()[0]["shape"]
    cpu.set_tensor(cpu.get_input_details()[0]["index"],
                   gl_bilinear_resize(photo, width, height)[None].astype(np.float32))
    cpu.invoke()
    cpu_mask = cpu.get_tensor(cpu.get_output_details()[0]["index"])[0, ..., 0]
    person_gpu, person_cpu = gpu_mask > 0.5, cpu_mask > 0.5
    assert person_cpu.mean() > 0.1, "the CPU finds no person: wrong input?"
    iou = (person_gpu & person_cpu).sum() / (person_gpu | person_cpu).sum()
    assert iou >= IOU_BOUND, f"IoU {iou:.4f} < {IOU_BOUND}"
    # The overlay tinted the person and left the background: where both
    # agree there is no person, the picture is the photograph.
    scale_y, scale_x = photo.shape[0] // height, photo.shape[1] // width
    background = np.kron(cpu_mask < 0.01, np.ones((scale_y, scale_x), bool))
    person = np.kron(cpu_mask > 0.99, np.ones((scale_y, scale_x), bool))
    difference = np.abs(picture.astype(int) - photo.astype(int)).sum(-1)
    assert difference[background].mean() < 3
    assert difference[person].mean() > 60
