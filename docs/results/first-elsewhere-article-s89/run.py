"""Session 89, the second form: a passage that ranks the answer nowhere and calls it the first only of another place
than the question's withholds it as a rank does, unless it or the answer's own article names the question's place
("the highest mountain in Africa" keeps Mount Kilimanjaro for Tanzania, "a large dormant volcano in Tanzania").
Forty superlative questions that name a country, written down with their answers before anything was run
(questions.jsonl), answered against the Wikipedia summaries by the cascade with the rank rule as it is
(``first-elsewhere-article``) and as it was at 50084fa, side by side, each question from the same warm state.
``--development`` answers the 240 superlative questions of sessions 88 and 89 before it (development data) instead.

    .venv/bin/python docs/results/first-elsewhere-article-s89/run.py \\
        > docs/results/first-elsewhere-article-s89/records.jsonl
    .venv/bin/python docs/results/first-elsewhere-article-s89/run.py --development \\
        > docs/results/first-elsewhere-article-s89/development.jsonl
"""
import sys
from pathlib import Path

from eval.side_by_side import print_rule_records

DEVELOPMENT = ("narrowed-superlatives-s88", "qualified-superlatives-s88", "titled-by-kind-s89", "titled-folded-s89",
               "ranked-elsewhere-s89", "first-elsewhere-s89")
print_rule_records(Path(__file__).parent, "50084fa", "first-elsewhere-article", DEVELOPMENT, sys.argv)
