"""Command-line mistakes, each told in one line that names it and says what to type instead.

argparse on its own prints the usage of the top-level parser for a mistake in a
sub-command (`sync --time-limt` showed the server's options), reads a misspelled option's
value as a command (`--libary PATH` was "invalid choice: PATH"), and lets a port number
through that the socket layer then rejects with a traceback.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import NoReturn

PORT_MAX = 65_535


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr, naming the (sub-)command;
    its sub-command parsers are of the same class (argparse makes them so)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def port(value: str) -> int:
    """A TCP port number, 0 (any free port) to 65535."""
    if not value.strip().isdigit() or int(value) > PORT_MAX:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a port number; give a whole number from 0 to {PORT_MAX}"
        )
    return int(value)


def seconds(value: str) -> float:
    """A duration: a finite number of seconds, 0 or more (float() takes -5, nan and inf)."""
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number < float("inf"):  # NaN fails every comparison
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a duration; give a number of seconds, 0 or more"
        )
    return number


KEY_NAME_MAX = 100


def key_name(value: str) -> str:
    """A key's name: `keys list` shows it on the key's one line, so it is printable text."""
    name = value.strip()
    if not 1 <= len(name) <= KEY_NAME_MAX or not name.isprintable():
        raise argparse.ArgumentTypeError(
            f"{value[:40]!r} is not a usable name; give 1 to {KEY_NAME_MAX} characters on "
            "one line, without tabs or control characters"
        )
    return name


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _takes_value(parser: argparse.ArgumentParser, option: str) -> bool:
    action = parser._option_string_actions.get(option)
    return action is not None and action.nargs != 0


def check_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Exit with one line when `argv` has an option no parser on its path knows, from the
    parser of the (sub-)command it was given to, naming the nearest valid option.

    Walks the arguments as argparse will: an option's value is skipped, a word naming a
    sub-command moves on to that sub-command's parser (whose options are then the valid
    ones), and an unambiguous prefix of an option stands for it, as argparse allows.
    """
    current, known = parser, set(parser._option_string_actions)
    skip_value = False
    for token in argv:
        if skip_value:
            skip_value = False
            continue
        if token == "--":
            return
        if token.startswith("--"):
            option = token.split("=", 1)[0]
            if option not in known:
                completions = [name for name in known if name.startswith(option)]
                if len(completions) != 1:
                    _unknown(current, option, known)
                option = completions[0]
            skip_value = "=" not in token and _takes_value(current, option)
            continue
        command = _commands(current).get(token)
        if command is not None:
            current = command
            known = set(command._option_string_actions)


def _unknown(parser: argparse.ArgumentParser, option: str, known: set[str]) -> NoReturn:
    near = difflib.get_close_matches(option, sorted(known), n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]}?" if near else ""
    parser.error(f"unknown option {option}{hint}")
