"""Session 90: where the passages that hold the answer decide nothing and the question names a place, the answer's
own article that calls it the first only of another place, and does not name the place asked, withholds it ("Lake
Van is the largest lake in Turkey", for the largest lake in Scotland). Forty superlative questions that name a
place, written down with their answers before anything was run (questions.jsonl), answered against the Wikipedia
summaries by the cascade with the rank rule as it is (``article-first-elsewhere``) and as it was at e0b23ee, side
by side, each question from the same warm state. ``--development`` answers the 280 superlative questions of sessions
88 and 89 (development data) instead.

    .venv/bin/python docs/results/article-first-elsewhere-s90/run.py \\
        > docs/results/article-first-elsewhere-s90/records.jsonl
    .venv/bin/python docs/results/article-first-elsewhere-s90/run.py --development \\
        > docs/results/article-first-elsewhere-s90/development.jsonl
"""
import sys
from pathlib import Path

from eval.side_by_side import print_rule_records

DEVELOPMENT = ("narrowed-superlatives-s88", "qualified-superlatives-s88", "titled-by-kind-s89", "titled-folded-s89",
               "ranked-elsewhere-s89", "first-elsewhere-s89", "first-elsewhere-article-s89")
print_rule_records(Path(__file__).parent, "e0b23ee", "article-first-elsewhere", DEVELOPMENT, sys.argv)
