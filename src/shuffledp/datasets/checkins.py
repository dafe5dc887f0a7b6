"""Check-in data of location-based social networks (PIC §7.2, Table 3; full version Appendix D).

Two public formats, read when a user has the files (they are not in ``../shared/data``):

- **Gowalla** (SNAP ``loc-gowalla_totalCheckins.txt``, optionally gzipped): one
  check-in per line, five tab-separated fields
  ``user<TAB>check-in time<TAB>latitude<TAB>longitude<TAB>location id``, e.g.
  ``0	2010-10-19T23:55:27Z	30.2359091167	-97.7951395833	22847``.
- **Foursquare** TSMC2014 (Yang et al., ``dataset_TSMC2014_NYC.txt`` / ``_TKY.txt``):
  eight tab-separated fields ``user id, venue id, venue category id, venue category
  name, latitude, longitude, timezone offset (minutes), UTC time``, e.g.
  ``470	49bbd6c0f964a520f4531fe3	4bf58dd8d48988d127951735	Arts & Crafts Store	40.7198	-74.0026	-240	Tue Apr 03 18:00:09 +0000 2012``.
  A first line naming the columns (the CSV re-publication's ``userId,venueId,...``
  header, tab-separated here) is skipped.

Each reader returns a `CheckIns` (latitude/longitude per check-in, the user of
each, the source) and, with ``box``, keeps only the check-ins inside a
latitude/longitude rectangle: §7.2 uses Gowalla in San Francisco (`GOWALLA_SF_BOX`)
and Foursquare in New York (`FOURSQUARE_NYC_BOX`).  Malformed input raises
DataError naming the file, the line, the field, the text found and what is
allowed; nothing is skipped silently.

When the files are absent the PIC experiments use `austin_checkins`: the Austin
street addresses of ``../shared/data/locations`` as one check-in each, named
`AUSTIN_SUBSTITUTE_NAME` in every output.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shuffledp.datasets._paths import existing_file
from shuffledp.datasets.locations import austin_path, load_austin
from shuffledp.datasets.transform import bounding_box, to_unit_box
from shuffledp.errors import DataError

__all__ = [
    "AUSTIN_SUBSTITUTE_NAME",
    "CheckIns",
    "FOURSQUARE_NYC_BOX",
    "GOWALLA_SF_BOX",
    "austin_checkins",
    "read_foursquare",
    "read_gowalla",
]

#: Table 3 location domains: (lat_min, lat_max, lon_min, lon_max).
GOWALLA_SF_BOX = (37.54, 37.79, -122.51, -122.38)
FOURSQUARE_NYC_BOX = (40.55, 40.99, -74.27, -73.68)
#: Name of the stand-in data in every output of an experiment that falls back to it.
AUSTIN_SUBSTITUTE_NAME = "Austin addresses (substitute for Gowalla/Foursquare check-ins)"


@dataclass(frozen=True)
class CheckIns:
    """Check-ins: one location per row, with the user who checked in.

    Attributes
    ----------
    name : str
        What the data are (e.g. ``"gowalla"`` or `AUSTIN_SUBSTITUTE_NAME`).
    latlon : numpy.ndarray, shape (n, 2)
        (latitude, longitude) in degrees.
    users : numpy.ndarray of str, shape (n,)
        The user id of each check-in, as written in the file.
    source : str
        The file read.

    Examples
    --------
    >>> import numpy as np
    >>> c = CheckIns("demo", np.array([[37.6, -122.4], [37.7, -122.5]]), np.array(["1", "2"]), "memory")
    >>> len(c), c.unit_box().tolist()
    (2, [[1.0, -1.0], [-1.0, 1.0]])
    """

    name: str
    latlon: np.ndarray
    users: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.latlon)

    def unit_box(self, box: tuple[float, float, float, float] | None = None) -> np.ndarray:
        """The locations mapped to [-1,1]^2 as §7.2 does, x from longitude and y from latitude.

        ``box`` = (lat_min, lat_max, lon_min, lon_max) (default: the data's bounding box).
        """
        if box is None:
            (lat_lo, lon_lo), (lat_hi, lon_hi) = bounding_box(self.latlon)
        else:
            lat_lo, lat_hi, lon_lo, lon_hi = box
        xy = self.latlon[:, ::-1]
        return to_unit_box(xy, [lon_lo, lat_lo], [lon_hi, lat_hi], name=f"{self.name} check-ins")


def _open_text(path: Path) -> list[str]:
    with path.open("rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    try:
        raw = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: cannot read the {'gzip ' if gz else ''}file ({exc})") from None
    return raw.decode("utf-8", errors="replace").splitlines()


def _check_box(box: tuple[float, float, float, float] | None) -> None:
    if box is None:
        return
    try:
        lat_lo, lat_hi, lon_lo, lon_hi = (float(b) for b in box)
    except (TypeError, ValueError):
        raise DataError(f"box must be (lat_min, lat_max, lon_min, lon_max), got {box!r}") from None
    if not (-90 <= lat_lo < lat_hi <= 90 and -180 <= lon_lo < lon_hi <= 180):
        raise DataError(
            f"box must be (lat_min, lat_max, lon_min, lon_max) with min < max inside [-90, 90] x [-180, 180], got {box!r}"
        )


def _parse(
    path: Path, name: str, n_fields: int, layout: str, user_col: int, lat_col: int, lon_col: int,
    header: str | None, box: tuple[float, float, float, float] | None,
) -> CheckIns:  # fmt: skip
    _check_box(box)
    lines = _open_text(path)
    start = 1 if lines and header is not None and lines[0].split("\t")[0].strip().lower() == header else 0
    users, lats, lons = [], [], []
    for lineno, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != n_fields:
            raise DataError(
                f"{path}:{lineno}: a {name} line has {n_fields} tab-separated fields ({layout}), "
                f"got {len(fields)}: {line[:120]!r}"
            )
        users.append(fields[user_col].strip())
        lats.append(fields[lat_col])
        lons.append(fields[lon_col])
    if not lats:
        raise DataError(
            f"{path}: no {name} check-in in the file ({len(lines)} line(s), none a check-in); expected one "
            f"check-in per line: {n_fields} tab-separated fields ({layout})"
        )
    latlon = np.empty((len(lats), 2))
    for col, (values, label, limit, index) in enumerate(
        ((lats, "latitude", 90.0, lat_col), (lons, "longitude", 180.0, lon_col))
    ):
        try:
            latlon[:, col] = np.array(values, dtype=np.float64) if values else []
            bad = ~(np.abs(latlon[:, col]) <= limit)  # also NaN
        except ValueError:  # some field is not a number: find the first one
            bad = None
        if bad is None or bad.any():
            for k, text in enumerate(values):
                try:
                    value = float(text)
                except ValueError:
                    value = float("nan")
                if not abs(value) <= limit:
                    lineno = _line_of(lines, start, k)
                    raise DataError(
                        f"{path}:{lineno}: field {index + 1} ({label}) is {text.strip()!r}; "
                        f"allowed: a number in [-{limit:g}, {limit:g}]"
                    )
    if box is not None:
        lat_lo, lat_hi, lon_lo, lon_hi = box
        keep = (latlon[:, 0] >= lat_lo) & (latlon[:, 0] <= lat_hi) & (latlon[:, 1] >= lon_lo) & (latlon[:, 1] <= lon_hi)
        latlon = latlon[keep]
        users = [u for u, k in zip(users, keep, strict=True) if k]
    return CheckIns(name, latlon, np.array(users, dtype=str), str(path))


def _line_of(lines: list[str], start: int, k: int) -> int:
    """1-based line number of the k-th non-blank data line."""
    seen = -1
    for lineno, line in enumerate(lines[start:], start=start + 1):
        if line.strip():
            seen += 1
            if seen == k:
                return lineno
    return len(lines)


def read_gowalla(path: str | os.PathLike[str], *, box: tuple[float, float, float, float] | None = None) -> CheckIns:
    """Read a Gowalla check-in file (SNAP ``loc-gowalla_totalCheckins.txt``, plain or gzipped).

    Parameters
    ----------
    path : str or os.PathLike
        The file: ``user<TAB>check-in time<TAB>latitude<TAB>longitude<TAB>location id`` per line.
    box : tuple of float or None
        Keep only check-ins with (latitude, longitude) in (lat_min, lat_max, lon_min, lon_max),
        e.g. `GOWALLA_SF_BOX` (§7.2, Table 3).

    Returns
    -------
    CheckIns
        Named ``"gowalla"``.

    Raises
    ------
    DataError
        For a missing or empty file, a line without five tab-separated fields, a latitude outside
        [-90, 90] or a longitude outside [-180, 180] (or not a number), naming file and line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shuffledp.datasets import read_gowalla
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gowalla.txt"
    >>> _ = path.write_text("0\\t2010-10-19T23:55:27Z\\t37.6\\t-122.4\\t22847\\n1\\t2010-10-18T22:17:43Z\\t30.3\\t-97.7\\t420315\\n")
    >>> read_gowalla(path, box=(37.54, 37.79, -122.51, -122.38)).latlon
    array([[  37.6, -122.4]])
    """
    file = existing_file(Path(path), "Gowalla check-in file")
    return _parse(file, "gowalla", 5, "user, check-in time, latitude, longitude, location id", 0, 2, 3, None, box)


def read_foursquare(path: str | os.PathLike[str], *, box: tuple[float, float, float, float] | None = None) -> CheckIns:
    """Read a Foursquare TSMC2014 check-in file (``dataset_TSMC2014_NYC.txt`` or ``_TKY.txt``).

    Parameters
    ----------
    path : str or os.PathLike
        The file: eight tab-separated fields per line (module docstring); an optional
        first line of column names starting ``userId`` is skipped.
    box : tuple of float or None
        Keep only check-ins inside (lat_min, lat_max, lon_min, lon_max), e.g.
        `FOURSQUARE_NYC_BOX` (§7.2, Table 3).

    Returns
    -------
    CheckIns
        Named ``"foursquare"``.

    Raises
    ------
    DataError
        For a missing or empty file, a line without eight tab-separated fields, or a latitude
        or longitude that is not a number in range, naming file and line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shuffledp.datasets import read_foursquare
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "nyc.txt"
    >>> line = "470\\t49bb\\t4bf5\\tArts & Crafts Store\\t40.72\\t-74.00\\t-240\\tTue Apr 03 18:00:09 +0000 2012\\n"
    >>> _ = path.write_text(line)
    >>> read_foursquare(path).latlon
    array([[ 40.72, -74.  ]])
    """
    file = existing_file(Path(path), "Foursquare TSMC2014 check-in file")
    layout = "user id, venue id, venue category id, venue category name, latitude, longitude, timezone offset, UTC time"
    return _parse(file, "foursquare", 8, layout, 0, 4, 5, "userid", box)


def austin_checkins(
    path: str | os.PathLike[str] | None = None, *, root: str | os.PathLike[str] | None = None
) -> CheckIns:
    """The stand-in for the check-in data sets: each Austin address as one check-in of its own user.

    Parameters
    ----------
    path, root : optional
        As `load_austin` (default ``<data root>/locations/austin_sparse.csv``).

    Returns
    -------
    CheckIns
        Named `AUSTIN_SUBSTITUTE_NAME`; users are the row numbers; ``source`` is the file read.

    Raises
    ------
    DataError
        For a missing or malformed file (`load_austin`).
    """
    latlon = load_austin(path, root=root)
    source = str(Path(path) if path is not None else austin_path(root))
    return CheckIns(AUSTIN_SUBSTITUTE_NAME, latlon, np.arange(len(latlon)).astype(str), source)
