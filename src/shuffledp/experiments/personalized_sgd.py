"""Figure 5 of the E-APES paper: accuracy of Algorithm 1 (personalized shuffled noisy SGD) under Table 3 budgets.

Table 2 adapted to scikit-learn's bundled digits data (8x8 images, 1,797 samples; no
download) instead of MNIST (60,000 samples of 28x28):

* n = 1,500 training samples (a fixed random split; the other 297 are the test set),
  m = 100 clients of 15 samples (Table 2: n = 60,000, m = 100);
* model: multinomial logistic regression on the 64 pixels scaled to [0, 1] plus a constant
  feature (Table 2's PCA-60 + feed-forward network replaced, as in `personalized_sgd`);
* C = 2, eta = 0.05, delta_0 = 10^-5 per client, T in {5, 10, 25, 50} epochs (quick: {2, 5})
  -- as in Table 2; each client's eps_0 drawn from a Table 3 distribution (Table 2's
  [0.05, 1] is Uniform 1 / Gauss 1's range; all five distributions are run).

A reference run gives every client eps_0 = 700, the largest budget the library accepts
(noise sd 1/700 of the eps_0 = 1 scale: close to noiseless).  Central guarantee: the Gaussian mechanism is not pure DP, so no clone bound
applies; the summary shows E-APES's (eps, delta = 10^-4) of *one epoch* for the median
client -- an approximation, not a bound (Berry-Esseen term dropped), and the T epochs
compose on top of it.  3 repetitions (quick: 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp._util.numbers import number
from shuffledp.accounting.personalized import MAX_BUDGET
from shuffledp.experiments.plotting import PAGE_WIDTH, legend_and_caption, page_style, series_style
from shuffledp.experiments.registry import Claim, ExperimentContext, ExperimentOutput, register
from shuffledp.protocols.personalized import TABLE3, personalized_sgd, table3_budgets

__all__ = ["CLIENTS", "COLUMNS", "N_TRAIN", "REFERENCE", "digits_split", "noise_sd", "run"]

NAME = "personalized-sgd"
COLUMNS = [
    "budgets",
    "epochs",
    "rep",
    "train_accuracy",
    "test_accuracy",
    "eps_min",
    "eps_median",
    "eps_max",
    "eapes_epoch_epsilon",
]
N_TRAIN, CLIENTS, CLIP, LR, DELTA0, CENTRAL_DELTA = 1500, 100, 2.0, 0.05, 1e-5, 1e-4
REFERENCE = "reference"
REFERENCE_EPS = MAX_BUDGET  # the largest accepted budget: noise sd 1/700 of its eps = 1 scale


def digits_split(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X_train, y_train, X_test, y_test): pixels / 16 plus a constant feature, N_TRAIN training rows."""
    from sklearn.datasets import load_digits

    data = load_digits()
    X = np.hstack([data.data / 16.0, np.ones((data.data.shape[0], 1))])
    order = rng.permutation(X.shape[0])
    train, test = order[:N_TRAIN], order[N_TRAIN:]
    return X[train], data.target[train], X[test], data.target[test]


def _accuracy(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(X @ theta, axis=1) == y))


@register(
    NAME,
    "Personalized shuffled SGD on digits under Table 3 budgets (Figure 5)",
    "personalized-shuffle-eapes §4.1, Algorithm 1, Table 2, Figure 5",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    epochs_grid, reps = ((2, 5), 1) if ctx.quick else ((5, 10, 25, 50), 3)
    X, y, X_test, y_test = digits_split(ctx.rng(0))
    settings = [(name, T, rep) for name in (*TABLE3, REFERENCE) for T in epochs_grid for rep in range(reps)]
    rows: list[dict[str, Any]] = []
    for index, (name, T, rep) in enumerate(ctx.progress.track(settings, NAME)):
        rng = ctx.rng(1, index)
        eps = np.full(CLIENTS, REFERENCE_EPS) if name == REFERENCE else table3_budgets(name, CLIENTS, rng)
        result = personalized_sgd(
            X,
            y,
            eps,
            np.full(CLIENTS, DELTA0),
            rng,
            epochs=T,
            lr=LR,
            clip=CLIP,
            central_delta=None if name == REFERENCE else CENTRAL_DELTA,
        )
        theta = result.theta
        eapes = np.nan if name == REFERENCE else result.eapes[int(np.argsort(eps)[CLIENTS // 2])]  # the median client
        rows.append(
            dict(
                budgets=name,
                epochs=T,
                rep=rep,
                train_accuracy=_accuracy(theta, X, y),
                test_accuracy=_accuracy(theta, X_test, y_test),
                eps_min=float(eps.min()),
                eps_median=float(np.median(eps)),
                eps_max=float(eps.max()),
                eapes_epoch_epsilon=float(eapes),
            )
        )
    params = dict(
        n_train=N_TRAIN,
        n_test=int(y_test.size),
        clients=CLIENTS,
        clip=CLIP,
        lr=LR,
        delta0=DELTA0,
        central_delta=CENTRAL_DELTA,
        epochs=list(epochs_grid),
        reps=reps,
    )
    return ExperimentOutput(
        COLUMNS,
        rows,
        _summary(rows, params),
        figure=_figure(rows, epochs_grid),
        parameters=params,
        claims=_claims(rows, params),
    )


#: The paper's headline (§4.1, "Parameter Selection"): test accuracy after about 50 epochs, eps_0 in [0.05, 1].
PAPER_TEST_ACCURACY = 0.9678


def noise_sd(eps: float, delta0: float = DELTA0) -> float:
    """Algorithm 1, line 7: the per-coordinate noise sd of a client at budget ``eps`` (2C/m sqrt(2 ln(1.25/delta_0)) / eps)."""
    return float((2.0 * CLIP / CLIENTS) * np.sqrt(2.0 * np.log(1.25 / delta0)) / eps)


def _claims(rows: list[dict[str, Any]], p: dict[str, Any]) -> list[Claim]:
    T = max(p["epochs"])
    table2 = _mean(rows, "uniform1", T, "test_accuracy")  # Table 2's eps_0 range [0.05, 1] is Uniform 1's
    reference = _mean(rows, REFERENCE, T, "test_accuracy")
    verdict = (
        "held"
        if table2 >= PAPER_TEST_ACCURACY - 0.05
        else "partly"
        if reference >= PAPER_TEST_ACCURACY - 0.05
        else "not"
    )
    return [
        Claim(
            f"Algorithm 1 reaches {PAPER_TEST_ACCURACY:.2%} test accuracy on MNIST after about 50 epochs with eps_0 in [0.05, 1] "
            "(§4.1, Table 2)",
            f"digits, T = {T}: {table2:.3f} with Uniform 1 budgets ([0.05, 1]); {reference:.3f} nearly noiseless (the model "
            "itself is as good); the gap is Algorithm 1's noise, see the summary",
            verdict,
        )
    ]


def _mean(rows: list[dict[str, Any]], name: str, T: int, key: str) -> float:
    return float(np.mean([r[key] for r in rows if r["budgets"] == name and r["epochs"] == T]))


def _summary(rows: list[dict[str, Any]], p: dict[str, Any]) -> str:
    T = max(p["epochs"])
    lines = [
        "Table 2 adapted to scikit-learn's digits (stated; the paper uses MNIST):",
        "",
        "| parameter | paper (MNIST) | here (digits) |",
        "|---|---|---|",
        "| C (clipping bound) | 2 | 2 |",
        "| delta_0 | 1e-5 | 1e-5 |",
        "| eps_0 | [0.05, 1] | each client from a Table 3 distribution |",
        "| eta | 0.05 | 0.05 |",
        f"| m (clients) | 100 | {p['clients']} |",
        f"| n (training samples) | 60,000 | {p['n_train']} ({p['n_test']} held out) |",
        f"| T (epochs) | 50 | {', '.join(map(str, p['epochs']))} |",
        "| model | PCA-60 + feed-forward ReLU net | logistic regression on 64 pixels / 16 + constant |",
        "",
        f"Mean over {p['reps']} repetition(s) at T = {T}. 'reference': every client at eps_0 = {REFERENCE_EPS:g}, the largest accepted budget (noise 1/700 of the eps = 1 scale). "
        f"E-APES eps (delta = {p['central_delta']:g}) is for one epoch and the median client: an approximation, not a bound; "
        "the Gaussian mechanism has no rigorous clone bound, and the T epochs compose on top of it.",
        "",
        "| budgets | smallest eps_0 | its noise sd | train accuracy | test accuracy | E-APES eps per epoch |",
        "|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["budgets"] for r in rows):
        eps_min = _mean(rows, name, T, "eps_min")
        lines.append(
            f"| {name} | {eps_min:.3g} | {noise_sd(eps_min):.3g} | {_mean(rows, name, T, 'train_accuracy'):.3f} "
            f"| {_mean(rows, name, T, 'test_accuracy'):.3f} | {_eapes_cell(_mean(rows, name, T, 'eapes_epoch_epsilon'))} |"
        )
    lines += [
        "",
        f"**The paper's numbers beside ours.** The paper reports {PAPER_TEST_ACCURACY:.2%} test accuracy on MNIST after about "
        "50 epochs with eps_0 in [0.05, 1] (§4.1), and Figure 5 (training accuracy per budget distribution) without numbers "
        "in the text. The nearly noiseless reference row shows what the model reaches here; the budget rows show what "
        "Algorithm 1's noise leaves of it.",
        "",
        "**Why some rows are near chance (0.1 for 10 classes).** Algorithm 1 (line 7) gives each client its own Gaussian noise, "
        f"sd = 2C/m sqrt(2 ln(1.25/delta_0)) / eps_i = {noise_sd(1.0):.3g} / eps_i per coordinate, and every client's step "
        f"applies its noise unaveraged (line 13), while the clipped gradient has norm at most C = {CLIP:g}. The rows whose "
        "smallest eps_0 is near 0.01 (Uniform 2 and Gauss 3, clipped to [0.01, 2] in Table 3) have clients whose noise sd is about "
        f"{noise_sd(0.01):.3g} per coordinate, "
        f"{noise_sd(0.01) / CLIP:.0f} times the whole clipped gradient's norm, on every coordinate: those few "
        "clients' steps drown the others' (in Gauss 3 the five weakest of 100 clients carry about 99% of the noise "
        "variance), and accuracy stays near chance. The noise depends on m = 100, not on the samples per client, so MNIST "
        "(600 samples per client) would see the same scale. Neither a larger step (eta = 0.5) nor more epochs (T = 50) "
        "lifts these rows in our probes (Uniform 1: 0.42 at T = 5, 0.60 at T = 50; Gauss 3: 0.10-0.20 at both): it is the "
        "algorithm's noise at these budgets, not an under-trained model. Quick mode (T <= 5) lowers every row further.",
    ]
    return "\n".join(lines) + "\n"


def _eapes_cell(value: float) -> str:
    return number(value, 3)  # NaN, a dash: the reference run has no privacy guarantee to state


def _figure(rows: list[dict[str, Any]], epochs_grid: tuple[int, ...]):
    with page_style() as plt:
        fig, ax = plt.subplots(figsize=(PAGE_WIDTH / 2, 2.8))
        handles, labels = [], []
        for j, name in enumerate(dict.fromkeys(r["budgets"] for r in rows)):
            (line,) = ax.plot(
                epochs_grid, [_mean(rows, name, T, "train_accuracy") for T in epochs_grid], **series_style(j)
            )
            handles.append(line)
            labels.append(name)
        ax.set_xlabel("epochs T")
        ax.set_ylabel("training accuracy")
        legend_and_caption(
            fig, handles, labels, ncol=3, caption="Algorithm 1 on digits, m = 100 clients, budgets from Table 3."
        )
    return fig
