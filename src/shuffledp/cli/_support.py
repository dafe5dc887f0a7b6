"""Plumbing of the ``shuffledp`` command line: option parsers and one-line errors.

* Option parsers validate every value at the boundary with the library's own
  validators (`shuffledp._util.validation`), under the option's name
  (``--eps0``), so a bad value never reaches the numerics.  A numeric option's range is an
  `shuffledp._util.validation.Interval`: its error (``--eps0 must be a number in [1e-6, 700]; got '0'``) and its --help
  (``Must be a number in [1e-6, 700].``) use the same words.
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
from shuffledp.accounting._rounding import COMPOSED_SEARCH_MAX_EPSILON as COMPOSED_SEARCH_MAX_EPSILON
from shuffledp.accounting._rounding import DELTA_RANGE as DELTA_RANGE
from shuffledp.accounting._rounding import MAX_DISTANCE as MAX_DISTANCE
from shuffledp.accounting._rounding import NOISE_EPSILON_RANGE as NOISE_EPSILON_RANGE
from shuffledp.accounting._rounding import RR_P_RANGE as RR_P_RANGE
from shuffledp.accounting._rounding import SEARCH_MAX_EPSILON as SEARCH_MAX_EPSILON
from shuffledp.accounting._rounding import SEARCH_MIN_EPSILON
from shuffledp.accounting._rounding import SGDL_EPSILON_RANGE as SGDL_EPSILON_RANGE
from shuffledp.errors import DomainError, ExperimentError, ShuffleDPError
from shuffledp.params import EPS0_RANGE as EPS0_RANGE

try:  # recent typer vendors click as typer._click; older releases depend on click itself
    from typer._click import exceptions as _click_errors
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import exceptions as _click_errors  # type: ignore[no-redef]
    from click import get_current_context  # type: ignore[no-redef]
    from click.core import ParameterSource  # type: ignore[no-redef]


# --- what the user typed ------------------------------------------------------------------

#: Key of `typed`'s record in the click context's ``meta`` (shared by a command and its parents).
_TYPED = "shuffledp.typed"


def record_typed(name: str, text: str) -> None:
    """Remember ``text``, the value of option ``name`` as typed, for messages that quote it (`typed`)."""
    ctx = get_current_context(silent=True)
    if ctx is not None:
        ctx.meta.setdefault(_TYPED, {})[name] = text


def typed(name: str, value: Any) -> str:
    """Option ``name``'s value as the user typed it (``2e-7``, not ``2e-07``); ``value`` as written if not typed.

    Messages quote what the user gave: a value parsed from ``1e13`` is quoted as ``1e13``, not ``10000000000000``.
    """
    ctx = get_current_context(silent=True)
    text = None if ctx is None else ctx.meta.get(_TYPED, {}).get(name)
    if text is not None:
        return text.strip()
    return repr(value) if isinstance(value, float) else str(value)


def given(ctx: Any, name: str) -> bool:
    """Whether parameter ``name`` (the Python name, ``min_bucket_size``) was given, not left at its default."""
    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)


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
    from shuffledp.randomizers.registry import available_randomizers, max_size, size_argument

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
    caps = [f"{bound_text(cap)} for {name}" for name in available_randomizers() if (cap := max_size(name)) is not None]
    if caps:
        parts.append(f"at most {', '.join(caps)} (what their amplification parameters compute in a few seconds)")
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


def _checked(check: Callable[[Any], Any], name: str = "") -> Callable[[Any], Any]:
    """A typer parser: ``check`` raises ShuffleDPError, reported as a bad option value; the text as typed
    is remembered under ``name`` (`typed`)."""

    def parse(value: Any) -> Any:
        if value is None:  # an optional option left out
            return None
        if name and isinstance(value, str):
            record_typed(name, value)
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


#: --max-epsilon of local-budget: above the search's low end, and e^eps0 must fit in float64.  (The ranges
#: and search bounds are re-exported from where the library defines them: command modules import no
#: private library module.)
SEARCH_CAP_RANGE = V.Interval(SEARCH_MIN_EPSILON, EPS0_RANGE.high, low_open=True)


#: Users per level of ``segmented optimize --counts``: n * ceil(m) blanket slots must stay below 2^53.
COUNTS_RANGE = V.Interval(1, 2**40, integer=True)
#: The one wording of a range error (for options whose range is not one `V.Interval`, e.g. a list).
range_message, bound_text = V.range_message, V.bound_text


def interval_option(name: str, interval: V.Interval | Callable[[], V.Interval]) -> Callable[[Any], Any]:
    """A number in ``interval`` (an integer if ``interval.integer``: float literals such as ``1e6`` accepted if
    exact); text that is not such a number is refused in the one wording of a range error
    (`shuffledp._util.validation.range_message`), quoting the text as typed ('nan', '1e-400').

    The parser's ``allowed()`` is what the error says is allowed: `_HelpFormatting` states it in the option's
    --help with the same words.  ``interval`` may be a function returning it, called when a value is parsed or
    help is shown (so that defining the option imports no library module).
    """

    def check(value: Any) -> Any:
        rng = interval() if callable(interval) else interval
        if isinstance(value, str):
            text = value
            if rng.integer:
                number = _integer_text(text)
            else:
                try:
                    number = float(text)
                except ValueError:
                    number = None
        else:
            text = number = value
        if isinstance(number, (int, float)) and not isinstance(number, bool) and number in rng:
            return int(number) if rng.integer else float(number)
        raise rng.error(name, text)

    parse = _checked(check, name)
    parse.allowed = lambda: (interval() if callable(interval) else interval).allowed  # type: ignore[attr-defined]
    return parse


def epsilon_option(name: str, maximum: float = math.inf) -> Callable[[Any], Any]:
    """Epsilons >= 2^-52 (float64 tells e^epsilon from 1), at most ``maximum``."""
    return interval_option(name, V.Interval(V.EPSILON_MIN, maximum))


def delta_option(name: str = "--delta") -> Callable[[Any], Any]:
    """A delta as the accountant takes it, in `DELTA_RANGE` (below, neglected masses cannot be charged in float64)."""
    return interval_option(name, DELTA_RANGE)


def eps0_option(name: str = "--eps0") -> Callable[[Any], Any]:
    """A local epsilon as the accountant takes it, in `EPS0_RANGE` (e^eps0 must fit in float64)."""
    return interval_option(name, EPS0_RANGE)


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
    return interval_option(name, V.Interval(minimum, maximum, integer=True))


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


def _parser_of(param: Any) -> Any:
    """The ``parser=`` function of a typer option (where this typer release keeps it), or None."""
    info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
    return getattr(info, "parser", None) or getattr(getattr(param, "type", None), "func", None)


class _HelpFormatting:
    """Flags without a value placeholder; registry placeholders filled in."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
            help_text = getattr(param, "help", None)
            if help_text and "{" in help_text:
                param.help = help_text = _fill_choices(help_text)
            allowed = getattr(_parser_of(param), "allowed", None)
            if help_text is not None and allowed is not None and allowed() not in help_text:
                param.help = f"{help_text} Must be {allowed()}."
        super().format_help(ctx, formatter)  # type: ignore[misc]


class OneLineCommand(_HelpFormatting, TyperCommand):
    """A command whose help shows flags without placeholders."""


def _hint(exc: Any) -> str:
    ctx = getattr(exc, "ctx", None)
    return f" (see '{ctx.command_path} --help')" if ctx is not None else ""


def _names(param: Any) -> tuple[str, ...]:
    """How a parameter is named on the command line: its options (``--n``), or an argument's ``ROLE``."""
    return (
        *getattr(param, "opts", ()),
        getattr(param, "metavar", None) or (getattr(param, "name", None) or "").upper(),
    )


#: A capital that opens a sentence of click's wording ("Missing option", ". Did you mean", "(Possible options").
_CLICK_CAPITAL = re.compile(r"(^|[.:] |\()([A-Z])(?=[a-z ])")


def in_cli_style(text: str) -> str:
    """click's own wording in the CLI's error style: sentences open in lower case, no closing period.

    Every other error line reads ``error: --option ...`` or ``error: unknown ...``; click's read
    ``Missing option '--n'.`` or ``No such command 'x'. Did you mean 'y'?``.  Capitals inside
    quotes or of a whole word (an argument's ``ROLE``) are kept.

    Examples
    --------
    >>> in_cli_style("No such command 'simulat'. Did you mean 'simulate'?")
    "no such command 'simulat'. did you mean 'simulate'?"
    >>> in_cli_style("Missing option '--dataset'."), in_cli_style("No such option: --bogus (Possible options: --out)")
    ("missing option '--dataset'", 'no such option: --bogus (possible options: --out)')
    >>> in_cli_style("Missing argument 'ROLE'.")
    "missing argument 'ROLE'"
    """
    text = text.strip()
    text = text[:-1] if text.endswith(".") else text
    return _CLICK_CAPITAL.sub(lambda m: m.group(1) + m.group(2).lower(), text)


def _message(exc: Any) -> str:
    """One line for a click usage error; our parsers' messages already name the option, click's are restyled."""
    param = getattr(exc, "param", None)
    message = getattr(exc, "message", None)
    if (
        isinstance(exc, _click_errors.BadParameter)
        and param is not None
        and message
        and any(message.startswith(name) for name in _names(param) if name)
    ):
        return message + _hint(exc)
    return in_cli_style(exc.format_message()) + _hint(exc)


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
