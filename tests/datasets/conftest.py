"""The real data folder (../shared/data), or a skip saying why it is absent."""

import pytest

from shuffledp.datasets import data_root
from shuffledp.errors import DataError


@pytest.fixture(scope="session")
def shared_data():
    try:
        root = data_root()
    except DataError as err:
        pytest.skip(f"real data folder absent: {err}")
    if not (root / "spatial_crowdsourcing").is_dir():
        pytest.skip(f"real data folder absent: {root / 'spatial_crowdsourcing'} does not exist")
    return root
