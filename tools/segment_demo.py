#!/usr/bin/env python3
"""Segments a real photograph through tflite-gles and on the CPU and draws both.

Runs DeepLab v3 (PASCAL VOC classes) or MediaPipe selfie segmentation on one
of the sample photographs (tools/sample_images.py), through the delegate and
through LiteRT's CPU kernels, and writes into the output folder:
  NAME_gpu.png, NAME_cpu.png    the photograph with the mask overlaid
  NAME.png                      both side by side, labelled, with their agreement

    python3 tools/segment_demo.py                       # DeepLab on the astronaut
    python3 tools/segment_demo.py --model selfie_segmentation --fp16 --out /tmp/demo
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "tools"))

import gles_testing as gt  # noqa: E402
import model_catalog as mc  # noqa: E402
from sample_images import load_rgb  # noqa: E402

SEGMENTATION_MODELS = [name for name, spec in mc.CATALOG.items()
                       if spec.kind.startswith("segmentation") and not spec.standin]
VOC_CLASSES = ["background", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus",
               "car", "cat", "chair", "cow", "dining table", "dog", "horse", "motorbike",
               "person", "potted plant", "sheep", "sofa", "train", "tv/monitor"]


def label_colours() -> np.ndarray:
    """A vivid, distinct colour per label (hues spread by the golden ratio);
    label 15, person, gets a clear cyan that stands out on skin and clothes."""
    hues = (np.arange(256) * 0.618034 + 0.5) % 1.0
    hues[VOC_CLASSES.index("person")] = 0.5
    rgb = np.stack([np.clip(np.abs(hues * 6 - 3) - 1, 0, 1),
                    np.clip(2 - np.abs(hues * 6 - 2), 0, 1),
                    np.clip(2 - np.abs(hues * 6 - 4), 0, 1)], axis=-1)
    return (rgb * 255).round().astype(np.uint8)


@dataclasses.dataclass
class Segmentation:
    photo: np.ndarray          # HxWx3 uint8, the model's input size
    gpu_labels: np.ndarray     # HxW ints, 0 = background
    cpu_labels: np.ndarray
    stats: dict

    @property
    def agreement(self) -> float:
        return float(np.mean(self.gpu_labels == self.cpu_labels))


def labels_of(spec, output: np.ndarray) -> np.ndarray:
    if spec.kind == "segmentation_argmax":
        return output[0].argmax(-1)
    return (output[0, ..., 0] > 0.5).astype(np.int64) * VOC_CLASSES.index("person")


def segment(model: str, image: str = "astronaut", fp16: bool = False) -> Segmentation:
    """Runs `model` on the photograph through the delegate and on the CPU."""
    spec = dataclasses.replace(mc.CATALOG[model], image=image)
    delegate = gt.make_delegate({"precision_loss_allowed": fp16})
    interp = gt.interpreter(str(spec.path), delegate)
    interp.allocate_tensors()
    inputs = mc.model_inputs(spec, interp.get_input_details())
    gpu = gt.invoke(interp, inputs)[0]
    stats = gt.stats(delegate)
    del interp
    cpu = gt.invoke(gt.interpreter(mc.cpu_reference_model(spec)), inputs)[0]
    height, width = inputs[0].shape[1:3]
    return Segmentation(load_rgb(image, height, width), labels_of(spec, gpu),
                        labels_of(spec, cpu), stats)


def overlay(photo: np.ndarray, labels: np.ndarray, alpha: float = 0.5) -> Image.Image:
    """The photograph with each labelled pixel tinted by its label's colour
    and the background dimmed, so the mask's outline is plain to see."""
    colours = label_colours()[labels]
    blended = photo.astype(np.float32)
    mask = labels > 0
    blended[mask] = (1 - alpha) * blended[mask] + alpha * colours[mask]
    blended[~mask] *= 0.55
    return Image.fromarray(blended.round().astype(np.uint8))


def side_by_side(result: Segmentation, title: str, scale: int) -> Image.Image:
    gpu = overlay(result.photo, result.gpu_labels)
    cpu = overlay(result.photo, result.cpu_labels)
    width, height = gpu.size[0] * scale, gpu.size[1] * scale
    font = ImageFont.load_default(size=14)
    margin, caption = 8, 44
    canvas = Image.new("RGB", (2 * width + 3 * margin, height + caption + 2 * margin + 20),
                       "white")
    draw = ImageDraw.Draw(canvas)
    found = sorted(set(np.unique(result.gpu_labels)) - {0})
    classes = ", ".join(VOC_CLASSES[i] for i in found) or "nothing"
    draw.text((margin, 4), f"{title}: {classes}", fill="black", font=font)
    draw.text((margin, 22), f"GPU and CPU masks agree on {result.agreement:.3%} of pixels",
              fill="black", font=font)
    for column, (image, label) in enumerate(
            [(gpu, f"GPU: tflite-gles on {result.stats['renderer']}, "
                   f"{result.stats['nodes_delegated']}/{result.stats['nodes_total']} nodes"),
             (cpu, "CPU: LiteRT builtin kernels")]):
        left = margin + column * (width + margin)
        canvas.paste(image.resize((width, height), Image.NEAREST), (left, caption))
        draw.text((left, caption + height + 4), label, fill="black", font=font)
    return canvas


def write_pngs(result: Segmentation, folder, name: str, title: str, scale: int = 2) -> list[Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}_gpu.png", folder / f"{name}_cpu.png"]
    side_by_side(result, title, scale).save(paths[0], optimize=True)
    overlay(result.photo, result.gpu_labels).save(paths[1], optimize=True)
    overlay(result.photo, result.cpu_labels).save(paths[2], optimize=True)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="deeplabv3_257_mv_gpu", choices=SEGMENTATION_MODELS)
    parser.add_argument("--image", default="astronaut", help="a sample photograph name")
    parser.add_argument("--fp16", action="store_true", help="allow fp16 on the GPU")
    parser.add_argument("--out", default=str(REPO / "build" / "demo"), help="output folder")
    parser.add_argument("--scale", type=int, default=2, help="enlargement of the side-by-side")
    args = parser.parse_args()

    result = segment(args.model, args.image, args.fp16)
    precision = "fp16" if args.fp16 else "fp32"
    name = f"{args.model}_{args.image}_{precision}"
    paths = write_pngs(result, args.out, name, f"{args.model} ({precision})", args.scale)
    stats = result.stats
    print(f"delegated {stats['nodes_delegated']} of {stats['nodes_total']} nodes in "
          f"{stats['partitions']} partition(s) on {stats['renderer']}")
    print(f"GPU and CPU masks agree on {result.agreement:.3%} of pixels")
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
