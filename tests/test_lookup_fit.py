"""Choosing the prompt-lookup draft length from recorded train runs (no model run)."""

import argparse

import pytest

from training.lookup import choose, parse_grid, table


def run(ms, passes, prediction="Paris", f1=1.0):
    return {"prediction": prediction, "f1": f1, "latency_ms": ms, "generate_ms": ms - 10, "output_tokens": 5,
            "decode_passes": passes}


class TestLookupFit:
    RECORDS = [
        {"id": "a", "dataset": "squad", "runs": {"0": run(1000, 4), "2": run(1100, 3), "4": run(900, 2, "Lyon", 0.0)}},
        {"id": "b", "dataset": "hotpotqa", "runs": {"0": run(2000, 6), "2": run(1900, 4), "4": run(1900, 3)}},
        {"id": "c", "dataset": "squad", "runs": {"0": run(5000, 9)}},  # not every length ran: left out
    ]

    def test_table_compares_lengths_on_the_same_questions(self):
        rows = {row["lookup_tokens"]: row for row in table(self.RECORDS)}
        assert set(rows) == {0, 2, 4} and all(row["questions"] == 2 for row in rows.values())
        assert rows[0]["latency_mean_ms"] == 1500 and rows[4]["latency_mean_ms"] == 1400
        assert (rows[0]["decode_passes_mean"], rows[4]["decode_passes_mean"]) == (5, 2.5)
        assert (rows[0]["changed"], rows[2]["changed"], rows[4]["changed"]) == (0, 0, 1)
        assert rows[4]["f1"] == 50.0

    def test_the_fastest_mean_wins_and_ties_go_to_the_shorter_draft(self):
        assert choose(table(self.RECORDS))["lookup_tokens"] == 4
        tied = [{"id": "a", "dataset": "squad", "runs": {"0": run(1000, 4), "2": run(1000, 2)}}]
        assert choose(table(tied))["lookup_tokens"] == 0

    @pytest.mark.parametrize("text", ["2,4", "-1,0", "a,b", ""])
    def test_grid_must_hold_the_reference(self, text):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_grid(text)
        assert parse_grid("4, 0,2,2") == (0, 2, 4)
