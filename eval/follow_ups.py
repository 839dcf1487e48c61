"""How well the condense step makes follow-ups standalone, on invented conversations.

``eval/follow_ups.json`` holds invented follow-ups of four kinds: a pronoun that refers back ("When
did she die?"), a question that names only a new subject ("what about Spain?"), a standalone question
that the refers-back test also sends to the rewrite ("Were Marie Curie and Albert Einstein of the same
nationality?"), each after one earlier turn; and *chain* cases, a pronoun after two earlier turns
("Where was he born?" after the first and then the last emperor of Rome). The file's ``about`` says
which session wrote which cases, and which were written before the rule they measure. Each is shown the turns
the graph's condense step shows it (:func:`nodes.condense_question.shown_turns`), rewritten as that step
rewrites it (the model's reply through :func:`nodes.condense_question.rewrite_or_fallback`) and graded: *rewritten*
(the rewrite holds what it must), *joined* (the rewrite failed and the follow-up was joined to the
question it follows, which retrieval can still use) or *failed* (a rewrite that lost what it must hold).

    python -m eval.follow_ups                          # the shipped condense prompt, the default model
    python -m eval.follow_ups --prompt FILE --model M  # a candidate system prompt, another generator
    python -m eval.follow_ups --kinds chain --history-turns 1   # the chains, the rewrite shown the last turn only
    python -m eval.follow_ups --history-turns 3        # every case shown up to three turns (session 53's step)

These are not benchmark questions: a small, hand-written set for comparing condense prompts side by
side on one machine, not a figure to quote as the step's accuracy.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

CASES = Path(__file__).resolve().with_name("follow_ups.json")
KINDS = ("pronoun", "elliptical", "standalone", "chain")
GRADES = ("rewritten", "joined", "failed")


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    for case in cases:
        if case["kind"] not in KINDS:
            raise ValueError(f"{path}: unknown kind {case['kind']!r} of {case['follow_up']!r}; valid: {', '.join(KINDS)}")
    return cases


def conversation(case: Mapping[str, Any]) -> list[dict[str, str]]:
    """The turns before a case's follow-up, oldest first, as the graph's thread holds them: its
    ``earlier`` turns (``[question, answer]`` pairs, each asked as written) and then ``previous``."""
    pairs = [*case.get("earlier", ()), (case["previous"], case["answer"])]
    return [{"question": q, "standalone_question": q, "answer": a} for q, a in pairs]


def grade(case: Mapping[str, Any], rewrite: str, method: str) -> str:
    """``joined`` when the fallback joined the follow-up; else ``rewritten`` when the rewrite holds
    one alternative of every ``must_hold`` phrase and none of ``must_not_hold`` (case-insensitive),
    ``failed`` when it does not."""
    if method == "joined":
        return "joined"
    text = rewrite.casefold()
    held = all(any(alt.casefold() in text for alt in phrase.split("|")) for phrase in case["must_hold"])
    kept_out = not any(word.casefold() in text for word in case.get("must_not_hold", ()))
    return "rewritten" if held and kept_out else "failed"


def main(argv: list[str] | None = None) -> int:
    from langchain_core.messages import SystemMessage

    from components.generator import load_chat_model, max_tokens_kwargs
    from components.model_files import DEFAULT_PRESET
    from nodes.condense_question import MAX_TOKENS, rewrite_or_fallback, shown_turns
    from prompts import condense_messages

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_PRESET, help=f"generator preset or path (default {DEFAULT_PRESET})")
    parser.add_argument("--prompt", type=Path, default=None, help="a condense system prompt to try (default: the shipped one)")
    parser.add_argument("--cases", type=Path, default=CASES, help="the follow-ups (default: eval/follow_ups.json)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS, help="only these kinds of case (default: all)")
    parser.add_argument("--history-turns", type=int, default=None,
                        help="show the rewrite this many of the latest turns (default: the turns the graph shows it)")
    args = parser.parse_args(argv)
    if args.history_turns is not None and args.history_turns < 1:
        parser.error(f"--history-turns must be >= 1, got {args.history_turns}")
    system = args.prompt.read_text(encoding="utf-8").strip() if args.prompt else None
    generator = load_chat_model(args.model)
    tally: Counter[tuple[str, str]] = Counter()
    for case in (c for c in load_cases(args.cases) if c["kind"] in args.kinds):
        turns = conversation(case)
        shown = shown_turns(turns, case["follow_up"]) if args.history_turns is None else turns[-args.history_turns:]
        messages = condense_messages(shown, case["follow_up"])
        if system is not None:
            messages[0] = SystemMessage(system)
        reply = generator.invoke(messages, **max_tokens_kwargs(generator, MAX_TOKENS))
        rewrite, method = rewrite_or_fallback(reply.text, case["follow_up"], case["previous"])
        result = grade(case, rewrite, method)
        tally[(case["kind"], result)] += 1
        print(f"{case['kind']:10} {result:9} | {case['follow_up']} -> {rewrite}", flush=True)
    print(json.dumps({kind: {g: tally[(kind, g)] for g in GRADES} for kind in args.kinds}))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
