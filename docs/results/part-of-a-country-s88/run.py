"""The chat's knowledge base (the Wikipedia summaries) on twenty-eight "largest city" questions written down with
their answers before anything was run (questions.jsonl): the cascade as shipped, and the cascade with the rank rule's
reading of a country's part as it was before session 88 (no "(Largest city in Quebec, Canada)"), side by side, each
question from the same warm state. The old reading is put back in the module for its turn: it is no setting.

    .venv/bin/python docs/results/part-of-a-country-s88/run.py > docs/results/part-of-a-country-s88/records.jsonl
"""
import importlib
import json
import re
import sys
from pathlib import Path

from eval.side_by_side import written_questions_records

check = importlib.import_module("nodes.check_answer")  # the module (the package gives its node function that name)
READINGS = {"shipped": check._IN_A_PART,
            "before": re.compile(r"\b(?:(?:most|least)\s+[^\W\d_]+|[^\W\d_]+est)(?:\s+city)?\s+(?:of|in)\s+the\s+"
                                 rf"(?:[A-Z][\w'’-]*\s+){{0,3}}(?:{check.SUBDIVISIONS})\b(?:\s+of\s+(?P<unit>{check._CAPS}))?"
                                 r"(?P<part>(?!))?")}
for record in written_questions_records(Path(__file__).parent / "questions.jsonl", "cascade",
                                        {name: (lambda p=p: setattr(check, "_IN_A_PART", p)) for name, p in READINGS.items()}):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
