"""Argparse types the command lines share (the app's and the measurement commands')."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable


def whole_number(minimum: int = 0, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``minimum`` (to ``maximum``, when given)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if maximum is not None and not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be {minimum} to {maximum}, got {value}")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value
    return parse


def run_command(main: Callable[[], int | None]) -> int:
    """Run a command line's ``main`` and give its exit status, quietly when the reader of its output goes away
    first (``python -m eval.pool ... | head``): exit status 1 and no ``BrokenPipeError`` traceback. Standard output
    is then pointed at the null device, as Python's notes on SIGPIPE advise, so that the interpreter's own flush at
    exit does not fail again. Any other error is raised as it was."""
    try:
        try:
            status = main()
        except SystemExit:  # argparse's --help and its usage errors: what they printed is written here, not at exit
            sys.stdout.flush()
            raise
        sys.stdout.flush()  # the last lines are written here when standard output is a pipe
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return status or 0
