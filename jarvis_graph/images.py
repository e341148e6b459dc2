"""Images for vision models: checked, scaled down and encoded as ``data:`` URLs.

``jarvis run --image PATH``, ``@picture.png`` in ``jarvis chat`` and the
``analyze_image`` tool all send images through :func:`image_part`: the file must be an
image Pillow reads (PNG, JPEG, GIF, WebP, BMP), no larger than ``image_max_bytes``; it is
scaled to at most ``image_max_side`` pixels a side and sent as PNG (when it has
transparency) or JPEG. Without a vision model, :func:`ocr_text` reads the text in an image
with ``tesseract`` when it is installed.
"""

from __future__ import annotations

import base64
import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")
FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "MPO")


class ImageError(ValueError):
    """An image that cannot be sent; the text says why."""


def is_image_path(path: str | Path) -> bool:
    """Whether a file name looks like an image (by its suffix)."""
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


def image_part(path: Path, max_side: int, max_bytes: int) -> dict[str, Any]:
    """The chat-completions content part of the image at ``path``.

    Raises:
        ImageError: Missing, too large, not an image, or Pillow is not installed.
    """
    try:
        # deferred: Pillow loads only when an image is sent
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        msg = "images need Pillow: pip install 'jarvis-graph[images]'"
        raise ImageError(msg) from None
    if not path.is_file():
        msg = f"image {path} not found"
        raise ImageError(msg)
    size = path.stat().st_size
    if size > max_bytes:
        msg = (
            f"image {path} is {size:,} bytes, more than the {max_bytes:,} allowed (image_max_bytes)"
        )
        raise ImageError(msg)
    try:
        with Image.open(path) as image:
            if image.format not in FORMATS:
                msg = f"{path} is a {image.format} image; send PNG, JPEG, GIF, WebP or BMP"
                raise ImageError(msg)
            image.load()
            picture = image.copy()
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError) as exc:
        msg = f"{path} is not an image that can be read ({exc})"
        raise ImageError(msg) from None
    picture.thumbnail((max_side, max_side))
    alpha = picture.mode in ("RGBA", "LA") or (
        picture.mode == "P" and "transparency" in picture.info
    )
    out = io.BytesIO()
    if alpha:
        picture.save(out, format="PNG", optimize=True)
        media = "image/png"
    else:
        picture.convert("RGB").save(out, format="JPEG", quality=85)
        media = "image/jpeg"
    data = base64.b64encode(out.getvalue()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}


def ocr_text(path: Path, timeout: float = 60.0) -> str | None:
    """The text ``tesseract`` reads in the image (``None``: tesseract is not installed).

    Raises:
        ImageError: tesseract failed on the file.
    """
    binary = shutil.which("tesseract")
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, str(path), "stdout"], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        msg = f"tesseract did not finish reading {path} within {timeout:g} s"
        raise ImageError(msg) from None
    if done.returncode != 0:
        msg = f"tesseract could not read {path}: {done.stderr.strip()[:200]}"
        raise ImageError(msg)
    return done.stdout.strip()
