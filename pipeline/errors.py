"""Which errors a user can mend, and the exit status each kind gives: one classification for every
command that runs the pipeline (the app's front doors in ``app.errors``, the measurement commands
in ``eval.contexts``), so the same mistake is reported the same way by all of them."""

from __future__ import annotations

from components.embedder import EmbedderError
from components.generator import PromptTooLongError
from components.index import IndexLoadError
from components.model_files import ModelFileError
from components.reranker import RerankerError
from components.sources import SourceError
from pipeline.configuration import ConfigurationError, QuestionError
from router.model import RouterError

EXIT_USAGE, EXIT_RESOURCE, EXIT_INTERRUPTED = 2, 3, 130
"""Exit statuses: what was asked cannot be done as asked; what it needs cannot be loaded; Ctrl-C."""

INPUT_ERRORS: tuple[type[Exception], ...] = (QuestionError, ConfigurationError, PromptTooLongError)
"""What was asked is wrong: a bad question, an unknown or out-of-range setting, a prompt longer
than the model's window. Mended by asking differently (exit 2, HTTP 400)."""

RESOURCE_ERRORS: tuple[type[Exception], ...] = (IndexLoadError, ModelFileError, RouterError, SourceError,
                                                EmbedderError, RerankerError)
"""What the run needs cannot be loaded: a missing or damaged index, a missing model or package.
Mended on the machine, not in the request (exit 3, HTTP 503)."""
