"""The amplification-bounds figure: coinciding curves found from the data, one legend outside the panels."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shuffledp.experiments.amplification_bounds import EPS0, N_TABLE, _figure, caption, claims, coinciding

NS = (1_000, N_TABLE, 100_000)
KINDS = {"a": "upper", "b": "upper", "c": "upper", "low": "lower"}


def _rows(
    scale: dict[str, float], missing: dict[str, tuple[float, int]] | None = None, power: float = 0.5
) -> list[dict]:
    """Every method = scale[method] * (eps0 / n**power), inf at the (eps0, n) listed in ``missing``."""
    rows = []
    for m, s in scale.items():
        for eps0 in EPS0:
            for n in NS:
                value = math.inf if (missing or {}).get(m) == (eps0, n) else s * eps0 / n**power
                rows.append({"method": m, "eps0": eps0, "n": n, "delta": 0.01 / n, "epsilon": value, "seconds": 0.0})
    return rows


def test_groups_need_agreement_within_one_percent_at_every_point():
    # b is within 1% of a and of c, but a and c are 1.6% apart: c starts its own group
    rows = _rows({"a": 1.0, "b": 1.008, "c": 1.016, "low": 0.999})
    assert coinciding(rows, ["a", "b", "c", "low"]) == [["a", "b", "low"], ["c"]]


def test_a_curve_out_of_regime_at_one_point_coincides_with_nothing():
    rows = _rows({"a": 1.0, "b": 1.0, "d": 1.0}, missing={"b": (EPS0[-1], NS[-1]), "d": (EPS0[-1], NS[-1])})
    # b and d are both inf at the same point (agree there) and equal elsewhere
    assert coinciding(rows, ["a", "b", "d"]) == [["a"], ["b", "d"]]


def test_caption_names_the_coinciding_curves_and_says_none_when_none():
    text = caption(_rows({"a": 1.0, "b": 1.005, "c": 2.0, "low": 1.0}), KINDS)
    assert text.split("every point of the run: ")[1].startswith("a = b = low (lower) (coinciding")
    apart = caption(_rows({"a": 1.0, "b": 1.5, "c": 2.0, "low": 0.5}), KINDS)
    assert "No two curves agree within 1%" in apart


def _inside(box, outer) -> bool:
    return (
        box.x0 >= outer.x0 - 1e-9
        and box.x1 <= outer.x1 + 1e-9
        and box.y0 >= outer.y0 - 1e-9
        and box.y1 <= outer.y1 + 1e-9
    )


def test_figure_draws_one_line_per_group_and_one_legend_below_the_panels():
    rows = _rows({"a": 1.0, "b": 1.005, "c": 2.0, "low": 1.0})
    fig = _figure(rows, KINDS)
    try:
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert len(panels) == len(EPS0)
        assert all(len(ax.get_lines()) == 3 for ax in panels)  # a = b, c, and the lower-bound band
        assert all(ax.get_legend() is None for ax in panels)
        (legend,) = fig.legends
        assert [t.get_text() for t in legend.get_texts()] == ["a = b", "c", "low (lower bound)"]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        box = legend.get_window_extent(renderer)
        assert all(box.y1 < ax.get_tightbbox(renderer).y0 for ax in panels)  # below every panel, over no data
        assert all(t.get_fontsize() >= 8 for t in legend.get_texts())
        assert any("a = b = low (lower)" in t.get_text().replace("\n", " ") for t in fig.texts)
    finally:
        plt.close(fig)


def test_missing_points_are_left_out_not_drawn_at_zero():
    rows = _rows({"a": 1.0, "c": 2.0, "low": 1.0}, missing={"c": (EPS0[0], NS[0])})
    fig = _figure(rows, {"a": "upper", "c": "upper", "low": "lower"})
    try:
        first = fig.axes[0]
        xs = [list(line.get_xdata()) for line in first.get_lines()]
        assert sorted(map(len, xs)) == [len(NS) - 1, len(NS), len(NS)]
    finally:
        plt.close(fig)


VR_KINDS = {"variation-ratio": "upper", "a": "upper", "variation-ratio-lower": "lower"}


def test_claims_hold_for_a_tight_valid_bound_falling_as_one_over_sqrt_n():
    found = claims(_rows({"variation-ratio": 1.0, "a": 2.0, "variation-ratio-lower": 0.999}), VR_KINDS)
    assert [c.verdict for c in found] == ["held", "held", "held"]
    assert found[0].ours == "largest (upper - lower) / upper over the run: 0.001"
    assert "Eq. (1): -0.467; ours: -0.500 (eps0 0.25)" in found[1].ours


def test_claims_fail_for_a_loose_bound_falling_as_one_over_n_and_a_bound_below_the_lower():
    found = claims(_rows({"variation-ratio": 1.0, "a": 0.4, "variation-ratio-lower": 0.5}, power=1.0), VR_KINDS)
    assert [c.verdict for c in found] == ["not", "not", "partly"]
    assert found[2].ours.endswith("; below: a at 18 points")
