"""Real photographs as model inputs.

tools/install_deps.sh extracts a few of scikit-image's sample photographs
from Debian's python3-skimage package into IMAGE_DIR; this module turns them
into the float tensors models take (resized, scaled to the model's range).

    from sample_images import model_input
    x = model_input("astronaut", [1, 257, 257, 3], value_range=(-1, 1))
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

IMAGE_DIR = Path(os.environ.get("TFLITE_GLES_IMAGES", "/usr/local/share/tflite-gles/images"))

# What each photograph shows, to pick one that suits a model.
IMAGES = {
    "astronaut": "portrait of a person (Eileen Collins), 512x512",
    "chelsea": "a cat, 451x300",
    "coffee": "a cup of coffee, 600x400",
    "motorcycle_left": "a motorcycle, 741x497",
}


def image_path(name: str) -> Path:
    path = IMAGE_DIR / f"{name}.png"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: run tools/install_deps.sh (it extracts the sample "
            f"photographs {', '.join(IMAGES)} from Debian's python3-skimage)")
    return path


def load_rgb(name: str, height: int, width: int) -> np.ndarray:
    """The photograph as uint8 HxWx3: center-cropped to the target aspect
    ratio (so nothing is stretched), then resized with a bilinear filter."""
    image = Image.open(image_path(name)).convert("RGB")
    src_w, src_h = image.size
    scale = min(src_w / width, src_h / height)
    crop_w, crop_h = round(width * scale), round(height * scale)
    left, top = (src_w - crop_w) // 2, (src_h - crop_h) // 2
    image = image.crop((left, top, left + crop_w, top + crop_h))
    return np.asarray(image.resize((width, height), Image.BILINEAR), np.uint8)


def model_input(name: str, shape, value_range=(-1.0, 1.0)) -> np.ndarray:
    """A float32 NHWC batch of one photograph mapped from [0, 255] to value_range."""
    batch, height, width, channels = shape
    if batch != 1 or channels != 3:
        raise ValueError(f"expected a 1xHxWx3 input, got {list(shape)}")
    low, high = value_range
    rgb = load_rgb(name, height, width).astype(np.float32)
    return (low + rgb * ((high - low) / 255.0))[np.newaxis].astype(np.float32)
