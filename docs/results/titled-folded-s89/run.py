"""Session 89, the second form: a passage is titled as the answer by the answer's words other than the noun the
question asks the first of, compared without accents. Forty superlative questions written down with their answers
before anything was run (questions.jsonl), answered against the Wikipedia summaries by the cascade with the rank
rule as it is (``titled-folded``) and as it was at 6fc2e63, side by side, each question from the same warm state.
``--development`` answers the eighty of session 88 and the forty of the first form (development data) instead.

    .venv/bin/python docs/results/titled-folded-s89/run.py > docs/results/titled-folded-s89/records.jsonl
    .venv/bin/python docs/results/titled-folded-s89/run.py --development \
        > docs/results/titled-folded-s89/development.jsonl
"""
import sys
from pathlib import Path

from eval.side_by_side import print_rule_records

DEVELOPMENT = ("narrowed-superlatives-s88", "qualified-superlatives-s88", "titled-by-kind-s89")
print_rule_records(Path(__file__).parent, "6fc2e63", "titled-folded", DEVELOPMENT, sys.argv)
