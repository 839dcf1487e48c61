"""The command line: bad input gets a clear message and a non-zero exit; ingest reports skips."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pymupdf
import pytest

from app.cli import main
from app.errors import EXIT_USAGE
from components.index import MANIFEST, PassageIndex
from pipeline.configuration import RERANK_CANDIDATES

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})}, timeout=timeout)


def ingest_until_first_checkpoint_then_kill(path, index_dir, *, batch_size, checkpoint_every, linger_s=0.0):
    """Run `ingest folder` and SIGKILL it once the index has been saved for the first time."""
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "ingest", "folder", str(path), "--index",
                             str(index_dir), "--batch-size", str(batch_size), "--checkpoint-every", str(checkpoint_every)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 180
    while not (index_dir / MANIFEST).exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(linger_s)
    assert proc.poll() is None, "ingest finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def closed_reader(*command: str) -> subprocess.CompletedProcess:
    """Run ``command`` with its standard output a pipe whose reader has already gone (``command | head`` after
    head has exited): every write to it fails, however small the output."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, *command], stdout=write, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              timeout=300)
    finally:
        os.close(write)


class TestClosedReader:
    """A command whose reader goes away first (``| head``) stops quietly: no BrokenPipeError traceback."""

    def test_the_help_of_the_command_line(self):
        done = closed_reader("-m", "app.cli", "--help")
        assert done.stderr == ""  # argparse drops what it cannot write; before, the exit's own flush failed loudly

    def test_a_measurement_command(self):
        run = ROOT / "docs" / "results" / "squad-train-s71-unseen"
        done = closed_reader("-m", "eval.pool", str(run))
        assert done.returncode == 1 and done.stderr == ""

    def test_any_other_error_is_raised_as_it_was(self):
        done = closed_reader("-c", "from pipeline.arguments import run_command\n"
                                   "def main():\n    raise ValueError('kept')\n"
                                   "run_command(main)")
        assert "ValueError: kept" in done.stderr


class TestAskErrors:
    @pytest.mark.parametrize("question", ["", "   "])
    def test_empty_question(self, question, capsys, index_dir):
        assert main(["ask", question, "--index", str(index_dir)]) == 2
        assert "question is empty" in capsys.readouterr().err

    def test_too_long(self, capsys, index_dir):
        assert main(["ask", "x" * 50, "--max-question-chars", "10", "--index", str(index_dir)]) == 2
        err = capsys.readouterr().err
        assert "maximum is 10: shorten it" in err
        # left open in session 51: the terminal pointed at "the server's max_question_chars", a setting the
        # person at the terminal sets with a flag
        assert "(--max-question-chars raises it)" in err and "server" not in err

    def test_a_maximum_of_no_characters_is_a_bad_setting_not_a_long_question(self, capsys):
        assert main(["ask", "Who?", "--max-question-chars", "0"]) == 2
        assert "--max-question-chars must be >= 1, got 0" in capsys.readouterr().err

    @pytest.mark.parametrize("flags, said", [
        (["--max-question-chars", "0"], "error: --max-question-chars must be >= 1, got 0"),
        (["--abstain-threshold", "2"], "error: --abstain-threshold is a probability in [0, 1], got 2.0"),
        (["--threads", "0"], "error: --threads must be >= 1, got 0"),
    ])
    def test_a_bad_setting_is_named_by_its_flag(self, capsys, flags, said):
        """The terminal said "max_question_chars must be >= 1" and "n_threads must be >= 1": the
        configuration's names, which the person at the terminal never typed (left open in session 52)."""
        assert main(["ask", "Who?", *flags, "--model", "smollm2-135m"]) == 2
        err = capsys.readouterr().err
        assert said in err and "_" not in err.split(",")[0], err

    def test_only_a_leading_setting_is_renamed(self):
        """A name further on may be a path's by chance (a folder called index_dir)."""
        import argparse

        from app.cli import in_flag_terms

        args = argparse.Namespace(index=None, max_question_chars=2000)
        assert in_flag_terms("index_dir must name a folder", args) == "--index must name a folder"
        elsewhere = "no index at /srv/index_dir/max_question_chars"
        assert in_flag_terms(elsewhere, args) == elsewhere
        assert in_flag_terms("prompt_layout is unknown", args) == "prompt_layout is unknown"  # no flag sets it

    def test_missing_index_names_the_command(self, capsys, tmp_path):
        assert main(["ask", "Who?", "--index", str(tmp_path / "none"), "--model", "smollm2-135m"]) == 3
        assert "adaptive-rag ingest wiki" in capsys.readouterr().err

    def test_unknown_preset(self, capsys, index_dir):
        assert main(["ask", "Who?", "--model", "gpt-9", "--index", str(index_dir)]) == 2
        assert "valid presets: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b, smollm2-135m" in capsys.readouterr().err

    def test_a_reranker_that_cannot_load_names_the_offline_ones(self, capsys, index_dir):
        """A mistyped --reranker is taken for a cross-encoder's name; offline it cannot load, and the CLI
        printed transformers' traceback about huggingface.co."""
        assert main(["ask", "Who?", "--reranker", "hybird", "--index", str(index_dir), "--model", "smollm2-135m"]) == 3
        err = capsys.readouterr().err
        assert "could not load reranker 'hybird'" in err and "retrieval-order, hybrid" in err
        assert "Traceback" not in err

    def test_a_model_path_that_is_no_model(self, capsys, index_dir, tmp_path):
        """``--model`` given a text file printed transformers' traceback (session 50)."""
        notes = tmp_path / "notes.txt"
        notes.write_text("not a model")
        assert main(["ask", "Who?", "--model", str(notes), "--index", str(index_dir)]) == 3
        err = capsys.readouterr().err
        assert "is not a .gguf file" in err and "Traceback" not in err

    def test_unknown_policy_and_tier(self, capsys, index_dir):
        assert main(["ask", "Who?", "--policy", "yolo", "--index", str(index_dir)]) == 2
        assert "valid policies: cascade, adaptive, fixed, baseline" in capsys.readouterr().err
        assert main(["ask", "Who?", "--tier", "extreme", "--index", str(index_dir)]) == 2
        assert "valid tiers: easy, medium, hard" in capsys.readouterr().err


class TestAsk:
    def test_answer_citations_and_trace(self, index_dir):
        result = cli("ask", "Who directed 2001: A Space Odyssey?", "--index", str(index_dir),
                     "--model", "smollm2-135m", "--tier", "easy", "--trace")
        assert result.returncode == 0, result.stderr
        assert "tier easy" in result.stdout and '"timings_ms"' in result.stdout
        summary = next(line for line in result.stdout.splitlines() if line.startswith("tier easy"))
        assert "correction not needed" in summary and "{" not in summary  # chat issue, defect 8


    def test_a_withheld_answer_says_so_and_shows_the_closest_passages(self, index_dir):
        result = cli("ask", "Who directed 2001: A Space Odyssey?", "--index", str(index_dir), "--model", "smollm2-135m",
                     "--tier", "easy", "--abstain-threshold", "1", "--no-stream")
        assert result.returncode == 0, result.stderr
        assert "The knowledge base does not seem to hold the answer." in result.stdout
        assert "Closest passages:" in result.stdout and "Sources:" not in result.stdout

    def test_an_out_of_range_threshold_is_refused(self, capsys, index_dir):
        assert main(["ask", "Who?", "--index", str(index_dir), "--abstain-threshold", "7"]) != 0
        assert "--abstain-threshold is a probability in [0, 1], got 7.0 (7% is 0.07)" in capsys.readouterr().err
        assert main(["ask", "Who?", "--index", str(index_dir), "--multi-hop-threshold", "-1"]) != 0
        assert "--multi-hop-threshold is a probability in [0, 1]" in capsys.readouterr().err

    def test_the_multi_hop_threshold_reaches_the_pipeline(self):
        from app.cli import _pipeline, build_parser

        args = build_parser().parse_args(["ask", "Who?", "--multi-hop-threshold", "0"])
        assert _pipeline(args).multi_hop_threshold == 0.0

    def test_asking_whom_a_question_means_can_be_turned_off(self):
        from app.cli import _pipeline, build_parser

        assert _pipeline(build_parser().parse_args(["serve"])).ask_who is True
        assert _pipeline(build_parser().parse_args(["chat", "--no-ask-who"])).ask_who is False

    def test_a_follow_ups_file_score_reaches_the_pipeline_or_turns_it_off(self, capsys):
        from app.cli import _pipeline, build_parser
        from pipeline.configuration import PipelineConfig

        assert _pipeline(build_parser().parse_args(["serve"])).follow_up_file_score == PipelineConfig().follow_up_file_score
        assert _pipeline(build_parser().parse_args(["chat", "--follow-up-file-score", "0.5"])).follow_up_file_score == 0.5
        assert _pipeline(build_parser().parse_args(["ask", "Q?", "--follow-up-file-score", "off"])).follow_up_file_score is None
        with pytest.raises(SystemExit):
            build_parser().parse_args(["chat", "--follow-up-file-score", "high"])
        # session 69: a question that names no file reads the files near it
        assert _pipeline(build_parser().parse_args(["serve"])).file_first_score == PipelineConfig().file_first_score
        assert _pipeline(build_parser().parse_args(["chat", "--file-first-score", "0.5"])).file_first_score == 0.5
        assert _pipeline(build_parser().parse_args(["ask", "Q?", "--file-first-score", "off"])).file_first_score is None
        assert "a cosine in [-1, 1] or 'off'" in capsys.readouterr().err

    def test_describing_can_be_turned_off(self):
        from app.cli import _pipeline, build_parser

        assert _pipeline(build_parser().parse_args(["ask", "Who was Napoleon?"])).describe is True
        assert _pipeline(build_parser().parse_args(["ask", "Who was Napoleon?", "--no-describe"])).describe is False

    def test_summaries_can_be_turned_off_or_read_more(self):
        from app.cli import _pipeline, build_parser
        from pipeline.configuration import ConfigurationError

        assert _pipeline(build_parser().parse_args(["chat"])).summarize is True
        assert _pipeline(build_parser().parse_args(["chat", "--no-summarize"])).summarize is False
        assert _pipeline(build_parser().parse_args(["serve", "--summarize-tokens", "2048"])).summarize_tokens == 2048
        with pytest.raises(ConfigurationError, match="summarize_tokens is a whole number >= 64"):
            _pipeline(build_parser().parse_args(["serve", "--summarize-tokens", "8"]))

    def test_telling_a_question_of_two_things_to_answer_each_can_be_turned_off(self):
        from app.cli import _pipeline, build_parser
        from pipeline.configuration import ConfigurationError, PipelineConfig

        assert _pipeline(build_parser().parse_args(["ask", "Who wrote Hamlet and when?"])).two_things is True
        assert _pipeline(build_parser().parse_args(["chat", "--no-two-things"])).two_things is False
        with pytest.raises(ConfigurationError, match="two_things is true or false"):
            PipelineConfig(two_things="yes")  # type: ignore[arg-type]

    def test_living_ages_can_be_turned_off(self):
        from app.cli import _pipeline, build_parser
        from pipeline.configuration import ConfigurationError, PipelineConfig

        assert _pipeline(build_parser().parse_args(["ask", "How old is Taylor Swift?"])).living_ages is True
        assert _pipeline(build_parser().parse_args(["chat", "--no-living-ages"])).living_ages is False
        with pytest.raises(ConfigurationError, match="living_ages is true or false"):
            PipelineConfig(living_ages="yes")  # type: ignore[arg-type]


    def test_a_places_population_read_in_its_own_article_can_be_turned_on(self):
        from app.cli import _pipeline, build_parser
        from pipeline.configuration import ConfigurationError, PipelineConfig

        assert _pipeline(build_parser().parse_args(["ask", "How many people live in Germany?"])).place_first is False
        assert _pipeline(build_parser().parse_args(["chat", "--place-first"])).place_first is True
        assert PipelineConfig().with_overrides({"place_first": True}).place_first is True
        with pytest.raises(ConfigurationError, match="place_first is true or false"):
            PipelineConfig(place_first="yes")  # type: ignore[arg-type]

class TestChat:
    def test_follow_up_in_the_terminal_chat(self, index_dir):
        result = subprocess.run(
            [sys.executable, "-m", "app.cli", "chat", "--index", str(index_dir), "--model", "smollm2-135m", "--tier", "easy"],
            input="Who was Isaac Newton?\n\n  \nWhen was he born?\n/new\nWhen was he born?\n/quit\nWhy?\n",
            capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("tier easy") == 2  # an empty line (an Enter too many) asks nothing and ends nothing
        # the conversation went on past it, and after /new it began again: "he" is no one, and the chat asks who
        assert result.stdout.count("follow-up read as:") == 1
        assert result.stdout.count("Who do you mean by “he”?") == 1


def type_lines(monkeypatch, lines):
    """The terminal's ``input`` reads ``lines`` in turn; an exception class among them is raised
    (KeyboardInterrupt: Ctrl-C, EOFError: Ctrl-D)."""
    import builtins

    typed = iter(lines)

    def read(prompt=""):
        line = next(typed)
        if isinstance(line, type):
            raise line()
        return line

    monkeypatch.setattr(builtins, "input", read)


class TestChatInterrupted:
    """Ctrl-C in the terminal chat ended it, and with it the conversation (it lives in the process):
    now it stops the answer being given, or clears the line being typed, as in Python's or a shell's
    prompt; Ctrl-D quits (noticed in session 48)."""

    class Service:
        def __init__(self, max_question_chars=2000):
            from pipeline.configuration import PipelineConfig

            self.asked = []
            self.pipeline = PipelineConfig(max_question_chars=max_question_chars)

        def stream(self, question, session_id=None):
            self.asked.append((question, session_id))
            yield {"type": "token", "text": "Isaac"}
            if len(self.asked) == 1:
                raise KeyboardInterrupt  # Ctrl-C while the first answer streams (the service stops its run)
            yield {"type": "result", "answer": "Isaac Newton", "citations": [], "trace": {}}

    def test_ctrl_c_stops_an_answer_or_a_line_and_keeps_the_chat(self, monkeypatch, capsys):
        import app.cli

        service = self.Service()
        monkeypatch.setattr(app.cli, "_service", lambda args: service)
        monkeypatch.setattr(app.cli, "format_answer", lambda result, *a, **k: f"[{result['answer']}]")
        type_lines(monkeypatch, ["Who was Isaac Newton?", KeyboardInterrupt, "When was he born?", EOFError])
        assert main(["chat"]) == 0
        assert service.asked == [("Who was Isaac Newton?", "terminal"), ("When was he born?", "terminal")]
        out = capsys.readouterr()
        assert "(stopped)" in out.out and "[Isaac Newton]" in out.out

    def test_a_long_question_names_the_flag_that_allows_it(self, monkeypatch, capsys):
        import app.cli

        service = self.Service(max_question_chars=10)
        monkeypatch.setattr(app.cli, "_service", lambda args: service)
        type_lines(monkeypatch, ["Who was Isaac Newton?", EOFError])
        assert main(["chat", "--max-question-chars", "10"]) == 0
        assert service.asked == []
        assert "maximum is 10: shorten it (--max-question-chars raises it)" in capsys.readouterr().err


class TestChatCommands:
    """The terminal chat asked "quit", "exit" and "/help" of the knowledge base ("quit" was answered
    "Nicotine withdrawal", withheld), and a conversation could only be left by Ctrl-D and not begun
    again (noticed in session 54). A line that is one word after a "/" is a command; "exit" and "quit"
    alone end the chat, as in other terminal chats."""

    class Service(TestChatInterrupted.Service):
        def __init__(self):
            super().__init__()
            self.reset = []

        def stream(self, question, session_id=None):
            self.asked.append((question, session_id))
            yield {"type": "result", "answer": "Isaac Newton", "citations": [], "trace": {}}

        def reset_session(self, session_id, owner=None):
            self.reset.append(session_id)

    def chat(self, monkeypatch, lines):
        import app.cli

        service = self.Service()
        monkeypatch.setattr(app.cli, "_service", lambda args: service)
        monkeypatch.setattr(app.cli, "format_answer", lambda result, *a, **k: f"[{result['answer']}]")
        type_lines(monkeypatch, [*lines, AssertionError])  # a line read past the end: the chat went on
        assert main(["chat"]) == 0
        return service

    @pytest.mark.parametrize("line", ["quit", "exit", " Exit ", "QUIT", "/quit", "/exit", "/bye"])
    def test_quit_and_exit_end_the_chat_unasked(self, monkeypatch, line):
        service = self.chat(monkeypatch, ["Who was Isaac Newton?", line])
        assert service.asked == [("Who was Isaac Newton?", "terminal")]

    def test_help_lists_the_commands_and_asks_nothing(self, monkeypatch, capsys):
        service = self.chat(monkeypatch, ["/help", "/quit"])
        assert service.asked == []
        err = capsys.readouterr().err
        for command in ("/new", "/quit", "/help"):
            assert command in err

    def test_new_forgets_the_conversation_and_goes_on(self, monkeypatch, capsys):
        service = self.chat(monkeypatch, ["Who was Isaac Newton?", "/new", "When was he born?", "/quit"])
        assert service.reset == ["terminal"]
        assert [q for q, _ in service.asked] == ["Who was Isaac Newton?", "When was he born?"]
        assert "new conversation" in capsys.readouterr().err

    def test_an_unknown_command_is_named_and_asks_nothing(self, monkeypatch, capsys):
        service = self.chat(monkeypatch, ["/hlep", "/quit"])
        assert service.asked == []
        assert "unknown command /hlep" in capsys.readouterr().err

    @pytest.mark.parametrize("line", ["/etc/hosts: what is it for?", "quit smoking: how?", "What does exit mean?"])
    def test_a_question_that_only_looks_like_a_command_is_asked(self, monkeypatch, line):
        service = self.chat(monkeypatch, [line, "/quit"])
        assert service.asked == [(line, "terminal")]

    def test_the_greeting_says_how_to_quit_and_where_the_commands_are(self, monkeypatch, capsys):
        self.chat(monkeypatch, ["/quit"])
        err = capsys.readouterr().err
        assert "/help" in err and "Ctrl-D" in err


class TestIngest:
    def test_folder_with_bad_files(self, tmp_path, capsys):
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "a.txt").write_text("The project codename is Bluebird. It started in 2019.")
        (docs / "b.md").write_text("# Notes\n\nBluebird ships in spring.")
        (docs / "bad.pdf").write_bytes(b"not a pdf")
        (docs / "c.docx").write_bytes(b"PK")
        index_dir = tmp_path / "idx"
        assert main(["ingest", "folder", str(docs), "--index", str(index_dir)]) == 0
        out = capsys.readouterr().out
        assert "passages added: 3" in out and "files skipped: 2" in out
        assert "unsupported type .docx" in out and "unreadable" in out
        assert main(["ingest", "folder", str(docs), "--index", str(index_dir)]) == 0
        out = capsys.readouterr().out
        assert "passages added: 0" in out and "already in the index (skipped): 3" in out
        assert len(PassageIndex.load(index_dir)) == 3

    def test_a_damaged_pdf_is_added_with_a_warning(self, tmp_path, capsys):
        docs = tmp_path / "docs"
        docs.mkdir()
        pdf = pymupdf.open()
        pdf.new_page().insert_text((72, 72), "The project codename is Bluebird.")
        data = pdf.tobytes()
        (docs / "cut.pdf").write_bytes(data[:data.rindex(b"xref")])
        assert main(["ingest", "folder", str(docs), "--index", str(tmp_path / "idx")]) == 0
        out = capsys.readouterr().out
        assert "passages added: 1" in out and "files read in part: 1" in out
        assert f"{docs / 'cut.pdf'}: damaged" in out

    def test_a_copy_of_a_file_is_not_added_twice(self, tmp_path, capsys):
        """"report (1).txt" beside "report.txt" (the same bytes) put every passage in twice, and an
        answer that found one read both (noticed in session 48; the chat's uploads had the check)."""
        docs, more = tmp_path / "docs", tmp_path / "more"
        docs.mkdir(), more.mkdir()
        text = "The project codename is Bluebird. It started in 2019."
        for path in (docs / "report.txt", docs / "report (1).txt", more / "copy.txt"):
            path.write_text(text)
        index_dir = tmp_path / "idx"
        assert main(["ingest", "folder", str(docs), "--index", str(index_dir)]) == 0
        out = capsys.readouterr().out
        assert "passages added: 2" in out and "files skipped: 1" in out
        assert f"{docs / 'report.txt'}: the same content as {docs / 'report (1).txt'}, already in the knowledge base" in out
        assert main(["ingest", "folder", str(more), "--index", str(index_dir)]) == 0  # a copy elsewhere, later
        assert "passages added: 0" in capsys.readouterr().out and len(PassageIndex.load(index_dir)) == 2

    def test_a_damaged_index_is_not_told_to_run_the_command_that_failed(self, tmp_path, capsys):
        """``ingest wiki --index X`` on a damaged X said 'rebuild the index (build it with: adaptive-rag
        ingest wiki --index X)', the very command that had failed: a damaged index is moved aside first."""
        damaged = tmp_path / "idx"
        damaged.mkdir()
        (damaged / "manifest.json").write_text("{oops")
        assert main(["ingest", "folder", str(tmp_path), "--index", str(damaged)]) == 3
        err = capsys.readouterr().err
        assert "is unreadable" in err and f"move {damaged} aside" in err, err

    def test_the_end_of_a_long_table_is_retrievable(self, tmp_path, capsys):
        """A 72-row Markdown table was one passage of ~800 words: the embedder read its first ~200, so
        a row near the end was never found, and the cheapest tier read all of it (1,308 tokens for a
        96-token budget). Its rows are now passages of a few rows each; --max-words 1000 cuts it as before."""
        from components.embedder import Embedder

        names = ("Arden", "Belmont", "Caswell", "Dunmore", "Elsworth", "Fairholm", "Glenrock", "Harwick", "Ivybridge",
                 "Jarrow", "Kelton", "Lindale", "Marston", "Norwood", "Oakhurst", "Pelham", "Redcliff", "Stanmore",
                 "Thornbury", "Upwell", "Varley", "Westcott", "Yarrow", "Zennor")
        rows = [f"| {name} {side} | {1880 + 2 * i} | {1 + i % 4} | {('Red', 'Blue', 'Green')[i % 3]} line |"
                for i, (side, name) in enumerate((side, name) for side in ("North", "South", "Central") for name in names)]
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "stations.md").write_text("# Stations\n\n| Station | Opened | Platforms | Line |\n| --- | --- | --- | --- |\n"
                                          + "\n".join(rows) + "\n")
        embedder = Embedder()
        embedder.warm_up()
        for flags, count in (([], 18), (["--max-words", "1000"], 1)):  # 10 words a row, 4 rows a passage
            index_dir = tmp_path / f"idx{count}"
            assert main(["ingest", "folder", str(docs), "--index", str(index_dir), *flags]) == 0
            assert len(PassageIndex.load(index_dir)) == count
        hits = PassageIndex.load(tmp_path / "idx18").search(
            embedder.embed_query("When did Zennor Central station open?"), RERANK_CANDIDATES)
        assert any("Station: Zennor Central; Opened: 2022; Platforms: 4; Line: Green line." in h.passage.text for h in hits)

    def test_a_later_ingest_cuts_as_the_index_was_cut(self, tmp_path, capsys):
        """``--window 2`` is recorded with the index: adding another folder without it cuts two sentences
        a passage too (it used to cut one, the default), and another window is said to leave the rest."""
        for name in ("a", "b", "c"):
            (tmp_path / name).mkdir()
            (tmp_path / name / f"{name}.txt").write_text(f"{name} one. {name} two. {name} three. {name} four.")
        index_dir = tmp_path / "idx"
        assert main(["ingest", "folder", str(tmp_path / "a"), "--index", str(index_dir), "--window", "2"]) == 0
        assert main(["ingest", "folder", str(tmp_path / "b"), "--index", str(index_dir)]) == 0
        assert "passages added: 2" in capsys.readouterr().out
        assert main(["ingest", "folder", str(tmp_path / "c"), "--index", str(index_dir), "--window", "4"]) == 0
        assert "the index's other documents keep the cut of before (window 2" in capsys.readouterr().out
        index = PassageIndex.load(index_dir)
        assert sorted(len(p.text.split()) for p in index) == [4, 4, 4, 4, 8] and index.chunking.window == 4
        assert main(["ingest", "folder", str(tmp_path / "c"), "--index", str(index_dir), "--overlap", "4"]) == EXIT_USAGE
        assert "overlap must be in [0, window)" in capsys.readouterr().err

    def test_folder_needs_path(self):
        with pytest.raises(SystemExit):
            main(["ingest", "folder"])

    def test_killed_ingest_leaves_a_loadable_index(self, tmp_path):
        """A process killed between checkpoints leaves an index that loads; a rerun (here in this process,
        which has the embedder's libraries loaded already) completes it."""
        docs = tmp_path / "docs"
        docs.mkdir()
        for i in range(400):
            (docs / f"doc{i:03d}.txt").write_text(f"Document {i} talks about topic number {i}. It has a second sentence.")
        index_dir = tmp_path / "idx"
        ingest_until_first_checkpoint_then_kill(docs, index_dir, batch_size=8, checkpoint_every=16, linger_s=0.3)
        partial = len(PassageIndex.load(index_dir))
        assert 0 < partial < 800
        assert main(["ingest", "folder", str(docs), "--index", str(index_dir)]) == 0
        assert len(PassageIndex.load(index_dir)) == 800

    def test_killed_ingest_of_one_large_file_resumes(self, tmp_path, capsys):
        """Checkpoints happen inside a document: a single large file killed mid-ingest leaves a
        loadable index holding part of it, and a rerun adds exactly the rest."""
        big = tmp_path / "big.txt"
        sentences = [f"Record {i} describes alloy sample {i * 7}, which was tested in the northern laboratory."
                     for i in range(1500)]
        big.write_text(" ".join(sentences))  # one paragraph without a line break
        index_dir = tmp_path / "idx"
        ingest_until_first_checkpoint_then_kill(big, index_dir, batch_size=32, checkpoint_every=64)
        partial = len(PassageIndex.load(index_dir))
        assert 0 < partial < 1500
        capsys.readouterr()
        assert main(["ingest", "folder", str(big), "--index", str(index_dir)]) == 0
        assert f"passages added: {1500 - partial}" in capsys.readouterr().out  # long lines are cut at sentence ends
        resumed = PassageIndex.load(index_dir)
        assert len(resumed) == 1500 and {p.text for p in resumed} == set(sentences)


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_serve_refuses_a_port_that_cannot_be(port, capsys):
    """``serve --port 99999`` loaded every model, then died in bind() with an OverflowError traceback."""
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", port])
    assert exited.value.code == 2 and "--port" in capsys.readouterr().err


def test_serve_says_at_once_that_its_port_is_taken(monkeypatch, tmp_path, capsys):
    """Found in session 51: ``serve`` on a port another server holds loaded every model (12 s here with
    the files cached, about a minute cold), then printed uvicorn's bind error. The port is now taken
    before anything loads, and a taken one is said at once."""
    import socket

    from app.service import RAGService

    def never(self):
        raise AssertionError("the models were loaded for a port that is taken")

    monkeypatch.setattr(RAGService, "warm_up", never)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--port", str(port), "--conversations", str(tmp_path / "c.sqlite"),
                     "--query-cache", "off"])
    err = capsys.readouterr().err
    assert code == 2 and f"127.0.0.1:{port}" in err and "--port" in err and "Traceback" not in err


def test_serve_keeps_the_query_cache_where_it_is_told(monkeypatch, tmp_path):
    from app.cli import _query_cache, build_parser

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path))
    assert build_parser().parse_args(["serve"]).query_cache == "sqlite"
    assert _query_cache("sqlite") == str(tmp_path / "query_cache.sqlite")
    assert _query_cache("memory") == ":memory:" and _query_cache("off") is None
    assert _query_cache(str(tmp_path / "q.sqlite")) == str(tmp_path / "q.sqlite")


def test_a_streamed_answer_ends_where_its_words_end(capsys, monkeypatch):
    """Noticed in session 40: `adaptive-rag ask` printed "Leonardo da Vinci " (the space before the
    model's citation marker was streamed); a space is printed only once a word follows it."""
    import app.cli as cli_module

    class Streaming:
        def stream(self, question, session_id=None):
            yield from ({"type": "token", "text": t} for t in ["Paris", " ", "\n"])
            yield {"type": "escalate", "to": "medium"}
            yield from ({"type": "token", "text": t} for t in ["Leonardo", " da", " ", "Vinci", " "])
            yield {"type": "result"}

    monkeypatch.setattr(cli_module, "format_answer", lambda *args, **kwargs: "summary")
    cli_module._ask_once(Streaming(), "Who?", show_trace=False, stream=True)
    assert capsys.readouterr().out == "Paris\n(not sure: reading more evidence, tier medium)\nLeonardo da Vinci\n\nsummary\n"


def test_a_streamed_answer_a_rule_set_aside_says_why_before_the_next(capsys, monkeypatch):
    import app.cli as cli_module

    reason = "ranked fourth-largest by the passages that hold it, and the question asks for the largest"

    class Streaming:
        def stream(self, question, session_id=None):
            yield {"type": "token", "text": "Neptune"}
            yield {"type": "escalate", "to": "medium", "by": "rule", "answer": "Neptune", "reason": reason}
            yield {"type": "token", "text": "Jupiter"}
            yield {"type": "result"}

    monkeypatch.setattr(cli_module, "format_answer", lambda *args, **kwargs: "summary")
    cli_module._ask_once(Streaming(), "Which planet is the largest?", show_trace=False, stream=True)
    assert capsys.readouterr().out == f"Neptune\n(set aside, {reason}: reading more evidence, tier medium)\nJupiter\n\nsummary\n"


def test_a_streamed_answer_the_check_withholds_is_marked_where_it_was_printed(capsys, monkeypatch):
    """Found in session 51: ``ask`` streamed "1527" as the first line, and only the paragraph after it
    said the answer was withheld (0.3% likely right); read from the top, the withheld answer looked
    like the answer. The chat replaces it; the terminal, which cannot take printed text back, marks it."""
    import app.cli as cli_module

    class Streaming:
        def __init__(self, abstained):
            self.abstained = abstained

        def stream(self, question, session_id=None):
            yield {"type": "token", "text": "1527"}
            check = {"by": "score", "decision": "abstain", "withheld_answer": "1527"} if self.abstained else None
            yield {"type": "result", "abstained": self.abstained, "answerability": check}

    monkeypatch.setattr(cli_module, "format_answer", lambda *args, **kwargs: "summary")
    cli_module._ask_once(Streaming(True), "When?", show_trace=False, stream=True)
    assert capsys.readouterr().out == f"1527 {cli_module.WITHHELD_MARK}\n\nsummary\n"
    cli_module._ask_once(Streaming(False), "When?", show_trace=False, stream=True)
    assert capsys.readouterr().out == "1527\n\nsummary\n"


def test_an_answer_no_model_wrote_is_printed_in_the_terminal_chat(capsys, monkeypatch):
    """Found in session 60: asked "When was he born?", the terminal chat printed only the cost line:
    the answer that asks whom the question means streams no token (no model wrote it), and the chat
    printed what was streamed. Nothing streamed, the answer is printed as ``ask --no-stream`` prints it."""
    import app.cli as cli_module

    class Streaming:
        def stream(self, question, session_id=None):
            yield {"type": "status", "node": "ask_who"}
            yield {"type": "result", "answer": "Who do you mean by “he”?", "abstained": True,
                   "answerability": {"by": "question", "decision": "abstain", "pronoun": "he"}}

    monkeypatch.setattr(cli_module, "format_answer",
                        lambda result, show_trace=False, include_answer=True: f"{include_answer and result['answer']}|summary")
    cli_module._ask_once(Streaming(), "When was he born?", show_trace=False, stream=True)
    assert capsys.readouterr().out == "Who do you mean by “he”?|summary\n"


def test_ingest_takes_a_file_or_folder_as_its_source(tmp_path):
    """Found trying the command line (session 51): ``adaptive-rag ingest notes.pdf`` (or ``ingest ~/notes``)
    was refused with "invalid choice"; only ``ingest folder notes.pdf`` read it. A path that exists is now
    read as ``folder PATH``; one that does not is refused with what is valid."""
    note = tmp_path / "notes.md"
    note.write_text("# Notes\n\nThe Quillfeather bridge opened in 1911.")
    added = cli("ingest", str(note), "--index", str(tmp_path / "idx"))
    assert added.returncode == 0, added.stderr
    assert "passages added: 1" in added.stdout
    missing = cli("ingest", str(tmp_path / "nope.md"), "--index", str(tmp_path / "idx"))
    assert missing.returncode == 2 and "nope.md" in missing.stderr and "wiki" in missing.stderr
    assert "Traceback" not in missing.stderr



def test_an_index_of_the_summaries_read_the_old_way_says_how_to_read_them_again(small_wikipedia, tmp_path, capsys):
    """Session 59 reads the summaries anew (each first passage ends with its article's short description).
    ``make run`` runs ``ingest wiki --if-missing``, which found the index and did nothing, so an index built
    before kept the old passages unsaid; it now says so and how to read them again, and changes nothing."""
    import json

    from components.sources import WIKIPEDIA_READER_CHANGE, WIKIPEDIA_READER_VERSION

    index_dir = tmp_path / "idx"
    assert main(["ingest", "wiki", "--index", str(index_dir)]) == 0
    assert PassageIndex.load(index_dir).sources == {"wikipedia": WIKIPEDIA_READER_VERSION}
    capsys.readouterr()
    assert main(["ingest", "wiki", "--if-missing", "--index", str(index_dir)]) == 0
    assert "earlier release" not in capsys.readouterr().err

    manifest = json.loads((index_dir / MANIFEST).read_text())
    del manifest["sources"]  # as an index saved before the reader's version was recorded
    (index_dir / MANIFEST).write_text(json.dumps(manifest))
    assert main(["ingest", "wiki", "--if-missing", "--index", str(index_dir)]) == 0
    said = capsys.readouterr().err
    assert "as an earlier release read them" in said and f"adaptive-rag ingest wiki --index {index_dir}" in said
    assert "sources" not in json.loads((index_dir / MANIFEST).read_text())  # nothing changed

    manifest["sources"] = {"wikipedia": WIKIPEDIA_READER_VERSION - 1}  # read by the release before
    (index_dir / MANIFEST).write_text(json.dumps(manifest))
    assert main(["ingest", "wiki", "--if-missing", "--index", str(index_dir)]) == 0
    assert WIKIPEDIA_READER_CHANGE in capsys.readouterr().err

    assert main(["ingest", "wiki", "--index", str(index_dir)]) == 0  # read again: recorded
    assert PassageIndex.load(index_dir).sources == {"wikipedia": WIKIPEDIA_READER_VERSION}

    own = tmp_path / "own"  # an index of one's own documents is not told to read the summaries
    (tmp_path / "notes.md").write_text("# Notes\n\nThe Quillfeather bridge opened in 1911.")
    assert main(["ingest", str(tmp_path / "notes.md"), "--index", str(own)]) == 0
    capsys.readouterr()
    assert main(["ingest", "wiki", "--if-missing", "--index", str(own)]) == 0
    assert "earlier release" not in capsys.readouterr().err
