"""Session 88's fix after the bar ran: a superlative joined to another ("the largest and most populous island of
Greece") shares what follows it, and a capitalized word before the noun narrows it ("(Largest Greek island)"). Both
sets of forty superlative questions, answered by the cascade with the rank rule as it is and as it was at def59bc
(before the fix; put back in the module for its turn), side by side, each question from the same warm state.

    .venv/bin/python docs/results/narrowed-superlatives-s88/coordination.py \
        > docs/results/narrowed-superlatives-s88/coordination.jsonl
"""
import json
import sys
import tempfile
from pathlib import Path

from eval.side_by_side import rule_readings, written_questions_records

HERE = Path(__file__).parent
READINGS = rule_readings("def59bc", shipped="fixed")
with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as both:
    for questions in (HERE / "questions.jsonl", HERE.parent / "qualified-superlatives-s88" / "questions.jsonl"):
        both.write(questions.read_text(encoding="utf-8"))
for record in written_questions_records(Path(both.name), "cascade", READINGS):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
