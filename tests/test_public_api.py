"""The public API people can guess (issue 6, deliverable 6), and its one-line named errors (deliverable 5)."""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re
import subprocess
import sys

import numpy as np
import pytest

import shuffledp
import shuffledp.randomizers as randomizers_pkg
from shuffledp.errors import PrivacyParameterError, ShuffleDPError
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.registry import available_randomizers, randomizer_class, size_argument


def test_top_level_imports():
    from shuffledp import (  # noqa: F401
        DomainError,
        PrivacyParameterError,
        ShuffleDPError,
        VariationRatio,
        local_epsilon,
        shuffle_epsilon,
        shuffle_epsilon_lower,
    )
    from shuffledp.accounting.bounds import shuffle_epsilon as defined

    assert shuffle_epsilon is defined
    assert issubclass(DomainError, ShuffleDPError) and issubclass(PrivacyParameterError, ValueError)
    for name in shuffledp.__all__:
        assert getattr(shuffledp, name) is not None
    assert set(shuffledp.__all__) <= set(dir(shuffledp))


def test_submodules_are_attributes_before_they_are_imported():
    code = (
        "import shuffledp.accounting as acc\n"
        "assert acc.subsampling.SECRET_SAMPLE.startswith('secret sample')\n"
        "assert acc.SampledEvent is acc.events.SampledEvent\n"
        "try:\n    acc.no_such_module\nexcept AttributeError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "has no attribute 'no_such_module'" in out


def test_accounting_exports_composition_and_population():
    import shuffledp.accounting as acc
    from shuffledp.accounting import (  # noqa: F401
        advanced_composition,
        anonymous_population,
        available_methods,
        basic_composition,
        composed_local_epsilon,
        composed_shuffle_epsilon,
        group_composition,
        matching_population,
        shuffle_pld,
        tight_composition_epsilon,
    )

    for name in acc.__all__:
        assert callable(getattr(acc, name)) or name.isupper(), name
    assert basic_composition(1.0, 1e-6, 3) == (3.0, 3e-6)
    assert anonymous_population(100, corrupted=10, deanonymized=5) == 85


def test_unknown_attributes_still_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        shuffledp.nope  # noqa: B018
    with pytest.raises(ImportError):
        from shuffledp.randomizers import Nope  # noqa: F401


def _defined_randomizer_classes() -> set[str]:
    """Every public concrete LocalRandomizer subclass defined in a module of shuffledp.randomizers."""
    names = set()
    for info in pkgutil.iter_modules(randomizers_pkg.__path__):
        module = importlib.import_module(f"shuffledp.randomizers.{info.name}")
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, LocalRandomizer)
                and obj.__module__ == module.__name__
                and not inspect.isabstract(obj)
                and not name.startswith("_")
            ):
                names.add(name)
    return names


def test_randomizers_all_lists_every_registry_class_and_every_randomizer():
    exported = set(randomizers_pkg.__all__)
    registry = {randomizer_class(name).__name__ for name in available_randomizers()}
    assert registry <= exported
    assert _defined_randomizer_classes() <= exported
    for name in exported:
        assert getattr(randomizers_pkg, name) is not None, name
    from shuffledp.randomizers import Laplace, MinkowskiResponse  # noqa: F401

    assert MinkowskiResponse(epsilon=3.0, dim=2).epsilon == 3.0


def test_import_shuffledp_is_cheap():
    """No numpy, scipy or matplotlib until something is used."""
    code = (
        "import sys, shuffledp; print(sorted(m for m in ('numpy', 'scipy', 'matplotlib', 'typer') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]"


def test_version_is_the_installed_distributions():
    from importlib.metadata import version

    assert shuffledp.__version__ == version("shuffledp")


# --- public functions: bad input raises a ShuffleDPError naming the parameter ---------

NOT_POSITIVE = [math.nan, math.inf, -math.inf, -1.0, 0.0, "abc", None, 1e-300]
NOT_A_PROBABILITY = [math.nan, math.inf, -1.0, 0.0, 1.0, 2.0, "abc"]
NOT_A_COUNT = [0, -1, 1.5, math.nan, math.inf, "10", True]


def _accounting_rows():
    from shuffledp import VariationRatio, local_epsilon, shuffle_epsilon, shuffle_epsilon_lower
    from shuffledp.accounting import (
        advanced_composition,
        anonymous_population,
        basic_composition,
        composed_local_epsilon,
        composed_shuffle_epsilon,
        group_composition,
    )

    rounds = list(inspect.signature(composed_shuffle_epsilon).parameters)[2]  # "k" today, "rounds" after the rename
    for fn in (shuffle_epsilon, shuffle_epsilon_lower):
        for v in NOT_POSITIVE:
            if v is not None:
                yield pytest.param(fn, (1000, 1e-6), {"eps0": v}, "eps0", id=f"{fn.__name__} eps0={v!r}")
        for v in NOT_A_COUNT:
            yield pytest.param(fn, (v, 1e-6), {"eps0": 1.0}, "n", id=f"{fn.__name__} n={v!r}")
        for v in NOT_A_PROBABILITY:
            yield pytest.param(fn, (1000, v), {"eps0": 1.0}, "delta", id=f"{fn.__name__} delta={v!r}")
        yield pytest.param(fn, (1000, 1e-6), {"eps0": 1.0, "method": "nope"}, "method", id=f"{fn.__name__} method")
        yield pytest.param(fn, (1000, 1e-6), {}, "eps0", id=f"{fn.__name__} neither eps0 nor params")
        yield pytest.param(fn, (1000, 1e-6), {"params": 2.0}, "params", id=f"{fn.__name__} params type")
    for v in NOT_POSITIVE:
        yield pytest.param(local_epsilon, (v, 1000, 1e-6), {}, "target_epsilon", id=f"local_epsilon target={v!r}")
    yield pytest.param(local_epsilon, (0.5, 0, 1e-6), {}, "n", id="local_epsilon n=0")
    yield pytest.param(local_epsilon, (0.5, 1000, 1.0), {}, "delta", id="local_epsilon delta=1")
    yield pytest.param(local_epsilon, (0.5, 1000, 1e-6), {"family": "bogus"}, "family", id="local_epsilon family")
    yield pytest.param(
        local_epsilon, (0.5, 1000, 1e-6), {"max_epsilon": math.nan}, "max_epsilon", id="local_epsilon max nan"
    )
    yield pytest.param(
        local_epsilon,
        (0.5, 1000, 1e-6),
        {"min_epsilon": 2.0, "max_epsilon": 1.0},
        "min_epsilon",
        id="local_epsilon lo>hi",
    )
    for v in NOT_A_COUNT:
        yield pytest.param(
            composed_shuffle_epsilon,
            (1000, 1e-6, v),
            {"eps0": 1.0},
            rounds,
            id=f"composed_shuffle_epsilon rounds={v!r}",
        )
        yield pytest.param(
            composed_local_epsilon,
            (0.5, 1000, 1e-6, v),
            {"method": "basic"},
            rounds,
            id=f"composed_local_epsilon rounds={v!r}",
        )
    yield pytest.param(composed_shuffle_epsilon, (1000, 1e-6, 2), {"eps0": math.nan}, "eps0", id="composed eps0=nan")
    yield pytest.param(composed_shuffle_epsilon, (1000, 0.0, 2), {"eps0": 1.0}, "delta", id="composed delta=0")
    yield pytest.param(
        composed_shuffle_epsilon, (1000, 1e-6, 2), {"eps0": 1.0, "method": "nope"}, "method", id="composed method"
    )
    yield pytest.param(
        composed_local_epsilon, (0.5, 1000, 1e-6, 2), {"method": "nope"}, "method", id="composed_local method"
    )
    yield pytest.param(basic_composition, (-1.0, 1e-6, 2), {}, "epsilon", id="basic epsilon<0")
    yield pytest.param(basic_composition, (1.0, 2.0, 2), {}, "delta", id="basic delta>1")
    yield pytest.param(advanced_composition, (1.0, 1e-6, 2, 0.0), {}, "delta_slack", id="advanced slack=0")
    yield pytest.param(group_composition, (1.0, 1e-6, 0), {}, "size", id="group size=0")
    yield pytest.param(anonymous_population, (0,), {}, "group_size", id="population group_size=0")
    for field, args in {
        "p": (1.0, 0.0, 2.0, 2.0),
        "beta": (2.0, 0.5, 2.0, 2.0),
        "q0": (2.0, 0.1, 0.5, 2.0),
        "q1": (2.0, 0.1, 2.0, math.nan),
    }.items():
        yield pytest.param(VariationRatio, args, {}, field, id=f"VariationRatio {field}")
    for v in NOT_POSITIVE:
        if v is not None:
            yield pytest.param(VariationRatio.from_ldp, (v,), {}, "eps0", id=f"VariationRatio.from_ldp {v!r}")


def assert_names(message: str, name: str) -> None:
    """One line that names the parameter as a word (not e.g. the 'n' inside 'an integer')."""
    assert "\n" not in message
    assert re.search(rf"(?<![\w-]){re.escape(name)}(?!\w)", message), (name, message)
    assert re.search(r"must|need|allowed|available|give exactly one|use one of|unknown", message), message


@pytest.mark.parametrize("fn,args,kwargs,name", list(_accounting_rows()))
def test_public_function_bad_input_names_the_parameter(fn, args, kwargs, name):
    with pytest.raises(ShuffleDPError) as info:
        fn(*args, **kwargs)
    assert_names(str(info.value), name)


def _randomizer_rows():
    """Through the registry, which calls each constructor with its size keyword (dim, k, high)."""
    for reg in available_randomizers():
        cls = randomizer_class(reg).__name__
        for v in NOT_POSITIVE:
            if v is not None:
                yield pytest.param(reg, v, 2, "epsilon", id=f"{cls} epsilon={v!r}")
        size = size_argument(reg)
        if size is not None:
            for v in [0, -1, 1.5, "abc", math.nan]:
                yield pytest.param(reg, 1.0, v, size, id=f"{cls} {size}={v!r}")


@pytest.mark.parametrize("registry_name,epsilon,size,name", list(_randomizer_rows()))
def test_randomizer_constructor_bad_input_names_the_parameter(registry_name, epsilon, size, name):
    from shuffledp.randomizers import make_randomizer

    with pytest.raises(ShuffleDPError) as info:
        make_randomizer(registry_name, epsilon, dim=size)
    assert_names(str(info.value), name)


def test_epsilon_floor_is_float_resolution():
    from shuffledp._util.validation import EPSILON_MIN, check_epsilon

    assert math.exp(EPSILON_MIN) > 1.0 and math.exp(EPSILON_MIN / 2) == 1.0  # the first epsilon float64 can tell from 0
    assert check_epsilon(EPSILON_MIN, "eps0") == EPSILON_MIN
    with pytest.raises(
        PrivacyParameterError,
        match=r"eps0 must be a number in \[2\^-52, inf\); got .* \(below 2\^-52, e\^epsilon rounds to 1",
    ):
        check_epsilon(EPSILON_MIN / 2, "eps0")


# --- valid inputs at the edge of float64: a number or a ShuffleDPError, never another exception ---


def _edge_rows():
    from shuffledp import shuffle_epsilon, shuffle_epsilon_lower
    from shuffledp.randomizers import MinkowskiResponse, make_randomizer

    yield pytest.param(lambda: shuffle_epsilon(10_000, 1e-6, eps0=800.0), id="shuffle_epsilon eps0=800")
    # (clones: the default variation-ratio method takes ~20 s here before failing, too slow for this table)
    yield pytest.param(lambda: shuffle_epsilon(10_000, 1e-300, eps0=1.0, method="clones"), id="clones delta=1e-300")
    yield pytest.param(lambda: shuffle_epsilon_lower(10_000, 5e-324, eps0=1.0), id="lower delta=5e-324")
    yield pytest.param(
        lambda: shuffle_epsilon(10**308, 1e-6, eps0=1.0),
        id="shuffle_epsilon n=1e308",
    )
    yield pytest.param(lambda: shuffle_epsilon(1000, 1e-6, eps0=1e-10), id="shuffle_epsilon eps0=1e-10")
    yield pytest.param(
        lambda: MinkowskiResponse(3.0, dim=114).amplification_parameters(),
        id="MinkowskiResponse dim=114",
    )
    for name in available_randomizers():
        yield pytest.param(
            lambda name=name: make_randomizer(name, 800.0, dim=2).amplification_parameters(), id=f"{name} epsilon=800"
        )


@pytest.mark.parametrize("call", list(_edge_rows()))
def test_valid_edge_input_gives_a_value_or_a_named_error(call):
    try:
        value = call()
    except ShuffleDPError as exc:
        assert "\n" not in str(exc)
    else:
        assert value is not None


def test_every_accepted_eps0_has_generic_parameters_or_names_eps0():
    """VariationRatio.from_ldp gives parameters, or an error naming eps0 (never one about an internal beta or p)."""
    from shuffledp import VariationRatio
    from shuffledp._util.validation import EPSILON_MIN

    for eps0 in [EPSILON_MIN, *(float(x) for x in 10.0 ** -np.linspace(4, 15.6, 200))]:
        try:
            VariationRatio.from_ldp(eps0)
        except PrivacyParameterError as exc:
            assert str(exc).startswith("eps0 must be a number in [1e-6, 700]"), str(exc)
