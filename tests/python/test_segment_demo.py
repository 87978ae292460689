"""tools/segment_demo.py: DeepLab v3 on a real photograph through the
delegate and on the CPU; the masks agree and the PNGs show them."""

import sys

import numpy as np
from PIL import Image

import gles_testing as gt

sys.path.insert(0, str(gt.REPO / "tools"))
import segment_demo  # noqa: E402


def test_deeplab_demo_masks_agree_and_pictures_show_them(tmp_path):
    result = segment_demo.segment("deeplabv3_257_mv_gpu", "astronaut", fp16=True)
    gt.assert_fully_delegated(result.stats)
    assert result.agreement >= 0.995, f"masks agree on {result.agreement:.4%} < 99.5%"
    person = segment_demo.VOC_CLASSES.index("person")
    assert np.mean(result.gpu_labels == person) > 0.25, "the astronaut is not found"

    paths = segment_demo.write_pngs(result, tmp_path, "demo", "test", scale=1)
    side_by_side, gpu_png, cpu_png = (np.asarray(Image.open(p).convert("RGB")) for p in paths)
    height, width = result.photo.shape[:2]
    assert gpu_png.shape == cpu_png.shape == (height, width, 3)
    assert side_by_side.shape[1] > 2 * width and side_by_side.shape[0] > height
    # Labelled pixels are tinted; the background is the photo dimmed.
    mask = result.gpu_labels > 0
    photo = result.photo.astype(float)
    assert (np.abs(gpu_png - photo).sum(-1)[mask] > 0).mean() > 0.9
    assert np.abs(gpu_png[~mask] - 0.55 * photo[~mask]).max() <= 1.0
