"""Data set loaders (../shared/data or a user path) and synthetic generators; no knowledge of DP."""

from shuffledp.datasets._paths import DATA_ENV_VAR, data_root
from shuffledp.datasets.checkins import (
    AUSTIN_SUBSTITUTE_NAME,
    FOURSQUARE_NYC_BOX,
    GOWALLA_SF_BOX,
    CheckIns,
    austin_checkins,
    read_foursquare,
    read_gowalla,
)
from shuffledp.datasets.crowdsourcing import (
    CROWDSOURCING_DATASETS,
    crowdsourcing_path,
    load_crowdsourcing,
    read_crowdsourcing_file,
)
from shuffledp.datasets.instance import SpatialInstance
from shuffledp.datasets.locations import EARTH_RADIUS_M, austin_path, load_austin, project_to_metres
from shuffledp.datasets.mnist import (
    DIGITS_SUBSTITUTE_NAME,
    ImageData,
    load_digits_substitute,
    load_mnist,
    mnist_or_digits,
    mnist_paths,
    read_idx,
)
from shuffledp.datasets.setvalued import (
    MSNBC_CATEGORIES,
    MSNBC_LIKE_NAME,
    MSNBCData,
    fix_set_size,
    item_frequencies,
    load_msnbc,
    msnbc_like_sets,
    msnbc_path,
    read_msnbc,
    uniform_item_sets,
)
from shuffledp.datasets.synthetic import clustered_points, synthetic_instance, uniform_points
from shuffledp.datasets.transform import bounding_box, scale_length, to_unit_box

__all__ = [
    "AUSTIN_SUBSTITUTE_NAME",
    "CheckIns",
    "DIGITS_SUBSTITUTE_NAME",
    "FOURSQUARE_NYC_BOX",
    "GOWALLA_SF_BOX",
    "ImageData",
    "austin_checkins",
    "load_digits_substitute",
    "load_mnist",
    "mnist_or_digits",
    "mnist_paths",
    "read_foursquare",
    "read_gowalla",
    "read_idx",
    "MSNBC_CATEGORIES",
    "MSNBC_LIKE_NAME",
    "MSNBCData",
    "fix_set_size",
    "item_frequencies",
    "load_msnbc",
    "msnbc_like_sets",
    "msnbc_path",
    "read_msnbc",
    "uniform_item_sets",
    "CROWDSOURCING_DATASETS",
    "DATA_ENV_VAR",
    "EARTH_RADIUS_M",
    "SpatialInstance",
    "austin_path",
    "bounding_box",
    "clustered_points",
    "crowdsourcing_path",
    "data_root",
    "load_austin",
    "load_crowdsourcing",
    "project_to_metres",
    "read_crowdsourcing_file",
    "scale_length",
    "synthetic_instance",
    "to_unit_box",
    "uniform_points",
]
