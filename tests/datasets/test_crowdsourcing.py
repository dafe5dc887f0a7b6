"""gMission / EverySender loaders (PIC §7.1, Table 2) on the real files and on generated ones."""

import numpy as np
import pytest

from shuffledp.datasets import DATA_ENV_VAR, crowdsourcing_path, data_root, load_crowdsourcing, read_crowdsourcing_file
from shuffledp.errors import DataError

# Table 2 of the PIC paper (users = tasks, workers) and ../shared/data/README.md.
TABLE2 = {"gmission": (713, 532), "everysender": (4036, 817)}


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_real_instances_match_table2(shared_data, name):
    for instance in range(10):
        inst = load_crowdsourcing(name, instance, root=shared_data)
        assert (inst.n_users, inst.n_workers) == TABLE2[name]
        assert inst.users.shape == (TABLE2[name][0], 2) and inst.workers.shape == (TABLE2[name][1], 2)
        assert inst.domain == (-1.0, 1.0)
        assert np.all(np.abs(inst.users) <= 1.0) and np.all(np.abs(inst.workers) <= 1.0)
        assert inst.serving_radius == pytest.approx(0.4)  # 1.0 * (1 - (-1)) / (5 - 0), §7.1


def test_real_file_first_task_is_normalised_as_in_section_7_1(shared_data):
    # First task line of gMission/data_00.txt: "30495 t 1.984266 4.176206 300 12.2".
    inst = load_crowdsourcing("gMission", 0, root=shared_data)
    np.testing.assert_allclose(inst.users[0], [1.984266 * 0.4 - 1, 4.176206 * 0.4 - 1], rtol=0, atol=1e-12)
    raw = load_crowdsourcing("gmission", 0, root=shared_data, normalize=False)
    np.testing.assert_array_equal(raw.users[0], [1.984266, 4.176206])
    assert raw.serving_radius == 1.0 and raw.domain == (0.0, 5.0)
    np.testing.assert_allclose(inst.workers, raw.workers * 0.4 - 1, rtol=0, atol=1e-12)


def test_default_root_is_found_without_arguments(shared_data, monkeypatch):
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    assert data_root().resolve() == shared_data.resolve()


GOOD = """2 3 20 5
10 t 0.0 5.0 300 12.2
11 w 2.5 2.5 1 1 300 0.787

12 t 5 0 300 1.0
13 w 1.25 3.75 1.000000 1 300 0.5
14 t 2.5 1.0 300 7
"""


def _write(tmp_path, text, name="data_00.txt"):
    path = tmp_path / "spatial_crowdsourcing" / "gMission" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_small_file_is_parsed_in_arrival_order_and_normalised(tmp_path):
    inst = read_crowdsourcing_file(_write(tmp_path, GOOD))
    np.testing.assert_allclose(inst.users, [[-1.0, 1.0], [1.0, -1.0], [0.0, -0.6]])
    np.testing.assert_allclose(inst.workers, [[0.0, 0.0], [-0.5, 0.5]])
    np.testing.assert_allclose(inst.worker_radii, [0.4, 0.4])
    assert inst.source.endswith("data_00.txt")


def test_root_argument_and_environment_variable_select_the_folder(tmp_path, monkeypatch):
    _write(tmp_path, GOOD, "data_03.txt")
    assert load_crowdsourcing("GMISSION", 3, root=tmp_path).n_users == 3
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    assert crowdsourcing_path("gmission", 3) == tmp_path / "spatial_crowdsourcing" / "gMission" / "data_03.txt"
    assert load_crowdsourcing("gmission", 3).n_workers == 2


def test_missing_file_names_the_expected_path(tmp_path):
    expected = tmp_path / "spatial_crowdsourcing" / "EverySender" / "data_07.txt"
    with pytest.raises(DataError, match="expected the file " + str(expected).replace("\\", "\\\\")):
        load_crowdsourcing("everysender", 7, root=tmp_path)


@pytest.mark.parametrize(
    "lineno,bad_line,message",
    [
        (3, "11 w 2.5 2.5 1 1 300", "a 'w' line has 8 fields, got 7"),
        (2, "10 t 0.0 five 300 12.2", "'five' is not a number"),
        (2, "10 x 0.0 5.0 300 12.2", "second field must be 'w'"),
        (2, "10 t 0.0 5.1 300 12.2", r"outside the domain \[0.0, 5.0\]\^2"),
        (2, "10 t nan 1.0 300 12.2", "not a finite number"),
        (3, "11 w 2.5 2.5 0 1 300 0.787", "radius must be > 0"),
        (1, "2 3 20", "the header must be"),
        (1, "2.5 3 20 5", "workerN and taskN must be integers"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, lineno, bad_line, message):
    lines = GOOD.splitlines()
    lines[lineno - 1] = bad_line
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"data_00\.txt:{lineno}: .*{message}"):
        read_crowdsourcing_file(path)


def test_counts_must_match_the_header(tmp_path):
    path = _write(tmp_path, GOOD.replace("2 3 20 5", "2 4 20 5", 1))
    with pytest.raises(
        DataError, match=r"data_00\.txt:1: the header announces 2 workers and 4 tasks, the file holds 2 and 3"
    ):
        read_crowdsourcing_file(path)
    with pytest.raises(DataError, match=r":1: the header must be"):
        read_crowdsourcing_file(_write(tmp_path, ""))


@pytest.mark.parametrize(
    "name,instance,message",
    [("gowalla", 0, "dataset must be one of"), ("gmission", -1, "instance"), ("gmission", 1.5, "instance")],
)
def test_bad_dataset_or_instance(tmp_path, name, instance, message):
    with pytest.raises(DataError, match=message):
        load_crowdsourcing(name, instance, root=tmp_path)


def test_mixed_radii_have_no_single_serving_radius(tmp_path):
    inst = read_crowdsourcing_file(_write(tmp_path, GOOD.replace("1.25 3.75 1.000000", "1.25 3.75 2.0")))
    np.testing.assert_allclose(inst.worker_radii, [0.4, 0.8])
    with pytest.raises(DataError, match="2 different serving radii"):
        _ = inst.serving_radius


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_clear_data_maximum_matching_ratio_is_one_as_in_section_7_1(shared_data, name):
    # §7.1: "For both datasets, the matching ratio over clear data is 100%."
    from shuffledp.tasks import radius_matching, success_ratio

    for instance in (0, 9):
        users, workers = load_crowdsourcing(name, instance, root=shared_data).groups()
        assert success_ratio(radius_matching(users, workers, 0.4), users, workers, 0.4) == 1.0
