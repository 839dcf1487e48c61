"""Load test of a running server (not a timed unit test): concurrent sessions, each asking a
short conversation, checking every request succeeds and every session keeps its own history.

    adaptive-rag serve &                      # in another terminal
    python -m eval.load --url http://127.0.0.1:7860 --sessions 8 --questions 5

Only talks to the address given (localhost by default); bounded in requests and time.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid

import httpx

# One topic per session; later questions of a session refer back to it.
CONVERSATIONS = [
    ["Who directed 2001: A Space Odyssey?", "When was it released?", "Who wrote the screenplay with him?",
     "Which computer appears in it?", "Where does the voyage go?"],
    ["Who was Marie Curie?", "Which prize did she win in 1903?", "Who did she share it with?",
     "Which elements did she discover?", "What nationality was she?"],
    ["What is the Eiffel Tower?", "Where is it?", "Who designed it?", "When was it built?", "What is it made of?"],
    ["What is Mount Everest?", "How high is it?", "Which border crosses its summit?",
     "Which range is it in?", "When was its height measured?"],
    ["What was Apollo 11?", "Who was its commander?", "Who piloted the lunar module?",
     "Which program was it part of?", "Where did it land?"],
    ["Who was Isaac Newton?", "What did he formulate?", "Which book did he write?",
     "What did he build?", "Where did he study?"],
    ["What is Jupiter?", "How big is it?", "What is it made of?", "How many moons does it have?",
     "Who named it?"],
    ["Who was Abraham Lincoln?", "When was he president?", "Which war did he lead?",
     "What did he abolish?", "How did he die?"],
]


def run_session(client: httpx.Client, url: str, questions: list[str], results: list, errors: list) -> None:
    session = f"load-{uuid.uuid4().hex[:8]}"
    for question in questions:
        start = time.perf_counter()
        try:
            response = client.post(f"{url}/ask", json={"question": question, "session_id": session})
            elapsed = time.perf_counter() - start
            if response.status_code != 200:
                errors.append(f"{session}: HTTP {response.status_code}: {response.text[:200]}")
                continue
            body = response.json()
            if body["trace"].get("question") != question:
                errors.append(f"{session}: asked {question!r}, the answer is for {body['trace'].get('question')!r}")
            results.append({"session": session, "question": question, "latency_s": elapsed, "tier": body["tier"],
                            "answer": body["answer"], "rewritten": body.get("rewritten_question")})
        except httpx.HTTPError as exc:
            errors.append(f"{session}: {type(exc).__name__}: {exc}")
    history = client.get(f"{url}/session/{session}").json()["turns"]
    if [t["question"] for t in history] != questions:
        errors.append(f"{session}: history holds {[t['question'] for t in history]}, expected its own {len(questions)} questions")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=1800.0, help="per-request timeout in seconds")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= len(CONVERSATIONS) or not 1 <= args.questions <= 5:
        parser.error(f"--sessions must be 1..{len(CONVERSATIONS)} and --questions 1..5")

    results: list[dict] = []
    errors: list[str] = []
    with httpx.Client(timeout=args.timeout) as client:
        client.get(f"{args.url}/health").raise_for_status()
        start = time.perf_counter()
        threads = [threading.Thread(target=run_session, args=(client, args.url, conv[: args.questions], results, errors))
                   for conv in CONVERSATIONS[: args.sessions]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start

    latencies = sorted(r["latency_s"] for r in results)
    p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))] if latencies else float("nan")
    print(f"sessions {args.sessions} x questions {args.questions}: {len(results)} answered, {len(errors)} errors, "
          f"wall {wall:.1f} s")
    if latencies:
        print(f"latency p50 {statistics.median(latencies):.1f} s, p95 {p95:.1f} s (queueing included), "
              f"throughput {len(results) / wall * 60:.1f} answers/min")
    rewritten = [r for r in results if r["rewritten"]]
    print(f"follow-ups rewritten: {len(rewritten)}; e.g. " + "; ".join(
        f"{r['question']!r} -> {r['rewritten']!r}" for r in rewritten[:3]))
    for error in errors:
        print(f"error: {error}")
    print("every session kept exactly its own questions" if not any("history" in e for e in errors) else "")
    return 0 if not errors else 1


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
