"""Real street-address locations: Austin, Texas suburbs (../shared/data/README.md).

``locations/austin_sparse.csv`` holds 88,100 GPS points (``,LATITUDE,LONGITUDE``,
the first column a row index), the data of the metric-privacy shuffler paper
(§6.3) and the stand-in for the PIC paper's check-in data sets (§7.2).
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from shuffledp.datasets._paths import data_root, existing_file
from shuffledp.datasets.transform import bounding_box
from shuffledp.errors import DataError, DomainError, ShapeError

__all__ = ["EARTH_RADIUS_M", "austin_path", "load_austin", "project_to_metres"]

#: Mean Earth radius in metres (IUGG).
EARTH_RADIUS_M = 6_371_008.8


def austin_path(root: str | os.PathLike[str] | None = None) -> Path:
    """Path of the Austin addresses file under the data root (``locations/austin_sparse.csv``).

    Parameters
    ----------
    root : str or os.PathLike or None
        The data root (see `data_root`).

    Returns
    -------
    pathlib.Path
        The file's path (not checked to exist).

    Examples
    --------
    >>> from shuffledp.datasets import austin_path
    >>> austin_path("/data").as_posix()
    '/data/locations/austin_sparse.csv'
    """
    return data_root(root) / "locations" / "austin_sparse.csv"


def load_austin(
    path: str | os.PathLike[str] | None = None, *, root: str | os.PathLike[str] | None = None
) -> np.ndarray:
    """The Austin addresses as an (n, 2) float64 array of (latitude, longitude) in degrees.

    ``path`` is the CSV file (default: ``austin_path(root)``).  A missing file,
    a header without LATITUDE and LONGITUDE columns, or a line with the wrong
    number of fields, a non-number or an impossible coordinate raises DataError
    naming the file and line.

    Parameters
    ----------
    path : str or os.PathLike or None
        The CSV file; default `austin_path` of ``root``.
    root : str or os.PathLike or None
        The data root, when ``path`` is not given.

    Returns
    -------
    numpy.ndarray, shape (n, 2)
        Latitudes in [-90, 90] and longitudes in [-180, 180], in degrees.

    Raises
    ------
    DataError
        For a missing or malformed file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shuffledp.datasets import load_austin
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "austin.csv"
    >>> _ = path.write_text(",LATITUDE,LONGITUDE\\n0,30.0,-97.0\\n1,30.5,-97.5\\n")
    >>> load_austin(path)
    array([[ 30. , -97. ],
           [ 30.5, -97.5]])
    """
    file = existing_file(Path(path) if path is not None else austin_path(root), "Austin addresses file")
    with file.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.reader(handle)
        header = [name.strip().upper() for name in next(reader, [])]
        if "LATITUDE" not in header or "LONGITUDE" not in header:
            raise DataError(f"{file}:1: the header must name LATITUDE and LONGITUDE columns, got {header!r}")
        lat_col, lon_col = header.index("LATITUDE"), header.index("LONGITUDE")
        rows = []
        for fields in reader:
            if not fields:
                continue
            where = f"{file}:{reader.line_num}"
            if len(fields) != len(header):
                raise DataError(
                    f"{where}: expected {len(header)} fields like the header, got {len(fields)}: {fields!r}"
                )
            try:
                lat, lon = float(fields[lat_col]), float(fields[lon_col])
            except ValueError:
                raise DataError(f"{where}: latitude and longitude must be numbers, got {fields!r}") from None
            if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
                raise DataError(f"{where}: ({lat}, {lon}) is not a latitude in [-90, 90] and longitude in [-180, 180]")
            rows.append((lat, lon))
    return np.array(rows, dtype=np.float64).reshape(-1, 2)


def project_to_metres(latlon: Any, origin: tuple[float, float] | None = None) -> np.ndarray:
    """Local equirectangular projection of (latitude, longitude) degrees to (east, north) metres.

    east = R (lon - lon0) cos(lat0), north = R (lat - lat0), angles in radians,
    around ``origin`` = (lat0, lon0) (default: the centre of the bounding box).
    Over a city-sized box (about 1 degree) distances are within about 1% of the
    great-circle distance; it is meant for such boxes, not for continents.

    Parameters
    ----------
    latlon : array_like, shape (n, 2)
        Finite (latitude, longitude) pairs in degrees.
    origin : tuple of float or None
        ``(lat0, lon0)`` with lat0 in (-90, 90) and lon0 in [-180, 180].

    Returns
    -------
    numpy.ndarray, shape (n, 2)
        (east, north) in metres.

    Raises
    ------
    ShapeError
        When ``latlon`` is not (n, 2).
    DomainError
        For non-finite degrees or an invalid origin.

    Examples
    --------
    >>> import math
    >>> from shuffledp.datasets import EARTH_RADIUS_M, project_to_metres
    >>> xy = project_to_metres([[30.0, -97.0], [30.5, -97.0]], origin=(30.0, -97.0))
    >>> float(xy[1, 0]), math.isclose(xy[1, 1], EARTH_RADIUS_M * 0.5 * math.pi / 180)
    (0.0, True)
    """
    X = np.asarray(latlon, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ShapeError(f"latlon must have shape (n, 2) of (latitude, longitude), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise DomainError("latlon must hold finite degrees")
    if origin is None:
        low, high = bounding_box(X)
        origin = tuple((low + high) / 2.0)
    lat0, lon0 = (float(v) for v in origin)
    if not (-90.0 < lat0 < 90.0 and -180.0 <= lon0 <= 180.0):
        raise DomainError(f"origin must be (latitude in (-90, 90), longitude in [-180, 180]), got {origin!r}")
    rad = math.pi / 180.0
    east = EARTH_RADIUS_M * (X[:, 1] - lon0) * rad * math.cos(lat0 * rad)
    north = EARTH_RADIUS_M * (X[:, 0] - lat0) * rad
    return np.column_stack([east, north])
