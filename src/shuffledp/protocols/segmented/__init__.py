"""Segmented multi-message shuffle protocol for set-valued data (segmented paper, Algorithm 2).

Step 1 `.levels`, step 2 `.optimizer`, step 3 `.messages` and
`.analyzer`; `run_segmented` runs all three in process.  The accounting lives in
`shuffledp.accounting.segmented`.
"""

from shuffledp.datasets.setvalued import check_item_sets
from shuffledp.protocols.segmented.analyzer import estimate_frequencies
from shuffledp.protocols.segmented.levels import LevelHistogram, aggregate_levels, level_indices
from shuffledp.protocols.segmented.messages import shuffle, user_messages
from shuffledp.protocols.segmented.optimizer import SegmentedParameters, mse_bound, optimize_parameters
from shuffledp.protocols.segmented.protocol import SegmentedRun, run_segmented

__all__ = [
    "LevelHistogram",
    "SegmentedParameters",
    "SegmentedRun",
    "aggregate_levels",
    "check_item_sets",
    "estimate_frequencies",
    "level_indices",
    "mse_bound",
    "optimize_parameters",
    "run_segmented",
    "shuffle",
    "user_messages",
]
