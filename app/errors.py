"""One mapping from the errors a question or an upload can meet to what every front door says.

The HTTP API answers with ``status``, the command line exits with ``exit_code``, the chat shows the
message; all three read :func:`describe`, so the same bad input gives the same message everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.errors import EXIT_INTERRUPTED, EXIT_RESOURCE, EXIT_USAGE, INPUT_ERRORS, RESOURCE_ERRORS

__all__ = ["EXIT_INTERRUPTED", "EXIT_RESOURCE", "EXIT_USAGE", "HANDLED", "NotFoundError", "Problem", "RequestError",
           "TooBusyError", "describe"]


class RequestError(ValueError):
    """A request the service refuses that is not a question or configuration value: a bad session
    id, an upload from outside the upload folder, a file over the size limit."""


class NotFoundError(LookupError):
    """A document or conversation the request names does not exist (or is not the caller's)."""


class TooBusyError(RuntimeError):
    """The service is at its limit of questions in flight; try again shortly."""


@dataclass(frozen=True)
class Problem:
    status: int  # HTTP status
    exit_code: int  # command-line exit code
    message: str


_BAD_INPUT = (*INPUT_ERRORS, RequestError)
_UNAVAILABLE = (*RESOURCE_ERRORS, FileNotFoundError)  # a folder or file to ingest that is not there


def describe(exc: BaseException) -> Problem | None:
    """What to tell the user about ``exc``, or ``None`` for an error that is a bug (not the user's
    input, not a missing resource), which the caller reports as an internal error."""
    if isinstance(exc, _BAD_INPUT):
        return Problem(400, EXIT_USAGE, str(exc))
    if isinstance(exc, NotFoundError):
        return Problem(404, EXIT_USAGE, str(exc))
    if isinstance(exc, TooBusyError):  # too many requests at once: the client should come back shortly
        return Problem(429, EXIT_RESOURCE, str(exc))
    if isinstance(exc, _UNAVAILABLE):
        return Problem(503, EXIT_RESOURCE, str(exc))
    return None


HANDLED: tuple[type[BaseException], ...] = (*_BAD_INPUT, NotFoundError, TooBusyError, *_UNAVAILABLE)
"""The exception types :func:`describe` maps to a message."""
