"""``shuffledp metric epsilon`` and ``shuffledp metric local-epsilon``: JSON results and one-line errors."""

from __future__ import annotations

import json
import math
import re

import pytest
from typer.testing import CliRunner

from shuffledp.accounting import metric as M
from shuffledp.accounting._rounding import SGDL_EPSILON_MIN
from shuffledp.cli import app
from shuffledp.errors import PrivacyParameterError

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
    with_k = _json(
        [
            "epsilon",
            "--mechanism",
            "geo-shuffle",
            "--n",
            "300",
            "--delta",
            "1e-4",
            "--eps-geo",
            "0.5",
            "--k",
            "2",
            "--method",
            "theorem-4.1",
        ]
    )
    assert with_k["variation_ratio_epsilon"] == M.geo_shuffle_variation_ratio_epsilon(0.5, 1e-4, 300, 2)
    assert with_k["epsilon"] == with_k["epsilon_theorem_4_1"] == out["epsilon_theorem_4_1"]
    small = _json(
        ["epsilon", "--mechanism", "geo-shuffle", "--n", "20", "--delta", "1e-4", "--eps-geo", "1", "--k", "3"]
    )
    assert small["epsilon"] == M.geo_shuffle_epsilon(1.0, 1e-4, 20, 3) < 1.0


def test_rr_and_sgdl_epsilon_json():
    rr = _json(["epsilon", "--mechanism", "rr-shuffle", "--n", "1e2", "--delta", "1e-4", "--p", "0.5", "--k", "1000"])
    assert (
        rr["epsilon"] == M.rr_shuffle_epsilon(1e-4, 0.5, 1000, 100) == pytest.approx(0.5605, abs=1e-4)
    )  # all-0 vs all-k
    assert rr["epsilon_theorem_3_1"] == M.rr_shuffle_epsilon(1e-4, 0.5, 1000, 100, method="theorem-3.1")
    assert rr["lambda"] == 50_000 and rr["inputs"]["method"] == "certified"
    paper = _json(
        [
            "epsilon",
            "--mechanism",
            "rr-shuffle",
            "--n",
            "100",
            "--delta",
            "1e-4",
            "--p",
            "0.5",
            "--k",
            "1000",
            "--method",
            "theorem-3.1",
        ]
    )
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
        (
            [
                "epsilon",
                "--mechanism",
                "rr-shuffle",
                "--n",
                "10",
                "--delta",
                "1e-4",
                "--p",
                "0.5",
                "--k",
                "1",
                "--method",
                "theorem-3.1",
            ],
            "--n: .*use n >= 297",
        ),
        (["epsilon", "--mechanism", "geo-shuffle", "--n", "10", "--delta", "1e-4"], "--eps-geo is required"),
        (
            ["epsilon", "--mechanism", "sgdl-shuffle", "--n", "10", "--delta", "1e-4", "--eps", "1", "--p", "0.5"],
            "--p does not apply",
        ),
        (["epsilon", "--mechanism", "laplace", "--n", "10", "--delta", "1e-4"], "--mechanism: unknown mechanism"),
        (
            [
                "epsilon",
                "--mechanism",
                "sgdl-shuffle",
                "--n",
                "10",
                "--delta",
                "1e-4",
                "--eps",
                "1",
                "--method",
                "theorem-4.1",
            ],
            "--method theorem-4.1 does not apply to --mechanism sgdl-shuffle",
        ),
        (
            ["local-epsilon", "--target", "0.1", "--n", "10", "--delta", "1e-4", "--method", "thm"],
            "--method: unknown method",
        ),
        (
            ["epsilon", "--mechanism", "rr-shuffle", "--n", "10", "--delta", "1e-4", "--p", "1.5", "--k", "3"],
            r"--p must be a number in \[1e-300, 1\); got '1.5'",
        ),
        (["local-epsilon", "--target", "0", "--n", "10", "--delta", "1e-4"], "--target must be"),
        (
            ["local-epsilon", "--target", "0.1", "--n", "10", "--delta", "1"],
            r"--delta must be a number in \[1e-300, 1\); got '1'",
        ),
    ],
)
def test_errors_are_one_line_with_status_2(args, needle):
    result = runner.invoke(app, ["metric", *args])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and re.search(needle, lines[0]), result.stderr


# --- refusals name the option and what is allowed ----------------------------------------------------------


def _error(args: list[str]) -> str:
    result = runner.invoke(app, ["metric", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output


def test_fallback_is_reported_with_its_reason():
    """k = 10: certified at n = 200 and 1000; at n = 10^5 T's 2 n c + 1 outcomes are beyond the tilted path's
    limit, the certificate is not attempted and the output says so."""
    base = ["epsilon", "--mechanism", "geo-shuffle", "--delta", "1e-4", "--eps-geo", "0.5", "--k", "10"]
    for n in ("200", "1000"):
        ok = _json([*base, "--n", n])
        assert ok["source"].startswith("certified") and ok["reason"].startswith("certified") and ok["epsilon"] < 0.5
    big = _json([*base, "--n", "100000"])
    assert big["epsilon"] == 0.5 and big["source"].startswith("fallback")
    assert big["reason"].startswith("not attempted") and "above the limit 4e+06" in big["reason"]
    cert = M.geo_shuffle_certificate(0.5, 1e-4, 100000, 10)
    assert (big["epsilon"], big["reason"]) == (cert.epsilon, cert.reason) and cert.certified is False
    text = runner.invoke(app, ["metric", *base, "--n", "100000"]).stdout
    assert "reason: not attempted" in text and "source: fallback" in text
    rr = _json(["epsilon", "--mechanism", "rr-shuffle", "--n", "10000", "--delta", "1e-4", "--p", "0.5", "--k", "1001"])
    assert rr["source"].startswith("fallback") and rr["reason"].startswith("not attempted")  # beyond 10^7 bits
    sgdl = _json(["epsilon", "--mechanism", "sgdl-shuffle", "--n", "100", "--delta", "1e-4", "--eps", "0.5"])
    assert sgdl["source"].startswith("fallback") and "unbounded" in sgdl["reason"]


def test_conditioned_noise_has_a_size_guard():
    with pytest.raises(ValueError, match="above the limit"):
        M.geo_shuffle_conditioned_noise(0.5, 100, 10_000)
    with pytest.raises(ValueError, match=r"2 \(c\+1\)\^2 n\^2 = .* above the limit 4e\+08"):
        M.sgdl_shuffle_conditioned_noise(0.5, 100, 1000)


def test_noise_epsilon_and_max_distance_maxima_at_the_command_line():
    out = _error(["epsilon", "--mechanism", "geo-shuffle", "--delta", "1e-4", "--n", "100", "--eps-geo", "800"])
    assert f"--eps-geo must be a number in [2^-52, {M.MAX_EPSILON:g}]; got '800'" in out
    out = _error(["epsilon", "--mechanism", "sgdl-shuffle", "--n", "1000", "--delta", "1e-4", "--eps", "1000"])
    assert f"--eps must be a number in [1.5e-6, {M.MAX_EPSILON:g}]; got '1000'" in out and "SGDL parameter" not in out
    out = _error(
        [
            "epsilon",
            "--mechanism",
            "geo-shuffle",
            "--delta",
            "1e-4",
            "--n",
            "100",
            "--eps-geo",
            "0.2",
            "--max-distance",
            "1e9",
            "--method",
            "theorem-4.1",
        ]
    )
    assert f"--max-distance must be an integer in [1, {M.MAX_DISTANCE}]; got '1e9'" in out


@pytest.mark.parametrize("command", ["epsilon", "profile"])
@pytest.mark.parametrize(
    "mechanism, option, value, allowed",
    [("sgdl-shuffle", "--eps", "1e-12", "[1.5e-6, 100]"), ("rr-shuffle", "--p", "1e-320", "[1e-300, 1)")],
)
def test_sgdl_eps_and_rr_p_are_refused_by_the_option_in_the_range_help_states(
    command, mechanism, option, value, allowed
):
    """--eps 1e-12 reached the SGDL series ("p = 0.999999999999 is too close to 1 ...") and --p 1e-320 the library
    ("p (RR randomization probability) must be >= 1e-300"), both after --help said [2^-52, 100] / (0, 1)."""
    args = [command, "--mechanism", mechanism, "--n", "100", "--delta", "1e-4", "--k", "10", option, value]
    assert f"error: {option} must be a number in {allowed}; got '{value}'" in _error(args)
    help_text = runner.invoke(app, ["metric", command, "--help"], env={"COLUMNS": "300"}).stdout
    assert f"Must be a number in {allowed}." in help_text


def test_the_smallest_sgdl_eps_the_command_line_accepts_is_computed():
    """The low end of --eps is one the SGDL series serves (its hint quotes the same number)."""
    low = str(SGDL_EPSILON_MIN)
    out = _json(["epsilon", "--mechanism", "sgdl-shuffle", "--n", "2", "--delta", "1e-4", "--eps", low])
    assert out["epsilon"] == M.sgdl_shuffle_epsilon(SGDL_EPSILON_MIN, 1e-4, 2)
    with pytest.raises(PrivacyParameterError, match=f"use epsilon >= {SGDL_EPSILON_MIN:g}$"):
        M.sgdl_shuffle_report_epsilon(SGDL_EPSILON_MIN * 0.9, 2)


def test_rr_at_the_smallest_delta_answers_at_the_command_line():
    """The stranger's command: an OverflowError traceback (1 / (1e-9 delta) overflows at delta = 1e-300)."""
    out = _json(["epsilon", "--mechanism", "rr-shuffle", "--k", "10", "--n", "100", "--delta", "1e-300", "--p", "0.5"])
    assert out["epsilon"] == M.rr_shuffle_epsilon(1e-300, 0.5, 10, 100)


def test_geo_eps_geo_anywhere_in_its_range_answers_with_k():
    """The variation-ratio epsilon (printed with --k) refused eps_geo d outside the accountant's [1e-6, 700] with
    "eps0 must be a number in [1e-6, 700]", though --help and Python accept eps_geo in [2^-52, 100]: there the pure
    eps_geo d holds, and is the answer (at both ends: 1e-12 at d = 1, 100 at d = 10)."""
    out = _json(
        ["epsilon", "--mechanism", "geo-shuffle", "--n", "100", "--delta", "1e-4", "--eps-geo", "1e-12", "--k", "10"]
    )
    assert out["variation_ratio_epsilon"] == 1e-12 and "error" not in out
    assert M.geo_shuffle_variation_ratio_epsilon(100.0, 1e-4, 100, 10, distance=10) == 1000.0
    inside = M.geo_shuffle_variation_ratio_epsilon(50.0, 1e-4, 100, 10, distance=10)  # eps0 = 500: computed
    assert 0 < inside <= 500.0


def test_local_epsilon_says_when_the_search_is_capped():
    capped = _json(["local-epsilon", "--target", "160", "--n", "1", "--delta", "1e-4"])
    assert (
        capped["eps_geo"] == M.MAX_EPSILON
        and capped["capped"] is True
        and "search's cap of 100" in capped["note"]
        and "MAX_EPSILON" not in capped["note"]
    )
    free = _json(["local-epsilon", "--target", "60", "--n", "1", "--delta", "1e-4"])
    assert free["eps_geo"] == 60.0 and free["capped"] is False and "note" not in free


@pytest.mark.parametrize("n", ["1", "2", "4"])
def test_local_epsilon_theorem_41_below_five_users(n):
    out = _json(["local-epsilon", "--target", "0.1", "--n", n, "--delta", "1e-4", "--method", "theorem-4.1"])
    assert out["eps_geo"] == 0.1


def test_method_option_is_documented_and_checked_like_local_epsilon():
    help_text = runner.invoke(app, ["metric", "epsilon", "--help"], terminal_width=200).stdout
    assert re.search(r"--method\s+\S*\s+The guarantee \(default: certified", help_text)
    out = _error(
        ["epsilon", "--mechanism", "geo-shuffle", "--n", "10", "--delta", "1e-4", "--eps-geo", "1", "--method", "foo"]
    )
    assert "--method: unknown method 'foo'" in out and "--help" in out
    out = _error(["local-epsilon", "--target", "1", "--n", "10", "--delta", "1e-4", "--method", "theorem-5.1"])
    assert "--method: unknown method 'theorem-5.1'; allowed: certified, theorem-4.1, theorem-3.1" in out
    out = _error(["local-epsilon", "--target", "1", "--n", "10", "--delta", "1e-4", "--method", "theorem-3.1"])
    assert "--method theorem-3.1 does not apply to --mechanism geo-shuffle (use certified or theorem-4.1)" in out


def test_rr_inverse_json():
    """``local-epsilon --mechanism rr-shuffle``: the smallest p of `rr_shuffle_probability` (both methods), the
    epsilon it achieves (never above the target) and its certificate."""
    args = ["local-epsilon", "--mechanism", "rr-shuffle", "--target", "0.5", "--n", "100", "--delta", "1e-4"]
    out = _json([*args, "--k", "1000"])
    assert out["p"] == M.rr_shuffle_probability(0.5, 1e-4, 1000, 100)
    assert out["achieved_epsilon"] == M.rr_shuffle_epsilon(1e-4, out["p"], 1000, 100) <= 0.5
    assert out["source"].startswith("certified") and out["lambda"] == out["p"] * 100 * 1000
    assert out["local_epsilon"] == M.rr_shuffle_local_epsilon(1e-4, out["p"], 1000)
    assert out["inputs"] == {"mechanism": "rr-shuffle", "target": 0.5, "n": 100, "delta": 1e-4, "k": 1000} | {
        "method": "certified"
    }
    paper = _json([*args, "--k", "1000", "--method", "theorem-3.1"])
    assert paper["p"] == M.rr_shuffle_probability(0.5, 1e-4, 1000, 100, method="theorem-3.1") < out["p"]
    assert paper["achieved_epsilon"] <= 0.5 and paper["source"].startswith("Theorem 3.1")


@pytest.mark.parametrize(
    "extra, needle",
    [
        ([], "--k is required with --mechanism rr-shuffle"),
        (["--k", "3", "--max-distance", "3"], "--max-distance does not apply to --mechanism rr-shuffle"),
        (["--k", "3", "--method", "theorem-4.1"], r"--method theorem-4.1 does not apply to --mechanism rr-shuffle"),
        (["--k", "0"], "--k must be"),
        (["--k", "1", "--target", "0.01", "--method", "theorem-3.1"], "--n: RR-Shuffle cannot reach epsilon=0.01"),
    ],
)
def test_rr_inverse_errors_name_the_option(extra, needle):
    out = _error(
        ["local-epsilon", "--mechanism", "rr-shuffle", "--target", "0.5", "--n", "10", "--delta", "1e-4", *extra]
    )
    assert re.search(needle, out), out


def test_local_epsilon_help_names_every_mechanism():
    flat = _help("local-epsilon")
    assert "--mechanism <str> geo-shuffle (the largest eps_geo; the default), rr-shuffle (the smallest p" in flat
    assert "sgdl-shuffle (the largest noise epsilon, certified, needs --k)" in flat
    assert "theorem-3.1 (RR-Shuffle)" in flat


def test_max_distance_is_refused_where_it_does_not_apply():
    out = _error(
        [
            "epsilon",
            "--mechanism",
            "rr-shuffle",
            "--n",
            "100",
            "--delta",
            "1e-4",
            "--p",
            "0.5",
            "--k",
            "10",
            "--max-distance",
            "3",
        ]
    )
    assert "--max-distance does not apply to --mechanism rr-shuffle" in out
    sgdl = _json(
        [
            "epsilon",
            "--mechanism",
            "sgdl-shuffle",
            "--n",
            "100",
            "--delta",
            "1e-4",
            "--eps",
            "0.5",
            "--max-distance",
            "3",
        ]
    )
    assert sgdl["local_epsilon"] == M.sgdl_shuffle_local_epsilon(0.5, 100, max_distance=3)
    assert sgdl["inputs"]["max_distance"] == 3


def test_large_n_answers_within_seconds():
    import time

    start = time.perf_counter()
    for n in ("1e10", "1e12", "9007199254740992"):
        out = _json(
            ["epsilon", "--mechanism", "geo-shuffle", "--delta", "1e-4", "--n", n, "--eps-geo", "0.2", "--k", "10"]
        )
        assert out["epsilon"] == 0.2 and out["epsilon_theorem_4_1"] < 1e-5
        _json(["local-epsilon", "--target", "1e-5", "--delta", "1e-4", "--method", "theorem-4.1", "--n", n])
    assert time.perf_counter() - start < 10.0


def test_certified_search_has_a_cell_limit_and_says_so():
    """n = 400, k = 10 took 7.5 s for a fallback; local-epsilon at n = 200, k = 10 took 69 s.  Now both answer in
    seconds, and say when the search was not attempted (n = 10^5, k = 30: T beyond the tilted path's limit; the
    windowed search's limit no longer applies to Geo-Shuffle, whose T is log-concave)."""
    import time

    start = time.perf_counter()
    out = _json(
        ["epsilon", "--mechanism", "geo-shuffle", "--delta", "1e-4", "--eps-geo", "0.5", "--k", "30", "--n", "100000"]
    )
    assert out["epsilon"] == 0.5 and "2 n c + 1 = 8800001 outcomes, above the limit" in out["reason"]
    inv = _json(["local-epsilon", "--delta", "1e-4", "--target", "0.3", "--n", "200", "--k", "10"])
    assert inv["eps_geo"] >= 0.3 and inv["achieved_epsilon"] <= 0.3 and inv["reason"]
    assert time.perf_counter() - start < 15.0
    small = _json(["local-epsilon", "--delta", "1e-4", "--target", "0.3", "--n", "50", "--k", "5"])
    assert small["source"].startswith("certified") and small["eps_geo"] > 0.45


def test_text_output_omits_an_empty_reason():
    base = ["epsilon", "--mechanism", "geo-shuffle", "--n", "300", "--delta", "1e-4", "--k", "4", "--eps-geo", "0.5"]
    text = runner.invoke(app, ["metric", *base, "--method", "theorem-4.1"]).stdout
    assert "source: Theorem 4.1" in text and "\nreason:" not in "\n" + text
    assert "None" not in text
    assert (
        json.loads(runner.invoke(app, ["metric", *base, "--method", "theorem-4.1", "--json"]).stdout)["reason"] is None
    )
    assert "reason: " in runner.invoke(app, ["metric", *base]).stdout  # the certified method says why


def test_profile_command_table_json_and_plot(tmp_path):
    png = tmp_path / "curve.png"
    out = _json(
        [
            "profile",
            "--mechanism",
            "geo-shuffle",
            "--n",
            "4",
            "--delta",
            "1e-4",
            "--k",
            "3",
            "--eps-geo",
            "1",
            "--target",
            "0.7",
            "--plot",
            str(png),
        ]
    )
    prof = M.metric_profile("geo-shuffle", 1e-4, 4, 3, eps_geo=1.0)
    assert out["epsilons"] == prof.epsilons.tolist() and out["uniform_epsilon"] == prof.uniform and out["exact"] is True
    assert out["theorem"] == "Theorem 4.1" and out["theorem_holds_up_to_distance"] == prof.theorem_holds_up_to
    assert out["target_holds_up_to_distance"] == prof.reach(0.7)
    assert png.stat().st_size > 1000
    text = runner.invoke(
        app,
        [
            "metric",
            "profile",
            "--mechanism",
            "geo-shuffle",
            "--n",
            "4",
            "--delta",
            "1e-4",
            "--k",
            "3",
            "--eps-geo",
            "1",
            "--plot",
            str(png),
        ],
    ).stdout
    assert "certified epsilon" in text and "Theorem 4.1 certified" in text and "every pair (any distance)" in text
    bad = runner.invoke(
        app,
        ["metric", "profile", "--mechanism", "geo-shuffle", "--n", "4", "--delta", "1e-4", "--k", "3", "--p", "0.5"],
    )
    assert bad.exit_code == 2 and "--eps-geo is required" in bad.output


@pytest.mark.parametrize("plot", ["missing-folder/p.png", "curve.txt", "noext", "."])
def test_profile_plot_must_be_a_png_in_a_writable_folder(plot, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["metric", "profile", "--mechanism", "rr-shuffle", "--n", "20", "--delta", "1e-6", "--p", "0.5"]
    result = runner.invoke(app, [*args, "--k", "3", "--plot", plot, "--json"])
    assert result.exit_code == 2 and "--plot" in result.output and "Traceback" not in result.output
    assert not list(tmp_path.iterdir())  # nothing written: refused before the work


def test_profile_plot_is_written_where_the_json_says(tmp_path):
    target = tmp_path / "curve.png"
    args = ["metric", "profile", "--mechanism", "rr-shuffle", "--n", "20", "--delta", "1e-6", "--p", "0.5", "--k", "3"]
    result = runner.invoke(app, [*args, "--plot", str(target), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["plot"] == str(target) and target.stat().st_size > 0


def test_local_epsilon_spinner_counts_the_certificates_of_the_search(monkeypatch):
    """The certified search runs up to MAX_INVERSE_STEPS certificates (seconds at n = 10^4): the spinner says which."""
    from shuffledp.accounting.metric._common import MAX_INVERSE_STEPS
    from shuffledp.cli import metric as cli_metric

    said = []

    class Recorder:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def update(self, message: str) -> None:
            said.append(message)

    monkeypatch.setattr(cli_metric, "status", lambda message: Recorder())
    _json(["local-epsilon", "--target", "0.3", "--n", "300", "--delta", "1e-4", "--k", "5"])
    assert said and said == [
        f"{said[0].split(': certificate')[0]}: certificate {i + 1} (at most {MAX_INVERSE_STEPS})"
        for i in range(len(said))
    ]


def _printed(args: list[str], key: str) -> float:
    """The value of row ``key`` in the text table of ``shuffledp metric ARGS``."""
    result = runner.invoke(app, ["metric", *args], terminal_width=200)
    assert result.exit_code == 0, result.output
    match = re.search(rf"│ {re.escape(key)}\s+│ (\S+)\s+│", result.stdout)
    assert match, result.stdout
    return float(match.group(1))


@pytest.mark.parametrize(
    "target, n, k, delta",
    [(0.5, 5, 3, 1e-4), (5.0, 100, 1000, 1e-4), (1e-6, 100, 1000, 1e-4)],
)
def test_rr_inverse_printed_p_typed_back_keeps_the_target(target, n, k, delta):
    """The table rounds p up (more random bits): the printed p, fed back in, never exceeds the target."""
    args = ["--n", str(n), "--k", str(k), "--delta", repr(delta)]
    p = _printed(["local-epsilon", "--mechanism", "rr-shuffle", "--target", repr(target), *args], "p")
    assert M.rr_shuffle_epsilon(delta, p, k, n) <= target
    achieved = _printed(["epsilon", "--mechanism", "rr-shuffle", "--p", repr(p), *args], "epsilon")
    assert achieved >= M.rr_shuffle_epsilon(delta, p, k, n)  # a printed guarantee is rounded up


@pytest.mark.parametrize("target, n, k", [(0.3, 6, 3), (1.7, 20, 4)])
def test_geo_inverse_printed_eps_geo_typed_back_keeps_the_target(target, n, k):
    """The table rounds eps_geo down (more noise): typed back in, its certified epsilon stays within the target."""
    eps_geo = _printed(
        ["local-epsilon", "--target", repr(target), "--n", str(n), "--k", str(k), "--delta", "1e-4"], "eps_geo"
    )
    assert M.geo_shuffle_certificate(eps_geo, 1e-4, n, k).epsilon <= target


def test_profile_writes_no_file_without_plot(tmp_path, monkeypatch):
    """A command that prints a table leaves the working folder alone: the PNG is written only with --plot."""
    monkeypatch.chdir(tmp_path)
    args = ["metric", "profile", "--mechanism", "geo-shuffle", "--n", "4", "--delta", "1e-4", "--k", "3"]
    for extra in ([], ["--json"]):
        result = runner.invoke(app, [*args, "--eps-geo", "1", *extra])
        assert result.exit_code == 0, result.output
    assert not list(tmp_path.iterdir())
    assert json.loads(result.stdout)["plot"] is None


def test_profile_plot_that_cannot_be_written_is_one_error_line(tmp_path, monkeypatch):
    """A folder that passes the parse-time check but refuses the file: one ``error: --plot`` line quoting it, status 2."""
    target = tmp_path / "curve.png"

    def refuse(self, *args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr("matplotlib.figure.Figure.savefig", refuse)
    args = ["metric", "profile", "--mechanism", "geo-shuffle", "--n", "4", "--delta", "1e-4", "--k", "3"]
    result = runner.invoke(app, [*args, "--eps-geo", "1", "--plot", str(target)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = result.output.strip().splitlines()
    assert lines == [f"error: --plot: cannot write {str(target)!r} (No such file or directory)"]


def test_rr_inverse_says_when_p_is_at_its_floor():
    """Like Geo-Shuffle's cap: a target the smallest p accepted already meets is reported as capped, with a note."""
    args = ["local-epsilon", "--mechanism", "rr-shuffle", "--n", "5", "--k", "3", "--delta", "1e-6"]
    floor = _json([*args, "--target", "700"])
    assert floor["p"] == M.RR_MIN_P and floor["capped"] is True
    assert "floor of 1e-300" in floor["note"] and "--target 700" in floor["note"]
    text = runner.invoke(app, ["metric", *args, "--target", "700"], terminal_width=200).stdout
    assert re.search(r"│ capped\s+│ yes", text) and "note: p is the search's floor" in text
    free = _json([*args, "--target", "0.5"])
    assert free["p"] > M.RR_MIN_P and free["capped"] is False and "note" not in free


def _profile_table_distances(args: list[str]) -> tuple[list[int], str]:
    text = runner.invoke(app, ["metric", "profile", *args], terminal_width=200).stdout
    return [int(d) for d in re.findall(r"│ <= (\d+)\s+│", text)], text


def test_profile_table_lists_every_distance_of_a_short_profile():
    """A profile of at most a dozen distances (RR-Shuffle's) is shown whole: no listed distance is skipped."""
    args = ["--mechanism", "rr-shuffle", "--n", "20", "--k", "30", "--p", "0.5", "--delta", "1e-4"]
    shown, text = _profile_table_distances(args)
    prof = M.metric_profile("rr-shuffle", 1e-4, 20, 30, p=0.5)
    assert shown == prof.distances.tolist()
    assert "the table shows" not in text
    printed = [float(e) for e in re.findall(r"│ <= \d+\s+│ (\S+)\s+│", text)]
    assert all(cell >= exact for cell, exact in zip(printed, prof.epsilons, strict=True))  # rounded up


def test_profile_table_says_when_it_shows_a_selection():
    args = ["--mechanism", "geo-shuffle", "--n", "6", "--k", "5", "--eps-geo", "0.5", "--delta", "1e-4"]
    shown, text = _profile_table_distances(args)
    listed = M.metric_profile("geo-shuffle", 1e-4, 6, 5, eps_geo=0.5).distances.tolist()
    assert set(shown) < set(listed) and shown[-1] == listed[-1]
    assert f"the table shows {len(shown)} of the profile's {len(listed)} distances (--json lists every one)" in text


@pytest.mark.parametrize(
    "mechanism, parameter, label",
    [("rr-shuffle", {"p": 0.5}, "p = 0.5"), ("geo-shuffle", {"eps_geo": 0.7}, "eps_geo = 0.7")],
)
def test_profile_plot_titles_its_inputs_and_keeps_the_legend_off_the_curve(
    mechanism, parameter, label, tmp_path, monkeypatch
):
    """A plot read alone says n, k, delta and the noise parameter; its legend lies outside the axes (it covered the
    curve's rise in the lower right)."""
    import matplotlib.figure

    saved = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *args, **kwargs: saved.append(fig))
    option, value = next(iter(parameter.items()))
    args = ["metric", "profile", "--mechanism", mechanism, "--n", "6", "--k", "3", "--delta", "1e-4"]
    result = runner.invoke(app, [*args, f"--{option.replace('_', '-')}", str(value), "--plot", str(tmp_path / "c.png")])
    assert result.exit_code == 0, result.output
    (fig,) = saved
    (ax,) = fig.axes
    assert ax.get_title() == f"{mechanism}: n = 6, k = 3, delta = 0.0001, {label}"
    fig.canvas.draw()
    legend, axes = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.y1 <= axes.y0  # wholly below the axes, so it hides no part of the curve


def test_profile_plot_draws_the_target_and_its_reach(tmp_path, monkeypatch):
    """With --target the plot shows the target's line and the distance it reaches, as the table and --json do (the
    plot used to leave it out)."""
    import matplotlib.figure

    saved = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *args, **kwargs: saved.append(fig))
    args = ["metric", "profile", "--mechanism", "geo-shuffle", "--n", "6", "--k", "3", "--delta", "1e-2"]
    result = runner.invoke(
        app, [*args, "--eps-geo", "2", "--target", "1.6", "--plot", str(tmp_path / "t.png"), "--json"]
    )
    assert result.exit_code == 0, result.output
    reach = json.loads(result.output)["target_holds_up_to_distance"]
    (fig,) = saved
    labels = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    assert f"target 1.6: d <= {reach}" in labels


def test_sgdl_inverse_json_and_its_printed_eps_keeps_the_target():
    """``local-epsilon --mechanism sgdl-shuffle``: the library's certified inverse, its certificate within the target,
    and the table's eps (rounded down: more noise) typed back in stays within it too."""
    args = [
        "local-epsilon",
        "--mechanism",
        "sgdl-shuffle",
        "--target",
        "0.5",
        "--n",
        "20",
        "--k",
        "3",
        "--delta",
        "1e-4",
    ]
    out = _json(args)
    eps = M.sgdl_shuffle_noise_epsilon(0.5, 1e-4, 20, 3)
    assert out["eps"] == eps and out["achieved_epsilon"] == M.sgdl_shuffle_certificate(eps, 1e-4, 20, 3).epsilon <= 0.5
    assert out["local_epsilon"] == M.sgdl_shuffle_local_epsilon(eps, 20) and out["capped"] is False
    assert out["inputs"]["max_distance"] == M.DEFAULT_MAX_DISTANCE and out["source"].startswith("certified")
    assert M.sgdl_shuffle_certificate(_printed(args, "eps"), 1e-4, 20, 3).epsilon <= 0.5


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--target", "0.5"], "--k is required with --mechanism sgdl-shuffle"),
        (["--target", "0.5", "--k", "3", "--method", "theorem-4.1"], r"\(use certified\)"),
        (["--target", "160", "--k", "3"], r"--target must be a number in \[2\^-52, 100\]; got '160'"),
    ],
)
def test_sgdl_inverse_errors_name_the_option(extra, needle):
    out = _error(["local-epsilon", "--mechanism", "sgdl-shuffle", "--n", "20", "--delta", "1e-4", *extra])
    assert re.search(needle, out), out


def _help(*command: str) -> str:
    """The words of ``shuffledp metric COMMAND --help``, without the box and its wrapping."""
    text = runner.invoke(app, ["metric", *command, "--help"], terminal_width=200).stdout
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def test_sgdl_eps_has_one_wording_in_every_metric_command():
    wording = "SGDL-Shuffle: its noise epsilon (of the users' discrete Laplace noise"
    assert wording in _help("epsilon") and wording in _help("profile")
    assert "target epsilon" not in _help("epsilon") and "its epsilon parameter" not in _help("profile")


def test_variation_ratio_epsilon_is_explained_in_help_and_when_zero():
    """The field is a bound for one user's value moving by 1 only; a 0 (tiny eps_geo) is a real (0, delta) guarantee,
    said under the table, not an unexplained underflow."""
    assert "variation_ratio_epsilon: the epsilon when one user's value moves by 1" in _help("epsilon")
    args = ["epsilon", "--mechanism", "geo-shuffle", "--n", "300", "--k", "1000", "--delta", "1e-4", "--eps-geo"]
    out = _json([*args, "1e-3"])
    assert out["variation_ratio_epsilon"] == 0.0 == M.geo_shuffle_variation_ratio_epsilon(1e-3, 1e-4, 300, 1000)
    text = runner.invoke(app, ["metric", *args, "1e-3"], terminal_width=200).stdout
    assert "variation_ratio_epsilon_reason: 0 is exact, not an underflow" in text
    assert "variation_ratio_epsilon_reason" not in _json([*args, "0.5"])
