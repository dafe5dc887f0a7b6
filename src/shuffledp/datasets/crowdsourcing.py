"""The gMission and EverySender spatial crowdsourcing data sets (PIC §7.1, Table 2).

Files ``spatial_crowdsourcing/{gMission,EverySender}/data_00.txt … data_09.txt``
under the data root (see ``datasets._paths``), in the GOMA benchmark format of
``../shared/data/README.md``:

- line 1: ``workerN taskN Umax sumC``;
- one line per arriving object: a worker ``arrivalTime w x y radius capacity duration pay``
  or a task ``arrivalTime t x y duration reward``.

Tasks are the users (group G_a), workers group G_b.  As §7.1 does, locations
are mapped from [0, 5]^2 to [-1, 1]^2 and the serving radius 1.0 becomes 0.4;
only locations and radii are kept (the paper takes every capacity as one and
matches on locations only, full version Appendix C).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from shuffledp.datasets._paths import data_root, existing_file
from shuffledp.datasets.instance import SpatialInstance
from shuffledp.datasets.transform import scale_length, to_unit_box
from shuffledp.errors import DataError

__all__ = ["CROWDSOURCING_DATASETS", "crowdsourcing_path", "load_crowdsourcing", "read_crowdsourcing_file"]

#: CLI name -> folder name under ``spatial_crowdsourcing/``.
CROWDSOURCING_DATASETS = {"gmission": "gMission", "everysender": "EverySender"}

#: Location domain [0, 5]^2 of both data sets (Table 2).
RAW_DOMAIN = (0.0, 5.0)

_FIELDS = {"w": 8, "t": 6}  # worker and task line lengths


def crowdsourcing_path(name: str, instance: int = 0, root: str | os.PathLike[str] | None = None) -> Path:
    """Path of instance ``instance`` of data set ``name`` ('gmission' or 'everysender', any case).

    Parameters
    ----------
    name : str
        ``"gmission"`` or ``"everysender"`` (any case).
    instance : int, default 0
        File number, >= 0 (the shared data hold 0..9).
    root : str or os.PathLike or None
        The data root (see `data_root`).

    Returns
    -------
    pathlib.Path
        ``root/spatial_crowdsourcing/<folder>/data_<instance>.txt`` (not checked to exist).

    Raises
    ------
    DataError
        For an unknown name or a negative or non-integer instance.

    Examples
    --------
    >>> from shuffledp.datasets import crowdsourcing_path
    >>> crowdsourcing_path("gMission", 3, root="/data").as_posix()
    '/data/spatial_crowdsourcing/gMission/data_03.txt'
    """
    folder = CROWDSOURCING_DATASETS.get(str(name).lower())
    if folder is None:
        raise DataError(f"dataset must be one of {sorted(CROWDSOURCING_DATASETS)}, got {name!r}")
    if isinstance(instance, bool) or not isinstance(instance, (int, np.integer)) or instance < 0:
        raise DataError(f"instance must be an integer >= 0 (the files hold 0..9), got {instance!r}")
    return data_root(root) / "spatial_crowdsourcing" / folder / f"data_{int(instance):02d}.txt"


def load_crowdsourcing(
    name: str, instance: int = 0, root: str | os.PathLike[str] | None = None, *, normalize: bool = True
) -> SpatialInstance:
    """Load one instance of gMission or EverySender (PIC §7.1, Table 2).

    Parameters
    ----------
    name : str
        ``"gmission"`` or ``"everysender"`` (any case).
    instance : int, default 0
        File number, >= 0.
    root : str or os.PathLike or None
        The data root (see `data_root`).
    normalize : bool, default True
        Map locations from [0, 5]^2 to [-1, 1]^2 and radii by 2/5, as §7.1 does.

    Returns
    -------
    SpatialInstance
        Tasks as users (group G_a), workers as group G_b, with their radii.

    Raises
    ------
    DataError
        For an unknown data set, a missing file or a malformed line (see
        `read_crowdsourcing_file`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shuffledp.datasets import crowdsourcing_path, load_crowdsourcing
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> path = crowdsourcing_path("gmission", 0, root=root)
    >>> path.parent.mkdir(parents=True)
    >>> _ = path.write_text("1 2 20 1\\n10 t 0 5 300 1.0\\n11 w 2.5 2.5 1.0 1 300 1.0\\n12 t 5 0 300 2.0\\n")
    >>> inst = load_crowdsourcing("gmission", 0, root=root)
    >>> inst.users, inst.workers, inst.serving_radius
    (array([[-1.,  1.],
           [ 1., -1.]]), array([[0., 0.]]), 0.4)
    """
    path = crowdsourcing_path(name, instance, root)
    return read_crowdsourcing_file(path, normalize=normalize, name=f"{str(name).lower()}[{int(instance)}]")


def _numbers(fields: list[str], where: str) -> list[float]:
    values = []
    for field in fields:
        try:
            value = float(field)
        except ValueError:
            raise DataError(f"{where}: {field!r} is not a number") from None
        if not math.isfinite(value):
            raise DataError(f"{where}: {field!r} is not a finite number")
        values.append(value)
    return values


def read_crowdsourcing_file(
    path: str | os.PathLike[str], *, normalize: bool = True, name: str | None = None
) -> SpatialInstance:
    """Parse one GOMA-format spatial crowdsourcing file (format in the module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    normalize : bool, default True
        Map [0, 5]^2 to [-1, 1]^2 (radii by 2/5).
    name : str or None
        Name of the instance (default: the file's stem).

    Returns
    -------
    SpatialInstance
        The tasks (users) and workers with their serving radii.

    Raises
    ------
    DataError
        For a missing file, a bad header, a line of the wrong kind or length, a
        non-number, a location outside [0, 5]^2, a radius <= 0, or counts that
        disagree with the header; the message names file and line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from shuffledp.datasets import read_crowdsourcing_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "data_00.txt"
    >>> _ = path.write_text("1 1 20 1\\n10 t 0 5 300 1.0\\n11 w 2.5 2.5 1.0 1 300 1.0\\n")
    >>> read_crowdsourcing_file(path, normalize=False).users
    array([[0., 5.]])
    """
    path = existing_file(Path(path), "spatial crowdsourcing file")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    header = lines[0].split() if lines else []
    if len(header) != 4:
        raise DataError(f"{path}:1: the header must be 'workerN taskN Umax sumC', got {lines[0] if lines else ''!r}")
    counts = _numbers(header, f"{path}:1")
    if not all(c >= 0 and c.is_integer() for c in counts[:2]):
        raise DataError(f"{path}:1: workerN and taskN must be integers >= 0, got {header[0]!r} {header[1]!r}")
    objects: dict[str, list[list[float]]] = {"w": [], "t": []}
    lo, hi = RAW_DOMAIN
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split()
        if not fields:
            continue
        where = f"{path}:{lineno}"
        kind = fields[1] if len(fields) > 1 else ""
        if kind not in _FIELDS:
            raise DataError(f"{where}: the second field must be 'w' (worker) or 't' (task), got {line!r}")
        if len(fields) != _FIELDS[kind]:
            raise DataError(f"{where}: a '{kind}' line has {_FIELDS[kind]} fields, got {len(fields)}: {line!r}")
        values = _numbers(fields[:1] + fields[2:], where)
        x, y = values[1], values[2]
        if not (lo <= x <= hi and lo <= y <= hi):
            raise DataError(f"{where}: location ({x}, {y}) lies outside the domain [{lo}, {hi}]^2")
        if kind == "w" and not values[3] > 0:
            raise DataError(f"{where}: a worker's radius must be > 0, got {fields[4]!r}")
        objects[kind].append(values[1:4] if kind == "w" else values[1:3])
    n_workers, n_tasks = int(counts[0]), int(counts[1])
    if (len(objects["w"]), len(objects["t"])) != (n_workers, n_tasks):
        raise DataError(
            f"{path}:1: the header announces {n_workers} workers and {n_tasks} tasks, "
            f"the file holds {len(objects['w'])} and {len(objects['t'])}"
        )
    workers = np.array(objects["w"], dtype=np.float64).reshape(-1, 3)
    users = np.array(objects["t"], dtype=np.float64).reshape(-1, 2)
    radii = workers[:, 2]
    domain = RAW_DOMAIN
    if normalize:
        users = to_unit_box(users, lo, hi, name="tasks")
        radii = scale_length(radii, lo, hi)
        workers[:, :2] = to_unit_box(workers[:, :2], lo, hi, name="workers")
        domain = (-1.0, 1.0)
    return SpatialInstance(
        name=name or path.stem,
        users=users,
        workers=np.ascontiguousarray(workers[:, :2]),
        worker_radii=np.asarray(radii, dtype=np.float64),
        domain=domain,
        source=str(path),
    )
