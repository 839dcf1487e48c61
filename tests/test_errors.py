"""One classification of the errors a user can mend (pipeline.errors), read by the app's front doors
(app.errors.describe) and by the measurement commands (eval.contexts.reports_errors)."""

from __future__ import annotations

import pytest

from app.errors import describe
from components.answer_probe import AnswerProbeError
from components.answerability import AnswerabilityModelError
from components.generator import PromptTooLongError
from components.index import IndexLoadError
from components.model_files import ModelFileError
from components.probe_router import ProbeRouterError
from components.question_type import QuestionTypeModelError
from components.retrieval_gate import ProbeModelError, RetrievalGateError
from components.sufficiency import SufficiencyModelError
from eval.contexts import reports_errors
from pipeline.configuration import ConfigurationError, QuestionError
from pipeline.errors import EXIT_RESOURCE, EXIT_USAGE

MODEL_FILE_ERRORS = [ModelFileError, AnswerProbeError, AnswerabilityModelError,
                     ProbeRouterError, QuestionTypeModelError, ProbeModelError, RetrievalGateError,
                     SufficiencyModelError]
"""Every component's "a model file is missing, unreadable or inconsistent"."""


class TestClassification:
    @pytest.mark.parametrize("error", MODEL_FILE_ERRORS, ids=lambda e: f"{e.__module__}.{e.__name__}")
    def test_a_damaged_model_file_is_a_missing_resource_everywhere(self, error):
        """A damaged answerability model or probe router (``--probe-router bad.json``) was told apart
        from a damaged generator file: the API had no message for it (an internal error), the command
        line exited 2 as for a mistyped option, and the measurement commands printed a traceback."""
        problem = describe(error("answerability model file x.json is not valid JSON"))
        assert problem is not None and (problem.status, problem.exit_code) == (503, EXIT_RESOURCE)

    @pytest.mark.parametrize("error", [QuestionError, ConfigurationError, PromptTooLongError, IndexLoadError,
                                       *MODEL_FILE_ERRORS], ids=lambda e: e.__name__)
    def test_the_measurement_commands_exit_as_the_app_does(self, error, capsys):
        exc = error("what went wrong")

        @reports_errors
        def command() -> int:
            raise exc

        problem = describe(exc)
        assert problem is not None and problem.exit_code in (EXIT_USAGE, EXIT_RESOURCE)
        assert command() == problem.exit_code
        assert capsys.readouterr().err == "error: what went wrong\n"

    def test_a_bug_is_not_dressed_up_as_the_users_mistake(self):
        """An error no classification names keeps its traceback (``describe`` says None)."""
        assert describe(KeyError("row")) is None

        @reports_errors
        def command() -> int:
            raise KeyError("row")

        with pytest.raises(KeyError):
            command()
