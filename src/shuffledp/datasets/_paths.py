"""Where the real data sets live (DESIGN.md "Data"; ../shared/data/README.md).

The default is ``../shared/data`` relative to the project root.  Resolution
order: an explicit ``root`` argument, then the ``SHUFFLEDP_DATA`` environment
variable, then the first ``shared/data`` folder found walking up from the
current directory and from this package.
"""

from __future__ import annotations

import os
from pathlib import Path

from shuffledp.errors import DataError

#: Environment variable naming the data root (the folder holding ``spatial_crowdsourcing/``).
DATA_ENV_VAR = "SHUFFLEDP_DATA"


def data_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The data root: ``root`` if given, else ``$SHUFFLEDP_DATA``, else the nearest ``shared/data`` above.

    Parameters
    ----------
    root : str or os.PathLike or None, default None
        An explicit data root (``~`` is expanded); it need not exist yet.

    Returns
    -------
    pathlib.Path
        The folder holding ``spatial_crowdsourcing/`` and ``locations/``.

    Raises
    ------
    DataError
        When no root is given, the variable is unset and no ``shared/data`` folder
        lies above the current directory or the package.

    Examples
    --------
    >>> from shuffledp.datasets import data_root
    >>> data_root("/srv/data").as_posix()
    '/srv/data'
    """
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser()
    starts = (Path.cwd().resolve(), Path(__file__).resolve().parent)
    for start in starts:
        for folder in (start, *start.parents):
            candidate = folder / "shared" / "data"
            if candidate.is_dir():
                return candidate
    raise DataError(
        f"no shared/data folder found above {starts[0]} or {starts[1]} (expected e.g. "
        f"{starts[0].parent / 'shared' / 'data'}); set {DATA_ENV_VAR} or pass root= / a file path"
    )


def existing_file(path: Path, what: str) -> Path:
    """``path`` if it is a file, else DataError naming the expected path."""
    if not path.is_file():
        raise DataError(f"{what} not found: expected the file {path}")
    return path
