"""Session 90, the second form: where the passages that hold the answer decide nothing and the question asks the
first of a place by a kind of thing that lies somewhere (a lake, a river, a city, ...), an answer whose own article
is in the knowledge base is withheld when neither that article nor a passage that holds it names the place ("Lake
Van" for the largest lake in Scotland). Forty superlative questions that name a place, written down with their
answers before anything was run (questions.jsonl), answered against the Wikipedia summaries by the cascade with the
rank rule as it is (``located-elsewhere``) and as it was at e0b23ee, side by side, each question from the same warm
state. ``--development`` answers the 320 superlative questions of sessions 88 to 90 before it (development data)
instead.

    .venv/bin/python docs/results/located-elsewhere-s90/run.py > docs/results/located-elsewhere-s90/records.jsonl
    .venv/bin/python docs/results/located-elsewhere-s90/run.py --development \\
        > docs/results/located-elsewhere-s90/development.jsonl
"""
import sys
from pathlib import Path

from eval.side_by_side import print_rule_records

DEVELOPMENT = ("narrowed-superlatives-s88", "qualified-superlatives-s88", "titled-by-kind-s89", "titled-folded-s89",
               "ranked-elsewhere-s89", "first-elsewhere-s89", "first-elsewhere-article-s89", "article-first-elsewhere-s90")
print_rule_records(Path(__file__).parent, "e0b23ee", "located-elsewhere", DEVELOPMENT, sys.argv)
