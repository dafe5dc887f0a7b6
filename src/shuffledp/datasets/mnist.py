"""MNIST in its IDX files (PIC §7.3, full version Appendix E), and the stand-in used when they are absent.

IDX (LeCun et al.): a 4-byte magic ``0x00 0x00 <type> <ndim>``, then ``ndim``
big-endian uint32 sizes, then the values, big-endian, in C order.  Types:
0x08 unsigned byte, 0x09 signed byte, 0x0B int16, 0x0C int32, 0x0D float32,
0x0E float64.  MNIST's images are ``idx3-ubyte`` (n x 28 x 28, type 0x08, magic
0x00000803) and its labels ``idx1-ubyte`` (n, magic 0x00000801); either may be
gzipped (as distributed: ``train-images-idx3-ubyte.gz``), which is detected from
the file's first bytes, not its name.

`read_idx` reads any IDX file; `load_mnist` reads an image file and a label file
and checks they belong together.  `mnist_or_digits` is what the experiments call:
MNIST from ``<data root>/mnist/`` (or given paths) when the files are there,
else scikit-learn's bundled 8x8 digits (1,797 images, no download), named
`DIGITS_SUBSTITUTE_NAME` in every output.  Only *missing* files select the
stand-in: a present but malformed file is a DataError naming the file.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shuffledp.datasets._paths import data_root, existing_file
from shuffledp.errors import DataError

__all__ = [
    "DIGITS_SUBSTITUTE_NAME",
    "ImageData",
    "load_digits_substitute",
    "load_mnist",
    "mnist_or_digits",
    "mnist_paths",
    "read_idx",
]

#: IDX type byte -> big-endian numpy dtype.
IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
#: The four MNIST files under ``<data root>/mnist/`` (each also accepted with ``.gz``).
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
#: Name of the stand-in in every output of an experiment that falls back to it.
DIGITS_SUBSTITUTE_NAME = "scikit-learn digits 8x8 (substitute for MNIST)"


@dataclass(frozen=True)
class ImageData:
    """Images with their labels.

    Attributes
    ----------
    name : str
        ``"mnist"`` or `DIGITS_SUBSTITUTE_NAME`.
    images : numpy.ndarray of float64, shape (n, h, w)
        Pixel intensities scaled to [0, 1].
    labels : numpy.ndarray of int64, shape (n,)
        Classes 0..9.
    source : str
        Files read (or the scikit-learn data set).
    """

    name: str
    images: np.ndarray
    labels: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.labels)


def _read_bytes(path: Path) -> bytes:
    with path.open("rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if not gz:
        return path.read_bytes()
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read()
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: the file starts like gzip but does not decompress ({exc})") from None


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read one IDX file (plain or gzipped) into an array of its shape, in native byte order.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    numpy.ndarray
        Shape from the header, dtype from the type byte (native byte order).

    Raises
    ------
    DataError
        For a missing file, a bad magic number (first two bytes not zero, an unknown
        type byte, ndim 0), a header cut short, or a body whose size differs from the
        one the header announces; the message quotes what was found and what is allowed.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shuffledp.datasets import read_idx
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels-idx1-ubyte"
    >>> _ = path.write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 2, 1]))
    >>> read_idx(path)
    array([7, 2, 1], dtype=uint8)
    """
    file = existing_file(Path(path), "IDX file")
    data = _read_bytes(file)
    allowed = ", ".join(f"0x{t:02X}" for t in IDX_TYPES)
    if len(data) < 4:
        raise DataError(f"{file}: an IDX file starts with a 4-byte magic number, the file has {len(data)} bytes")
    magic = data[:4]
    if magic[0] != 0 or magic[1] != 0 or magic[2] not in IDX_TYPES or magic[3] == 0:
        raise DataError(
            f"{file}: magic number {magic.hex(' ')} is not IDX; allowed: 00 00 <type> <ndim> with type one of "
            f"{allowed} and ndim >= 1 (MNIST: 00 00 08 03 for images, 00 00 08 01 for labels)"
        )
    ndim = magic[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataError(
            f"{file}: the header announces {ndim} dimensions ({header} bytes), the file has {len(data)} bytes"
        )
    shape = tuple(int(x) for x in np.frombuffer(data, ">u4", count=ndim, offset=4))
    dtype = np.dtype(IDX_TYPES[magic[2]])
    expected = int(np.prod(shape, dtype=object)) * dtype.itemsize
    body = len(data) - header
    if body != expected:
        raise DataError(
            f"{file}: the header announces shape {shape} of {dtype.name} ({expected} bytes of data), "
            f"the file holds {body} bytes after the header ({'truncated' if body < expected else 'trailing bytes'})"
        )
    return np.frombuffer(data, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def load_mnist(images_path: str | os.PathLike[str], labels_path: str | os.PathLike[str]) -> ImageData:
    """MNIST images and labels from their IDX files (plain or gzipped).

    Parameters
    ----------
    images_path : str or os.PathLike
        An ``idx3-ubyte`` file: n images of h x w unsigned bytes.
    labels_path : str or os.PathLike
        An ``idx1-ubyte`` file: n labels in 0..9.

    Returns
    -------
    ImageData
        Pixels / 255 in [0, 1], labels as int64; named ``"mnist"``.

    Raises
    ------
    DataError
        For a malformed file (`read_idx`), images that are not 3-d unsigned bytes,
        labels that are not 1-d unsigned bytes in 0..9, or counts that differ.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shuffledp.datasets import load_mnist
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "img").write_bytes(bytes([0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 255]))
    >>> _ = (d / "lab").write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 1, 4]))
    >>> data = load_mnist(d / "img", d / "lab")
    >>> data.images, data.labels
    (array([[[0., 1.]]]), array([4]))
    """
    images = read_idx(images_path)
    labels = read_idx(labels_path)
    if images.ndim != 3 or images.dtype != np.uint8:
        raise DataError(
            f"{images_path}: MNIST images must be a 3-d unsigned-byte IDX (magic 00 00 08 03), "
            f"got {images.ndim}-d {images.dtype.name}"
        )
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise DataError(
            f"{labels_path}: MNIST labels must be a 1-d unsigned-byte IDX (magic 00 00 08 01), "
            f"got {labels.ndim}-d {labels.dtype.name}"
        )
    if len(images) != len(labels):
        raise DataError(f"{images_path} holds {len(images)} images but {labels_path} holds {len(labels)} labels")
    bad = np.flatnonzero(labels > 9)
    if bad.size:
        raise DataError(
            f"{labels_path}: label {int(bad[0])} is {int(labels[bad[0]])}; allowed: 0..9 ({bad.size} labels out of range)"
        )
    return ImageData(
        "mnist", images.astype(np.float64) / 255.0, labels.astype(np.int64), f"{images_path}, {labels_path}"
    )


def mnist_paths(split: str = "train", root: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """(images, labels) paths of an MNIST split under ``<data root>/mnist/``; the ``.gz`` name when only it exists."""
    if split not in MNIST_FILES:
        raise DataError(f"split must be 'train' or 'test', got {split!r}")
    folder = data_root(root) / "mnist"
    paths = []
    for stem in MNIST_FILES[split]:
        plain, gz = folder / stem, folder / f"{stem}.gz"
        paths.append(gz if not plain.exists() and gz.exists() else plain)
    return paths[0], paths[1]


def load_digits_substitute() -> ImageData:
    """scikit-learn's bundled 8x8 digits (1,797 images, pixels 0..16 scaled to [0, 1]), the MNIST stand-in."""
    from sklearn.datasets import load_digits

    data = load_digits()
    return ImageData(
        DIGITS_SUBSTITUTE_NAME, data.images / 16.0, data.target.astype(np.int64), "sklearn.datasets.load_digits"
    )


def mnist_or_digits(
    images_path: str | os.PathLike[str] | None = None,
    labels_path: str | os.PathLike[str] | None = None,
    *,
    split: str = "train",
    root: str | os.PathLike[str] | None = None,
) -> ImageData:
    """MNIST when its files exist (given paths, else ``<data root>/mnist/``), else the digits stand-in.

    Given paths must exist (a missing given file is a DataError, not a fallback); a
    present but malformed file is always a DataError.

    Examples
    --------
    >>> from shuffledp.datasets import mnist_or_digits
    >>> data = mnist_or_digits(root="/nonexistent")
    >>> data.name, data.images.shape
    ('scikit-learn digits 8x8 (substitute for MNIST)', (1797, 8, 8))
    """
    if images_path is not None or labels_path is not None:
        if images_path is None or labels_path is None:
            raise DataError("give both images_path and labels_path (an idx3-ubyte and an idx1-ubyte file), or neither")
        return load_mnist(images_path, labels_path)
    if split not in MNIST_FILES:
        raise DataError(f"split must be 'train' or 'test', got {split!r}")
    try:
        images, labels = mnist_paths(split, root)
    except DataError:  # no data root at all
        return load_digits_substitute()
    if not images.exists() and not labels.exists():
        return load_digits_substitute()
    return load_mnist(images, labels)  # one of the two missing: load_mnist names it
