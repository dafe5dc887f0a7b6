"""``shuffledp metric epsilon`` and ``shuffledp metric local-epsilon``: JSON results and one-line errors."""

from __future__ import annotations

import json
import math
import re

import pytest
from typer.testing import CliRunner

from shuffledp.accounting import metric as M
from shuffledp.cli import app

runner = CliRunner()


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, ["metric", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_geo_shuffle_epsilon_json():
    out = _json(["epsilon", "--mechanism", "geo-shuffle", "--n", "300", "--delta", "1e-4", "--eps-geo", "0.5"])
    assert out["epsilon"] == 0.5  # certified without --k: values unbounded, no amplification certified
    assert out["epsilon_theorem_4_1"] == M.geo_shuffle_epsilon(0.5, 1e-4, 300, method="theorem-4.1")
    assert out["c"] == M.geo_shuffle_c(0.5, 1e-4, 300) and out["local_epsilon"] == 0.5
    assert out["inputs"]["mechanism"] == "geo-shuffle" and out["inputs"]["n"] == 300
    assert "variation_ratio_epsilon" not in out
    with_k = _json(["epsilon", "--mechanism", "geo-shuffle", "--n", "300", "--delta", "1e-4", "--eps-geo", "0.5", "--k", "2",
                    "--method", "theorem-4.1"])
    assert with_k["variation_ratio_epsilon"] == M.geo_shuffle_variation_ratio_epsilon(0.5, 1e-4, 300, 2)
    assert with_k["epsilon"] == with_k["epsilon_theorem_4_1"] == out["epsilon_theorem_4_1"]
    small = _json(["epsilon", "--mechanism", "geo-shuffle", "--n", "20", "--delta", "1e-4", "--eps-geo", "1", "--k", "3"])
    assert small["epsilon"] == M.geo_shuffle_epsilon(1.0, 1e-4, 20, 3) < 1.0


def test_rr_and_sgdl_epsilon_json():
    rr = _json(["epsilon", "--mechanism", "rr-shuffle", "--n", "1e2", "--delta", "1e-4", "--p", "0.5", "--k", "1000"])
    assert rr["epsilon"] == M.rr_shuffle_epsilon(1e-4, 0.5, 1000, 100) == math.log(3.0)  # certified: beyond the search
    assert rr["epsilon_theorem_3_1"] == M.rr_shuffle_epsilon(1e-4, 0.5, 1000, 100, method="theorem-3.1")
    assert rr["lambda"] == 50_000 and rr["inputs"]["method"] == "certified"
    paper = _json(["epsilon", "--mechanism", "rr-shuffle", "--n", "100", "--delta", "1e-4", "--p", "0.5", "--k", "1000",
                   "--method", "theorem-3.1"])
    assert paper["epsilon"] == rr["epsilon_theorem_3_1"]
    small = _json(["epsilon", "--mechanism", "rr-shuffle", "--n", "10", "--delta", "1e-4", "--p", "0.5", "--k", "1"])
    assert small["epsilon"] < math.log(3.0) and small["epsilon_theorem_3_1"] is None
    assert "use n >= 297" in small["epsilon_theorem_3_1_reason"]
    sg = _json(["epsilon", "--mechanism", "sgdl-shuffle", "--n", "100", "--delta", "1e-4", "--eps", "0.1"])
    assert sg["epsilon"] == sg["report_epsilon"] == M.sgdl_shuffle_report_epsilon(0.1, 100)  # no --k: unbounded values
    assert sg["epsilon_theorem_5_1"] == 0.1 and sg["c"] == M.sgdl_shuffle_c(0.1, 1e-4, 100) and sg["c_paper"] < sg["c"]
    sg_k = _json(["epsilon", "--mechanism", "sgdl-shuffle", "--n", "10", "--delta", "1e-4", "--eps", "1", "--k", "4"])
    assert sg_k["epsilon"] == M.sgdl_shuffle_epsilon(1.0, 1e-4, 10, 4) < sg_k["report_epsilon"]


def test_local_epsilon_round_trip_json():
    out = _json(["local-epsilon", "--target", "0.1", "--n", "100", "--delta", "1e-4", "--method", "theorem-4.1"])
    assert out["achieved_epsilon"] <= 0.1 and out["achieved_epsilon"] == pytest.approx(0.1, rel=1e-5)
    assert out["eps_geo"] == M.geo_shuffle_local_epsilon(0.1, 1e-4, 100, method="theorem-4.1")
    safe = _json(["local-epsilon", "--target", "0.8", "--n", "20", "--delta", "1e-4", "--k", "3"])
    assert safe["achieved_epsilon"] <= 0.8 < safe["eps_geo"] == M.geo_shuffle_local_epsilon(0.8, 1e-4, 20, 3)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["epsilon", "--mechanism", "rr-shuffle", "--n", "10", "--delta", "1e-4", "--p", "0.5", "--k", "1", "--method", "theorem-3.1"],
         "--n: .*use n >= 297"),
        (["epsilon", "--mechanism", "geo-shuffle", "--n", "10", "--delta", "1e-4"], "--eps-geo is required"),
        (["epsilon", "--mechanism", "sgdl-shuffle", "--n", "10", "--delta", "1e-4", "--eps", "1", "--p", "0.5"], "--p does not apply"),
        (["epsilon", "--mechanism", "laplace", "--n", "10", "--delta", "1e-4"], "--mechanism: unknown mechanism"),
        (["epsilon", "--mechanism", "sgdl-shuffle", "--n", "10", "--delta", "1e-4", "--eps", "1", "--method", "theorem-4.1"],
         "--method theorem-4.1 does not apply to --mechanism sgdl-shuffle"),
        (["local-epsilon", "--target", "0.1", "--n", "10", "--delta", "1e-4", "--method", "thm"], "--method: unknown method"),
        (["epsilon", "--mechanism", "rr-shuffle", "--n", "10", "--delta", "1e-4", "--p", "1.5", "--k", "3"], "--p must lie in"),
        (["local-epsilon", "--target", "0", "--n", "10", "--delta", "1e-4"], "--target must be"),
        (["local-epsilon", "--target", "0.1", "--n", "10", "--delta", "1"], "--delta must lie in"),
    ],
)
def test_errors_are_one_line_with_status_2(args, needle):
    result = runner.invoke(app, ["metric", *args])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and re.search(needle, lines[0]), result.stderr
