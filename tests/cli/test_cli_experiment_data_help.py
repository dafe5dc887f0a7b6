"""``experiment run --help`` says where the experiments look for the user's own data files, by the loaders' names."""

from __future__ import annotations

from typer.testing import CliRunner

from shuffledp.cli import app
from shuffledp.datasets import DATA_ENV_VAR
from shuffledp.datasets.mnist import MNIST_FILES
from shuffledp.datasets.setvalued import msnbc_path
from shuffledp.experiments.pic_social import CHECKIN_FILES


def test_experiment_run_help_names_every_user_data_file_the_experiments_read():
    result = CliRunner().invoke(app, ["experiment", "run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    checkins = [f"<root>/checkins/{files[0]}" for _, files, *_ in CHECKIN_FILES]
    mnist = [f"<root>/mnist/{MNIST_FILES['train'][0]}", MNIST_FILES["train"][1]]
    msnbc = "<root>/" + msnbc_path("/").relative_to("/").as_posix()
    for fragment in [f"${DATA_ENV_VAR}", "shared/data", *checkins, *mnist, msnbc, "substitutes"]:
        assert fragment in text, fragment
