"""Plumbing of the ``shuffledp`` command line: option parsers and one-line errors.

* Option parsers validate every value at the boundary with the library's own
  validators (`shuffledp._util.validation`), under the option's name
  (``--eps0``), so a bad value never reaches the numerics.
* `OneLineGroup` prints every usage error and every
  `ShuffleDPError` as one ``error: ...`` line on stderr and
  exits with status 2 (also under ``typer.testing.CliRunner``, which calls ``main``).
* Help: boolean flags get no value placeholder, and ``{choices}`` placeholders in option
  help are filled from the registries only when help is shown (so that parsing other
  commands does not import every bound module).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from shuffledp._util import validation as V
from shuffledp.accounting._rounding import DELTA_MIN
from shuffledp.errors import DomainError, ExperimentError, PrivacyParameterError, ShuffleDPError
from shuffledp.params import EPS0_MAX, EPS0_MIN

try:  # recent typer vendors click as typer._click; older releases depend on click itself
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import exceptions as _click_errors  # type: ignore[no-redef]


# --- choices from the registries (imported on use) ---------------------------------------


def bound_methods(kind: str | None = None) -> list[str]:
    from shuffledp.accounting.bounds import available_methods

    return list(available_methods(kind))


def composition_methods() -> list[str]:
    from shuffledp.accounting.composition import COMPOSITION_METHODS

    return list(COMPOSITION_METHODS)


def randomizer_names() -> list[str]:
    from shuffledp.randomizers.registry import available_randomizers

    return available_randomizers()


def randomizer_sizes() -> list[str]:
    """What ``--dim`` means for each randomizer (the registry's size argument), as one help phrase."""
    from shuffledp.randomizers.registry import available_randomizers, size_argument

    by_size: dict[str | None, list[str]] = {}
    for name in available_randomizers():
        by_size.setdefault(size_argument(name), []).append(name)
    meaning = {
        "k": "the number of categories k for",
        "high": "the largest input (inputs 0..dim) for",
        "dim": "the dimension for",
    }
    parts = [f"{text} {', '.join(by_size[key])}" for key, text in meaning.items() if key in by_size]
    if None in by_size:
        parts.append(f"refused with {', '.join(by_size[None])} (no size)")
    return ["; ".join(parts)]


def sized_randomizers() -> list[str]:
    """The randomizers that take ``--dim``."""
    from shuffledp.randomizers.registry import available_randomizers, size_argument

    return [name for name in available_randomizers() if size_argument(name) is not None]


#: ``{name}`` placeholders allowed in option help, and the lists they expand to.
HELP_CHOICES: dict[str, Callable[[], list[str]]] = {
    "bound_methods": lambda: ["all", *bound_methods()],
    "upper_methods": lambda: bound_methods("upper"),
    "composition_methods": composition_methods,
    "composition_methods_or_all": lambda: ["all", *composition_methods()],
    "randomizers": randomizer_names,
    "randomizer_sizes": randomizer_sizes,
}


_PLACEHOLDER = re.compile(r"\{(" + "|".join(map(re.escape, HELP_CHOICES)) + r")\}")


def _fill_choices(help_text: str) -> str:
    """Replace each ``{registry}`` placeholder by its names; other braces (``{0..k}``) stay as written."""
    return _PLACEHOLDER.sub(lambda m: ", ".join(HELP_CHOICES[m.group(1)]()), help_text)


# --- parsers ---------------------------------------------------------------------------


def _checked(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A typer parser: ``check`` raises ShuffleDPError, reported as a bad option value."""

    def parse(value: Any) -> Any:
        if value is None:  # an optional option left out
            return None
        try:
            return check(value)
        except ShuffleDPError as exc:
            raise typer.BadParameter(str(exc)) from None

    return parse


def _integer_text(value: Any) -> Any:
    """``"1e6"`` -> 1000000 (exact integers only); anything else is returned for the validator to reject."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        return int(text, 10)
    except ValueError:
        pass
    try:
        number = Decimal(text)
    except InvalidOperation:
        return value
    # exact and not absurdly long (int() of 1e1000000000 would take minutes)
    if number.is_finite() and number == number.to_integral_value() and number.adjusted() < 400:
        return int(number)
    return value


def _real_text(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``check`` of the user's text read as a float (the API takes numbers, never numeric strings); an error
    quotes the text as typed ('nan', '1e-400'), not the float it was read as."""

    def run(value: Any) -> Any:
        if not isinstance(value, str):
            return check(value)
        try:
            number = float(value)
        except ValueError:
            return check(value)  # not a number: refused, quoting the text
        try:
            return check(number)
        except PrivacyParameterError as exc:
            message, read = str(exc), f"got {number!r}"
            if not message.endswith(read):
                raise
            raise PrivacyParameterError(message[: -len(read)] + f"got {value!r}") from None

    return run


def epsilon_option(name: str, maximum: float | None = None) -> Callable[[Any], Any]:
    """Epsilons >= 2^-52 (and at most ``maximum`` if given)."""

    def check(value: Any) -> float:
        number = V.check_epsilon(value, name)
        if maximum is not None and number > maximum:
            raise PrivacyParameterError(f"{name} must be at most {maximum:g}, got {value!r}")
        return number

    return _checked(_real_text(check))


def probability_option(name: str) -> Callable[[Any], Any]:
    return _checked(_real_text(lambda v: V.check_probability(v, name)))


#: The accepted ranges of the options the accounting prices, written as in every error and --help.
DELTA_RANGE = (DELTA_MIN, 1.0, "[1e-300, 1)")
EPS0_RANGE = (EPS0_MIN, EPS0_MAX, "[1e-6, 700]")


def range_error(name: str, interval: str, value: Any) -> PrivacyParameterError:
    """The one wording of a range error, at the command line and in --help: ``--delta must lie in [1e-300, 1), got '1e-400'``."""
    return PrivacyParameterError(f"{name} must lie in {interval}, got {value!r}")


def range_option(name: str, bounds: tuple[float, float, str]) -> Callable[[Any], Any]:
    """A number in ``bounds`` = (low, high, interval as written); ``[`` / ``]`` closed, ``(`` / ``)`` open."""
    low, high, interval = bounds

    def check(value: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise range_error(name, interval, value) from None
        low_ok = number >= low if interval.startswith("[") else number > low
        high_ok = number <= high if interval.endswith("]") else number < high
        if not (math.isfinite(number) and low_ok and high_ok):
            raise range_error(name, interval, value)
        return number

    return _checked(check)


def delta_option(name: str = "--delta") -> Callable[[Any], Any]:
    """A delta as the accountant takes it, in [1e-300, 1) (below, neglected masses cannot be charged in float64)."""
    return range_option(name, DELTA_RANGE)


def eps0_option(name: str = "--eps0") -> Callable[[Any], Any]:
    """A local epsilon as the accountant takes it, in [1e-6, 700] (e^eps0 must fit in float64)."""
    return range_option(name, EPS0_RANGE)


#: API phrases in library errors, and what they mean at the command line (``{composition}``: the
#: option that picks a composition method in this command).
_API_ADVICE = (
    (re.compile(r"use method='best' \(or '\w+'/'\w+'\)"), "use {composition} advanced or basic"),
    (re.compile(r",? or lower the search's low end \(min_epsilon, or calibrate's bracket\)"), ", or raise --target"),
    (re.compile(r"\bincrease n or delta\b"), "increase --n or --delta"),
    (re.compile(r"\bfewer rounds or a larger delta\b"), "fewer --rounds or a larger --delta"),
    (re.compile(r"\btarget_epsilon="), "--target "),
    (re.compile(r"^(out|only)\b"), r"--\1"),  # the experiment runner's arguments are these options
)


def cli_advice(message: str, composition: str = "--composition") -> str:
    """``message`` with the library's advice in the command line's words (options, not argument names)."""
    for pattern, replacement in _API_ADVICE:
        message = pattern.sub(replacement.format(composition=composition), message)
    return message


def count_option(name: str, minimum: int = 1, maximum: int = V.COUNT_MAX) -> Callable[[Any], Any]:
    """Integers in [minimum, maximum]; float literals such as ``1e6`` are accepted if exact."""

    def check(value: Any) -> int:
        number = _integer_text(value)
        if isinstance(number, int) and not minimum <= number <= maximum:
            number = value  # out of range: the message quotes the user's own text ('1e308')
        return V.check_positive_int(number, name, minimum, maximum)

    return _checked(check)


def directory_option(name: str) -> Callable[[Any], Any]:
    """A directory path; empty text is refused (it would silently mean the current directory)."""

    def check(value: Any) -> Path:
        if not str(value).strip():
            raise ExperimentError(f"{name} must name a directory, got {str(value)!r} (use . for the current directory)")
        return Path(value)

    return _checked(check)


def png_file_option(name: str) -> Callable[[Any], Any]:
    """A PNG file to write: its name ends in .png and its folder exists and is writable (checked before any work)."""

    def check(value: Any) -> Path:
        path = Path(str(value))
        if path.suffix.lower() != ".png" or path.is_dir():
            raise DomainError(f"{name} must name a .png file, got {str(value)!r}")
        folder = path.parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise DomainError(
                f"{name}: the folder {str(folder)!r} does not exist or is not writable, got {str(value)!r}"
            )
        return path

    return _checked(check)


def seed_option(name: str) -> Callable[[Any], Any]:
    return count_option(name, 0, V.SEED_MAX)


def choice_option(name: str, choices: Callable[[], list[str]], what: str) -> Callable[[Any], Any]:
    """A name from a registry (``choices`` is called only when the option is parsed)."""

    def parse(value: Any) -> Any:
        if value is None:
            return None
        allowed = choices()
        if value not in allowed:
            raise typer.BadParameter(f"{name}: unknown {what} {value!r}; allowed: {', '.join(allowed)}")
        return value

    return parse


# --- help and errors -------------------------------------------------------------------


class _HelpFormatting:
    """Flags without a value placeholder; registry placeholders filled in."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
            help_text = getattr(param, "help", None)
            if help_text and "{" in help_text:
                param.help = _fill_choices(help_text)
        super().format_help(ctx, formatter)  # type: ignore[misc]


class OneLineCommand(_HelpFormatting, TyperCommand):
    """A command whose help shows flags without placeholders."""


def _hint(exc: Any) -> str:
    ctx = getattr(exc, "ctx", None)
    return f" (see '{ctx.command_path} --help')" if ctx is not None else ""


def _message(exc: Any) -> str:
    """One line for a click usage error; our parsers' messages already name the option."""
    param = getattr(exc, "param", None)
    message = getattr(exc, "message", None)
    if (
        isinstance(exc, _click_errors.BadParameter)
        and param is not None
        and message
        and any(message.startswith(opt) for opt in getattr(param, "opts", ()))
    ):
        return message + _hint(exc)
    return exc.format_message() + _hint(exc)


def _fail(message: str, status: int) -> None:
    typer.echo("error: " + " ".join(message.split()), err=True)
    sys.exit(status)


class OneLineGroup(_HelpFormatting, TyperGroup):
    """Root group: usage errors and library errors are one ``error:`` line, exit status 2."""

    def main(
        self,
        args: Any = None,
        prog_name: Any = None,
        complete_var: Any = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _click_errors.ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # `shuffledp` alone: the help text itself
                if getattr(self, "rich_markup_mode", None) is None:  # rich help is printed while it is built
                    exc.show()
                sys.exit(exc.exit_code)
            _fail(_message(exc), exc.exit_code)
        except ShuffleDPError as exc:
            _fail(cli_advice(str(exc)), 2)
        except typer.Abort:  # typer.Abort is click.Abort where typer uses click itself
            _fail("aborted", 1)
        sys.exit(status if isinstance(status, int) else 0)
