"""Two groups of locations for the PIC spatial crowdsourcing tasks (§4.1, §7.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shuffledp.errors import DataError


@dataclass(frozen=True)
class SpatialInstance:
    """Users (group G_a, the tasks) and workers (group G_b) with the workers' serving radii.

    Locations are rows of shape-(n, 2) arrays in ``domain``^2 ((-1, 1) once normalised).
    """

    name: str
    users: np.ndarray
    workers: np.ndarray
    worker_radii: np.ndarray
    domain: tuple[float, float]
    source: str

    @property
    def n_users(self) -> int:
        return len(self.users)

    @property
    def n_workers(self) -> int:
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
