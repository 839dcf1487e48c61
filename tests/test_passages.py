import pytest

from components.passages import (ChunkingConfig, Paragraph, Passage, SourceDocument, chunk_document, ranking_score,
                                 source_of, split_sentences)

DOC = SourceDocument(
    doc_id="doc/1",
    title="Example",
    paragraphs=("Dr. Smith went to Washington. He arrived at 3 p.m. on Monday. It rained.", "Second paragraph here."),
    metadata={"source": "test"},
)


class TestSplitSentences:
    def test_abbreviations_do_not_split(self):
        assert split_sentences(DOC.paragraphs[0]) == [
            "Dr. Smith went to Washington.", "He arrived at 3 p.m. on Monday.", "It rained."]

    def test_whitespace_and_empty(self):
        assert split_sentences("  \n ") == []
        assert split_sentences("One.\n\n  Two.") == ["One.", "Two."]


class TestChunkDocument:
    def test_sentence_passages_with_stable_ids(self):
        passages = list(chunk_document(DOC))
        assert [p.id for p in passages] == ["doc/1#p0s0", "doc/1#p0s1", "doc/1#p0s2", "doc/1#p1s0"]
        assert all(p.title == "Example" for p in passages)
        assert passages[1].metadata == {"source": "test", "doc_id": "doc/1", "paragraph": 0, "sentence": 1}
        assert [p.id for p in chunk_document(DOC)] == [p.id for p in passages]

    def test_window_with_overlap(self):
        passages = list(chunk_document(DOC, ChunkingConfig(window=2, overlap=1)))
        assert [p.id for p in passages] == ["doc/1#p0s0-1", "doc/1#p0s1-2", "doc/1#p1s0"]
        assert passages[0].text == "Dr. Smith went to Washington. He arrived at 3 p.m. on Monday."

    def test_a_description_ends_the_first_passage_whole(self):
        """Wikipedia's short description says what a summary often leaves out (a person's years, a
        work's author): the document's first passage carries it, and nothing splits it at "c."."""
        from dataclasses import replace

        doc = replace(DOC, description=" Artistic style in Europe\n and colonies, c. 1600–1750 ")
        plain, described = list(chunk_document(DOC)), list(chunk_document(doc))
        assert [p.id for p in described] == [p.id for p in plain]  # an index re-read replaces one passage's text
        assert described[0].text == "Dr. Smith went to Washington. (Artistic style in Europe and colonies, c. 1600–1750)"
        assert [p.text for p in described[1:]] == [p.text for p in plain[1:]]
        windowed = [p.text for p in chunk_document(doc, ChunkingConfig(window=2, overlap=1))]
        assert windowed[0].endswith("on Monday. (Artistic style in Europe and colonies, c. 1600–1750)")
        assert not any("Artistic" in text for text in windowed[1:])
        assert [p.text for p in chunk_document(replace(DOC, description="  "))] == [p.text for p in plain]

    def test_a_paragraph_under_a_heading_titles_its_passages_with_it(self):
        """Noticed in session 61: under "## Guests", "Members may bring two at a time." says nothing of
        guests. A passage keeps its document's title and records its section; what the embedder, the
        reranker, the prompt and the citations read is "<title> › <section>"."""
        doc = SourceDocument("doc/2", "Club rules", ("Welcome.", Paragraph("Members may bring two at a time.", "Guests"),
                                                       Paragraph("Kept in the yard.", "Boats › Winter")))
        welcome, guests, boats = chunk_document(doc)
        assert [p.id for p in (welcome, guests, boats)] == ["doc/2#p0s0", "doc/2#p1s0", "doc/2#p2s0"]
        assert {p.title for p in (welcome, guests, boats)} == {"Club rules"}
        assert "section" not in welcome.metadata and welcome.shown_title == "Club rules"
        assert guests.metadata["section"] == "Guests" and guests.shown_title == "Club rules › Guests"
        assert guests.embedding_text == "Club rules › Guests: Members may bring two at a time."
        assert boats.shown_title == "Club rules › Boats › Winter"
        assert Passage.from_record(boats.to_record()) == boats

    @pytest.mark.parametrize("window,overlap", [(0, 0), (2, 2), (2, -1)])
    def test_invalid_chunking(self, window, overlap):
        with pytest.raises(ValueError):
            ChunkingConfig(window=window, overlap=overlap)

    def test_record_round_trip(self):
        p = Passage("a", "T", "text", {"k": 1})
        assert Passage.from_record(p.to_record()) == p
        assert p.embedding_text == "T: text"


TABLE = "\n".join([
    "| Station | Opened | Line |",
    "| --- | ---: | --- |",
    *(f"| Stop {i} | {1880 + i} | {'Red' if i % 2 else 'Blue'} line |" for i in range(60)),
])


class TestLongSentences:
    """A text with few sentence ends (a table, a list, a PDF's run-on text) is not one passage: the
    embedder reads only the start of a long one, and a cheap tier's budget would hold nothing else."""

    def test_a_table_is_cut_between_rows_that_name_their_columns(self):
        doc = SourceDocument("t", "Stations", (TABLE,))
        passages = list(chunk_document(doc))
        rows = [f"Station: Stop {i}; Opened: {1880 + i}; Line: {'Red' if i % 2 else 'Blue'} line." for i in range(60)]
        assert [p.text for p in passages] == [" ".join(rows[i:i + 5]) for i in range(0, 60, 5)]  # 8 words a row
        assert [p.id for p in passages[:2]] == ["t#p0s0", "t#p0s1"]

    def test_a_short_table_stays_whole(self):
        table = "\n".join(TABLE.splitlines()[:5])
        assert [p.text for p in chunk_document(SourceDocument("t", "Stations", (table,)))] == [
            " ".join(" ".join(line.split()) for line in table.splitlines())]

    def test_one_cell_lines_are_packed_in_order(self):
        """How a PDF's table comes out of PyMuPDF: a cell a line."""
        cells = [cell for i in range(100) for cell in (f"Stop {i}", str(1880 + i), "Green line")]
        passages = [p.text for p in chunk_document(SourceDocument("pdf", "Stations", ("\n".join(cells),)))]
        assert all(len(text.split()) <= 40 for text in passages)
        assert " ".join(passages) == " ".join(cells)
        assert len(passages) == 13  # 500 words: 5 a row of three cells, 8 rows a passage

    def test_a_long_list_is_split_between_its_items(self):
        items = [f"- item {i} is a thing with several words in it" for i in range(40)]
        passages = [p.text for p in chunk_document(SourceDocument("l", "List", ("\n".join(items),)))]
        assert passages == [" ".join(items[i:i + 3]) for i in range(0, 40, 3)]  # 11 words an item

    def test_a_long_line_is_cut_into_runs_of_words(self):
        words = [f"w{i}" for i in range(250)]
        passages = list(chunk_document(SourceDocument("r", "Run-on", (" ".join(words),)), ChunkingConfig(max_words=100)))
        assert [p.text.split() for p in passages] == [words[:100], words[100:200], words[200:]]

    def test_only_the_long_sentence_is_split(self):
        items = "\n".join(f"- item {i} is a thing with several words in it" for i in range(20))
        paragraph = f"The list\nbelow is long. Here it is:\n{items}\nIt ends here. A last\nsentence."
        texts = [p.text for p in chunk_document(SourceDocument("m", "Mixed", (paragraph,)))]
        assert texts[:1] == ["The list below is long."] and texts[-1:] == ["A last sentence."]
        assert " ".join(texts) == " ".join(paragraph.split())
        assert all(len(text.split()) <= 40 for text in texts)

    def test_prose_is_split_at_sentence_ends_only(self):
        prose = "A sentence that wraps\nacross a line. " * 20
        assert all(p.text == "A sentence that wraps across a line." for p in chunk_document(SourceDocument("p", "P", (prose,))))

    def test_max_words_is_validated(self):
        with pytest.raises(ValueError):
            ChunkingConfig(max_words=0)


class TestWhatAReaderSees:
    def test_ranking_score_is_the_rerankers_where_it_scored_the_passage(self):
        assert ranking_score({"score": 0.4, "rerank_score": 0.7}) == 0.7
        assert ranking_score({"score": 0.4, "rerank_score": 0.0}) == 0.0  # a zero is a score, not a missing one
        assert ranking_score({"score": 0.4, "rerank_score": None}) == 0.4
        assert ranking_score({"score": 0.4}) == 0.4
        assert ranking_score({}) == 0.0  # a citation whose passage is no longer among the hits

    def test_source_of_never_gives_a_server_path(self):
        assert source_of({"url": "https://en.wikipedia.org/wiki/X", "path": "/srv/x.txt"}, "x#p0") == "https://en.wikipedia.org/wiki/X"
        assert source_of({"path": "/srv/kb/notes.txt"}, "x#p0") == "notes.txt"
        assert source_of({}, "x#p0") == "x#p0"
