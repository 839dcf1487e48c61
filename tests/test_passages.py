import pytest

from components.passages import ChunkingConfig, Passage, SourceDocument, chunk_document, split_sentences

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

    @pytest.mark.parametrize("window,overlap", [(0, 0), (2, 2), (2, -1)])
    def test_invalid_chunking(self, window, overlap):
        with pytest.raises(ValueError):
            ChunkingConfig(window=window, overlap=overlap)

    def test_record_round_trip(self):
        p = Passage("a", "T", "text", {"k": 1})
        assert Passage.from_record(p.to_record()) == p
        assert p.embedding_text == "T: text"
