"""Two groups of locations for the PIC spatial crowdsourcing tasks (§4.1, §7.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shuffledp.errors import DataError

__all__ = ["SpatialInstance"]


@dataclass(frozen=True)
class SpatialInstance:
    """Users (group G_a, the tasks) and workers (group G_b) with the workers' serving radii.

    Locations are rows of shape-(n, 2) arrays in ``domain``^2 ((-1, 1) once normalised).

    Attributes
    ----------
    name : str
        Name of the instance (e.g. ``"gmission[0]"``).
    users : numpy.ndarray, shape (n_users, 2)
        The users' (tasks') locations, group G_a.
    workers : numpy.ndarray, shape (n_workers, 2)
        The workers' locations, group G_b.
    worker_radii : numpy.ndarray, shape (n_workers,)
        Each worker's serving radius, in the units of the locations.
    domain : tuple of float
        ``(low, high)``: locations lie in [low, high]^2.
    source : str
        Where the data came from (a path or a description).

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.datasets import synthetic_instance
    >>> inst = synthetic_instance(5, 3, np.random.default_rng(0))
    >>> inst.n_users, inst.n_workers, inst.serving_radius
    (5, 3, 0.4)
    """

    name: str
    users: np.ndarray
    workers: np.ndarray
    worker_radii: np.ndarray
    domain: tuple[float, float]
    source: str

    @property
    def n_users(self) -> int:
        """Number of users (tasks), group G_a."""
        return len(self.users)

    @property
    def n_workers(self) -> int:
        """Number of workers, group G_b."""
        return len(self.workers)

    @property
    def serving_radius(self) -> float:
        """The workers' common serving radius (all workers of both real data sets share one)."""
        radii = np.unique(self.worker_radii)
        if radii.size != 1:
            raise DataError(
                f"{self.name}: workers have {radii.size} different serving radii "
                f"({radii.min() if radii.size else 'none'} to {radii.max() if radii.size else 'none'}); "
                "use worker_radii"
            )
        return float(radii[0])

    def groups(self) -> tuple[np.ndarray, np.ndarray]:
        """``(users, workers)``: group 0 (G_a) and group 1 (G_b) of the PIC round."""
        return self.users, self.workers
