"""Progress on stderr (rich): `ProgressReporter` and `DelayedStatus`.

They live in `shuffledp._util.progress` (protocols report progress too, and may not import
from ``experiments``, a higher layer); this module keeps the public path working.
"""

from shuffledp._util.progress import DelayedStatus, ProgressReporter

__all__ = ["DelayedStatus", "ProgressReporter"]
