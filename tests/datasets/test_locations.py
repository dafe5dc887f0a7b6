"""Austin addresses loader, projection to metres and normalisation to [-1,1]^2."""

import math

import numpy as np
import pytest

from shuffledp.datasets import austin_path, bounding_box, load_austin, project_to_metres, scale_length, to_unit_box
from shuffledp.errors import DataError, DomainError, ShapeError


def test_real_austin_file(shared_data):
    X = load_austin(root=shared_data)
    assert X.shape == (88_100, 2)  # ../shared/data/README.md
    # Austin suburbs: about 30.3 N, 97.7 W.
    assert np.all((X[:, 0] > 29.5) & (X[:, 0] < 31.5) & (X[:, 1] > -98.5) & (X[:, 1] < -97))
    np.testing.assert_array_equal(X[0], [30.39988, -97.38191])  # first data line "0,30.39988,-97.38191"
    U = to_unit_box(X, *bounding_box(X))
    assert U.min() == -1.0 and U.max() == 1.0


def _csv(tmp_path, body):
    path = tmp_path / "austin.csv"
    path.write_text(body)
    return path


def test_small_csv(tmp_path):
    X = load_austin(_csv(tmp_path, ",LATITUDE,LONGITUDE\n0,30.5,-97.5\n1,30.25,-97.75\n"))
    np.testing.assert_array_equal(X, [[30.5, -97.5], [30.25, -97.75]])
    swapped = load_austin(_csv(tmp_path, "longitude,latitude\n-97.5,30.5\n"))
    np.testing.assert_array_equal(swapped, [[30.5, -97.5]])


@pytest.mark.parametrize(
    "body,where,message",
    [
        (",LATITUDE,LONGITUDE\n0,30.5,-97.5\n1,30.25\n", ":3", "expected 3 fields"),
        (",LATITUDE,LONGITUDE\n0,30.5,-97.5\n1,abc,-97.0\n", ":3", "must be numbers"),
        (",LATITUDE,LONGITUDE\n0,95.0,-97.5\n", ":2", "not a latitude in"),
        (",LAT,LON\n0,30.5,-97.5\n", ":1", "LATITUDE and LONGITUDE"),
        ("", ":1", "LATITUDE and LONGITUDE"),
    ],
)
def test_malformed_csv_names_file_and_line(tmp_path, body, where, message):
    with pytest.raises(DataError, match=rf"austin\.csv{where}: .*{message}"):
        load_austin(_csv(tmp_path, body))


def test_missing_file_names_the_expected_path(tmp_path):
    with pytest.raises(DataError, match=r"expected the file .*locations.austin_sparse\.csv"):
        load_austin(root=tmp_path)
    assert austin_path(tmp_path) == tmp_path / "locations" / "austin_sparse.csv"


def _haversine(p, q):
    lat1, lon1, lat2, lon2 = map(math.radians, (*p, *q))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6_371_008.8 * math.asin(math.sqrt(h))


def test_projection_to_metres():
    # One degree of latitude is R * pi / 180 metres; one of longitude at 60 N half of it.
    P = project_to_metres([[0.0, 0.0], [1.0, 0.0]], origin=(0.0, 0.0))
    assert P[1, 1] - P[0, 1] == pytest.approx(6_371_008.8 * math.pi / 180)
    Q = project_to_metres([[60.0, 10.0], [60.0, 11.0]], origin=(60.0, 10.0))
    assert Q[1, 0] == pytest.approx(6_371_008.8 * math.pi / 180 / 2) and Q[1, 1] == 0.0
    # Across an Austin-sized box the planar distance is within 1% of the great-circle one.
    rng = np.random.default_rng(1)
    pts = np.column_stack([rng.uniform(29.9, 30.95, 50), rng.uniform(-98.27, -97.38, 50)])
    M = project_to_metres(pts)
    for i, j in rng.integers(50, size=(40, 2)):
        if i != j:
            assert np.linalg.norm(M[i] - M[j]) == pytest.approx(_haversine(pts[i], pts[j]), rel=0.01)
    with pytest.raises(ShapeError, match="latlon"):
        project_to_metres(np.zeros((3, 3)))


def test_unit_box_normalisation():
    U = to_unit_box([[0.0, 10.0], [5.0, 20.0], [2.5, 15.0]], low=[0.0, 10.0], high=[5.0, 20.0])
    np.testing.assert_array_equal(U, [[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(DomainError, match=r"points\[1\].*outside the box"):
        to_unit_box([[1.0, 1.0], [6.0, 1.0]], 0.0, 5.0)
    with pytest.raises(DomainError, match="low < high"):
        to_unit_box([[1.0, 1.0]], 5.0, 0.0)
    assert scale_length(1.0, 0.0, 5.0) == pytest.approx(0.4)
    with pytest.raises(ShapeError):
        bounding_box(np.zeros((0, 2)))
