import json

import numpy as np
import pytest

from components.index import MANIFEST, IndexLoadError, PassageIndex
from components.passages import MAX_PASSAGE_WORDS, Passage


def unit(rows):
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def small_index(directory=None):
    index = PassageIndex("emb", 3, directory)
    index.add([Passage(f"p{i}", "T", f"text {i}") for i in range(3)], unit([[1, 0, 0], [0, 1, 0], [1, 1, 0]]))
    return index


class TestPassageIndex:
    def test_search_scores_are_cosines(self):
        hits = small_index().search(unit([[1, 0, 0]])[0], 2)
        assert [p.id for p, _ in hits] == ["p0", "p2"]
        assert hits[0][1] == pytest.approx(1.0) and hits[1][1] == pytest.approx(2 ** -0.5)

    def test_exclude_and_k_larger_than_index(self):
        hits = small_index().search(unit([[1, 0, 0]])[0], 10, exclude={"p0"})
        assert [p.id for p, _ in hits] == ["p2", "p1"]

    def test_search_within_documents(self):
        """A question that names one of the user's documents is answered from it (``nodes.retrieve``):
        the search ranks that document's passages only, however many passages of others score higher."""
        index = PassageIndex("emb", 3)
        index.add([Passage("a#0", "A", "a0", {"doc_id": "a"}), Passage("b#0", "B", "b0", {"doc_id": "b"}),
                   Passage("b#1", "B", "b1", {"doc_id": "b"}), Passage("c#0", "C", "c0")],
                  unit([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]))
        query = unit([[1, 0, 0]])[0]
        hits = index.search(query, 5, within={"b"})
        assert [p.id for p, _ in hits] == ["b#1", "b#0"]
        assert hits[0][1] == pytest.approx(2 ** -0.5) and hits[1][1] == pytest.approx(0.0, abs=1e-6)
        assert [p.id for p, _ in index.search(query, 1, within={"b"})] == ["b#1"]
        assert [p.id for p, _ in index.search(query, 5, within={"b"}, exclude={"b#1"})] == ["b#0"]
        assert [p.id for p, _ in index.search(query, 5, within={"a", "c"})] == ["a#0", "c#0"]  # an id without doc_id: its prefix
        assert index.search(query, 5, within=set()) == [] and index.search(query, 5, within={"gone"}) == []

    def test_a_copy_changes_apart(self):
        index = small_index()
        copy = index.copy()
        copy.add([Passage("p3", "T", "text 3")], unit([[0, 0, 1]]))
        copy.remove(["p0"])
        assert [p.id for p in index] == ["p0", "p1", "p2"] and [p.id for p in copy] == ["p1", "p2", "p3"]
        assert [p.id for p, _ in index.search(unit([[0, 0, 1]])[0], 1)] != ["p3"]
        assert [p.id for p, _ in copy.search(unit([[0, 0, 1]])[0], 1)] == ["p3"] and copy.directory is None

    def test_duplicates_are_skipped(self):
        index = small_index()
        added = index.add([Passage("p0", "T", "again"), Passage("p9", "T", "new")], unit([[1, 0, 0], [0, 0, 1]]))
        assert added == 1 and len(index) == 4 and index.passage("p0").text == "text 0"

    @pytest.mark.parametrize("k", [0, -1])
    def test_invalid_k(self, k):
        with pytest.raises(ValueError):
            small_index().search(unit([[1, 0, 0]])[0], k)

    def test_invalid_vectors(self):
        index = small_index()
        with pytest.raises(ValueError, match="dimension"):
            index.add([Passage("x", "T", "t")], np.ones((1, 4), dtype=np.float32))
        with pytest.raises(ValueError, match="expected 2 vectors"):
            index.add([Passage("x", "T", "t"), Passage("y", "T", "t")], np.ones((1, 3), dtype=np.float32))
        with pytest.raises(ValueError, match="dimension"):
            index.search(np.ones(4), 1)

    def test_empty_index(self):
        assert PassageIndex("emb", 3).search(np.ones(3), 5) == []

    def test_remove_keeps_the_rest_searchable(self, tmp_path):
        index = small_index(tmp_path)
        assert index.remove(["p0", "nope"]) == 1 and index.remove(["p0"]) == 0
        assert len(index) == 2 and "p0" not in index and index.passage("p2").text == "text 2"
        assert [p.id for p, _ in index.search(unit([[1, 0, 0]])[0], 5)] == ["p2", "p1"]
        index.save()
        loaded = PassageIndex.load(tmp_path, embedder="emb", dimension=3)
        assert [p.id for p in loaded] == ["p1", "p2"]
        assert [p.id for p, _ in loaded.search(unit([[0, 1, 0]])[0], 1)] == ["p1"]

    def test_documents_group_passages(self):
        index = PassageIndex("emb", 3)

        def meta(doc, i):
            return {"doc_id": doc, "path": f"/x/{doc}.md", "paragraph": i, "sentence": 0}

        index.add([Passage("a#p0", "A", "1", meta("a", 0)), Passage("b#p0", "B", "2", meta("b", 0)),
                   Passage("a#p1", "A", "3", meta("a", 1))], unit([[1, 0, 0], [0, 1, 0], [0, 0, 1]]))
        assert index.documents() == [
            {"doc_id": "a", "title": "A", "passages": 2, "metadata": {"path": "/x/a.md"}},
            {"doc_id": "b", "title": "B", "passages": 1, "metadata": {"path": "/x/b.md"}}]
        assert index.document_passages("a") == ["a#p0", "a#p1"]
        assert [index.document_title(d["doc_id"]) for d in index.documents()] == ["A", "B"]
        with pytest.raises(KeyError):
            index.document_title("gone")

    def test_a_document_is_listed_by_its_title_whatever_section_its_first_passage_is_in(self):
        index = PassageIndex("emb", 3)
        index.add([Passage("c#p0", "Club rules", "Two.", {"doc_id": "c", "paragraph": 0, "sentence": 0, "section": "Guests"}),
                   Passage("c#p1", "Club rules", "Yard.", {"doc_id": "c", "paragraph": 1, "sentence": 0, "section": "Boats"})],
                  unit([[1, 0, 0], [0, 1, 0]]))
        assert index.documents() == [{"doc_id": "c", "title": "Club rules", "passages": 2, "metadata": {}}]

    def test_a_documents_passages_come_in_its_order_whatever_order_they_were_added_in(self):
        """Found in session 60: the Wikipedia summaries read again with their descriptions (session 59)
        added each article's first passage after its others, and "Who was Napoleon?" was described by
        his second sentence."""
        index = PassageIndex("emb", 3)
        at = [(1, 0), (0, 1), (0, 0)]
        index.add([Passage(f"a#p{p}s{s}", "A", f"{p}.{s}", {"doc_id": "a", "paragraph": p, "sentence": s}) for p, s in at],
                  unit([[1, 0, 0], [0, 1, 0], [0, 0, 1]]))
        index.add([Passage("b#x", "B", "no position", {"doc_id": "b"}), Passage("b#y", "B", "none", {"doc_id": "b"})],
                  unit([[1, 1, 0], [0, 1, 1]]))
        assert index.document_passages("a") == ["a#p0s0", "a#p0s1", "a#p1s0"]
        assert index.document_passages("b") == ["b#x", "b#y"]  # no position: as added

    def test_a_documents_passages_follow_adds_removals_copies_and_loads(self, tmp_path):
        """The index keeps each document's passages as it changes (session 69's review: every call scanned all
        36,518 passages), so they must follow every change: a copy changed apart, a removal, a save and load."""
        index = PassageIndex("emb", 3, tmp_path)
        index.add([Passage("a#0", "A", "a0", {"doc_id": "a"}), Passage("b#0", "B", "b0", {"doc_id": "b"}),
                   Passage("a#1", "A", "a1", {"doc_id": "a"})], unit([[1, 0, 0], [0, 1, 0], [0, 0, 1]]))
        copy = index.copy()
        copy.add([Passage("a#2", "A", "a2", {"doc_id": "a"})], unit([[1, 1, 0]]))
        assert copy.document_passages("a") == ["a#0", "a#1", "a#2"] and index.document_passages("a") == ["a#0", "a#1"]
        index.remove(["a#0", "b#0"])
        assert index.document_passages("a") == ["a#1"] and index.document_passages("b") == []
        assert copy.document_passages("b") == ["b#0"]
        assert [p.id for p, _ in index.search(unit([[1, 0, 0]])[0], 5, within={"a", "b"})] == ["a#1"]
        index.save()
        loaded = PassageIndex.load(tmp_path, embedder="emb", dimension=3)
        assert loaded.document_passages("a") == ["a#1"] and loaded.document_passages("gone") == []


class TestPersistence:
    def test_round_trip(self, tmp_path):
        small_index(tmp_path).save()
        loaded = PassageIndex.load(tmp_path, embedder="emb", dimension=3)
        assert len(loaded) == 3 and loaded.passage("p1").text == "text 1"
        assert [p.id for p, _ in loaded.search(unit([[0, 1, 0]])[0], 1)] == ["p1"]
        manifest = json.loads((tmp_path / MANIFEST).read_text())
        assert manifest["count"] == 3 and manifest["embedder"] == "emb" and manifest["dimension"] == 3

    def test_no_pickle_on_disk(self, tmp_path):
        small_index(tmp_path).save()
        for path in tmp_path.iterdir():
            assert not path.read_bytes().startswith(b"\x80"), f"{path.name} looks like a pickle"

    def test_new_generation_replaces_old(self, tmp_path):
        index = small_index(tmp_path)
        index.save()
        index.add([Passage("p9", "T", "new")], unit([[0, 0, 1]]))
        index.save()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([MANIFEST, "index-000002.faiss", "passages-000002.jsonl"])
        assert len(PassageIndex.load(tmp_path)) == 4

    def test_missing_index_names_the_fix(self, tmp_path):
        with pytest.raises(IndexLoadError, match="adaptive-rag ingest wiki"):
            PassageIndex.load(tmp_path / "none")

    def test_other_embedder(self, tmp_path):
        small_index(tmp_path).save()
        with pytest.raises(IndexLoadError, match="built with embedder 'emb'"):
            PassageIndex.load(tmp_path, embedder="other")

    def test_other_dimension(self, tmp_path):
        small_index(tmp_path).save()
        with pytest.raises(IndexLoadError, match="3-d vectors"):
            PassageIndex.load(tmp_path, dimension=384)

    def test_truncated_file(self, tmp_path):
        small_index(tmp_path).save()
        faiss_file = next(tmp_path.glob("index-*.faiss"))
        faiss_file.write_bytes(faiss_file.read_bytes()[:-10])
        with pytest.raises(IndexLoadError, match="checksum"):
            PassageIndex.load(tmp_path)

    def test_corrupt_manifest(self, tmp_path):
        small_index(tmp_path).save()
        (tmp_path / MANIFEST).write_text("{not json")
        with pytest.raises(IndexLoadError, match="unreadable"):
            PassageIndex.load(tmp_path)

    def test_the_sources_readers_are_kept_and_an_unreadable_record_is_refused(self, tmp_path):
        index = small_index(tmp_path)
        index.sources["wikipedia"] = 2
        index.save()
        assert PassageIndex.load(tmp_path).sources == {"wikipedia": 2}
        manifest = json.loads((tmp_path / MANIFEST).read_text())
        manifest["sources"] = {"wikipedia": "two"}
        (tmp_path / MANIFEST).write_text(json.dumps(manifest))
        with pytest.raises(IndexLoadError, match="unreadable sources"):
            PassageIndex.load(tmp_path)

    def test_count_mismatch(self, tmp_path):
        small_index(tmp_path).save()
        manifest = json.loads((tmp_path / MANIFEST).read_text())
        manifest["count"] = 7
        (tmp_path / MANIFEST).write_text(json.dumps(manifest))
        with pytest.raises(IndexLoadError, match="inconsistent"):
            PassageIndex.load(tmp_path)

    def test_interrupted_save_keeps_previous_generation(self, tmp_path, monkeypatch):
        index = small_index(tmp_path)
        index.save()
        index.add([Passage("p9", "T", "new")], unit([[0, 0, 1]]))

        import components.index as module

        def die(*args, **kwargs):
            raise KeyboardInterrupt  # killed after the data files, before the manifest switch

        monkeypatch.setattr(module, "atomic_write_text", die)
        with pytest.raises(KeyboardInterrupt):
            index.save()
        monkeypatch.undo()
        assert len(PassageIndex.load(tmp_path)) == 3
        index.save()  # the next save cleans the orphaned generation up
        assert len(PassageIndex.load(tmp_path)) == 4
        assert len(list(tmp_path.glob("*.faiss"))) == 1


class TestInMemory:
    def test_an_index_without_a_folder_is_never_written_to_the_working_directory(self, tmp_path, monkeypatch, embedder):
        """Found in session 35: ``save()`` on an index made without a folder wrote it into the working
        directory (``Path("")`` is "."), and ``ingest`` saves at its end, so a test ingesting into an
        in-memory index left index files in the repository."""
        from components.ingest import ingest
        from components.passages import SourceDocument

        monkeypatch.chdir(tmp_path)
        index = PassageIndex(embedder.name, embedder.dimension)
        with pytest.raises(ValueError, match="no directory"):
            small_index().save()
        assert ingest([SourceDocument("d", "D", ("One.",))], index, embedder).passages_added == 1
        assert len(index) == 1 and index.directory is None and list(tmp_path.iterdir()) == []


class TestIngestAgain:
    """A document ingested again comes out as its chunking cuts it now (the CLI's `ingest folder` on
    the same folder, a file uploaded again): found in session 35, when splitting long sentences gave
    an old table's passages new ids, so ingesting it again kept the whole old table beside its new
    pieces (and its first piece was skipped, its id being the old table's)."""

    @staticmethod
    def texts(index):
        return sorted((p.id, p.text) for p in index)

    def test_a_changed_document_is_replaced_and_an_unchanged_one_skipped(self, embedder):
        from components.ingest import ingest
        from components.passages import ChunkingConfig, SourceDocument

        table = "| Station | Opened |\n| --- | --- |\n" + "\n".join(f"| Stop {i} | {1900 + i} |" for i in range(40))
        old = [SourceDocument("t", "Stations", ("Stations by year.", table)), SourceDocument("u", "Other", ("Unchanged.",))]
        index = PassageIndex(embedder.name, embedder.dimension)
        ingest(old, index, embedder, chunking=ChunkingConfig(max_words=1000))  # as before long sentences were split
        index.chunking = None  # an index of then recorded no chunking
        assert len(index) == 3
        report = ingest(old, index, embedder)
        fresh = PassageIndex(embedder.name, embedder.dimension)
        ingest(old, fresh, embedder)
        assert self.texts(index) == self.texts(fresh) and len(index) == 7  # 5 words a row, 8 rows a passage
        assert (report.passages_present, report.passages_replaced, report.passages_added, report.passages_removed) == (
            2, 1, 4, 0)  # 't#p1s0' was the whole table, now its first rows
        shorter = [SourceDocument("t", "Stations", ("Stations by year.",)), old[1]]
        report = ingest(shorter, index, embedder)
        assert (report.passages_removed, report.passages_added, report.passages_replaced) == (5, 0, 0)
        assert self.texts(index) == [("t#p0s0", "Stations by year."), ("u#p0s0", "Unchanged.")]
        assert "passages no longer in their document (removed): 5" in report.summary()

    def test_another_window_replaces_the_documents_passages(self, embedder):
        from components.ingest import ingest
        from components.passages import ChunkingConfig, SourceDocument

        doc = [SourceDocument("d", "D", ("One. Two. Three.",))]
        index = PassageIndex(embedder.name, embedder.dimension)
        ingest(doc, index, embedder)
        ingest(doc, index, embedder, chunking=ChunkingConfig(window=3))
        assert self.texts(index) == [("d#p0s0-2", "One. Two. Three.")]


class TestCopies:
    """A document whose content (its file's ``sha256``) the index already holds under another id is
    skipped, not added twice: ``ingest folder`` put every passage of "report (1).txt" in beside
    "report.txt"'s, and an answer that found one read both (session 48 noticed it; uploads had
    their own check, in the service)."""

    @staticmethod
    def doc(doc_id, text, digest, name=None):
        from components.passages import SourceDocument

        return SourceDocument(doc_id, doc_id, (text,), {"source": "file", "path": f"/d/{doc_id}", "sha256": digest,
                                                        **({"name": name} if name else {})})

    def test_a_copy_in_the_same_or_a_later_ingest_is_skipped_with_the_reason(self, embedder):
        from components.ingest import ingest

        index = PassageIndex(embedder.name, embedder.dimension)
        report = ingest([self.doc("a", "Alpha one.", "d1"), self.doc("b", "Alpha one.", "d1", name="b.txt")], index, embedder)
        assert report.passages_added == 1 and len(index) == 1 and report.documents == 1  # "from 1 document"
        assert [(s.path, s.reason) for s in report.skipped] == [
            ("b.txt", "the same content as /d/a, already in the knowledge base")]
        report = ingest([self.doc("c", "Other.", "d2"), self.doc("z", "Alpha one.", "d1")], index, embedder)
        assert report.passages_added == 1 and [s.path for s in report.skipped] == ["/d/z"]
        # a document that has become a copy keeps none of its passages of before
        report = ingest([self.doc("c", "Alpha one.", "d1")], index, embedder)
        assert [s.path for s in report.skipped] == ["/d/c"] and report.passages_removed == 1
        assert sorted(p.id for p in index) == ["a#p0s0"]
        # the document itself ingested again is no copy of itself
        report = ingest([self.doc("a", "Alpha one.", "d1")], index, embedder)
        assert (report.passages_present, report.skipped) == (1, [])
        # a document without a digest (a benchmark's context, the wiki) is never taken for a copy
        from components.passages import SourceDocument

        report = ingest([SourceDocument("w", "W", ("Alpha one.",))], index, embedder)
        assert report.passages_added == 1 and not report.skipped

    def test_content_an_ingest_replaces_is_not_held(self, embedder):
        """The content of a document this ingest changes, or one its owner replaces after it
        (``replacing``: an upload of the same name), is not in the knowledge base for long."""
        from components.ingest import ingest

        index = PassageIndex(embedder.name, embedder.dimension)
        ingest([self.doc("a", "Alpha one.", "d1"), self.doc("b", "Beta.", "d2")], index, embedder)
        # "0" holds a's old bytes and comes first; a changes after it: 0 is added after all
        report = ingest([self.doc("0", "Alpha one.", "d1"), self.doc("a", "Alpha two.", "d3")], index, embedder)
        assert not report.skipped and report.passages_added == 1 and report.passages_replaced == 1
        assert sorted(p.id for p in index) == ["0#p0s0", "a#p0s0", "b#p0s0"]
        report = ingest([self.doc("c", "Beta.", "d2")], index, embedder, replacing=["b"])
        assert not report.skipped and report.passages_added == 1

    def test_a_passage_keeps_its_documents_current_metadata(self, embedder):
        """A file whose bytes changed but not its sentences keeps its passages, with the new digest:
        a stale one would take the next copy of the file for new content."""
        from components.ingest import ingest

        index = PassageIndex(embedder.name, embedder.dimension)
        ingest([self.doc("a", "Alpha one.", "d1")], index, embedder)
        report = ingest([self.doc("a", "Alpha one.", "d9")], index, embedder)  # a trailing space more, say
        assert report.passages_replaced == 1 and index.passage("a#p0s0").metadata["sha256"] == "d9"
        assert [s.path for s in ingest([self.doc("b", "Alpha one.", "d9")], index, embedder).skipped] == ["/d/b"]


class TestChunkingRecorded:
    """An index records how its passages were cut, and a later ingest that names no chunking cuts the
    same way: an index built with ``ingest --window 3`` used to take the files uploaded through the
    chat or the API one sentence a passage (the code's default), two cuts in one index."""

    DOC = ("One. Two. Three. Four.",)

    def test_the_manifest_keeps_the_chunking_and_a_later_ingest_follows_it(self, embedder, tmp_path):
        from components.ingest import ingest
        from components.passages import ChunkingConfig, SourceDocument

        index = PassageIndex(embedder.name, embedder.dimension, tmp_path)
        ingest([SourceDocument("a", "A", self.DOC)], index, embedder, chunking=ChunkingConfig(window=2))
        assert json.loads((tmp_path / MANIFEST).read_text())["chunking"] == {
            "window": 2, "overlap": 0, "max_words": MAX_PASSAGE_WORDS}
        loaded = PassageIndex.load(tmp_path)
        assert loaded.chunking == ChunkingConfig(window=2)
        report = ingest([SourceDocument("b", "B", self.DOC)], loaded, embedder)
        assert sorted(p.id for p in loaded if p.id.startswith("b")) == ["b#p0s0-1", "b#p0s2-3"]
        assert "cut" not in report.summary()

    def test_another_chunking_is_used_recorded_and_reported(self, embedder, tmp_path):
        from components.ingest import ingest
        from components.passages import ChunkingConfig, SourceDocument

        index = PassageIndex(embedder.name, embedder.dimension, tmp_path)
        ingest([SourceDocument("a", "A", self.DOC)], index, embedder, chunking=ChunkingConfig(window=2))
        report = ingest([SourceDocument("b", "B", self.DOC)], index, embedder, chunking=ChunkingConfig(window=4))
        assert sorted(p.id for p in index) == ["a#p0s0-1", "a#p0s2-3", "b#p0s0-3"]
        assert PassageIndex.load(tmp_path).chunking == ChunkingConfig(window=4)
        assert report.chunking_before == ChunkingConfig(window=2)
        assert ("the index's other documents keep the cut of before (window 2, overlap 0, "
                f"max_words {MAX_PASSAGE_WORDS}): ingest them again to cut them alike") in report.summary()

    def test_an_index_without_a_recorded_chunking_takes_the_default(self, embedder, tmp_path):
        from components.ingest import ingest
        from components.passages import ChunkingConfig, SourceDocument

        small_index(tmp_path).save()
        manifest = json.loads((tmp_path / MANIFEST).read_text())
        assert "chunking" not in manifest  # nothing ingested into it: nothing to record
        index = PassageIndex(embedder.name, embedder.dimension)
        assert index.chunking is None
        ingest([SourceDocument("a", "A", self.DOC)], index, embedder)
        assert index.chunking == ChunkingConfig() and len(index) == 4

    @pytest.mark.parametrize("value", [{"window": 0, "overlap": 0, "max_words": 80}, {"window": 2}, "2",
                                       {"window": 2, "overlap": 0, "max_words": 80, "stride": 1},
                                       {"window": 2.5, "overlap": 0, "max_words": 80}])
    def test_a_bad_recorded_chunking_is_a_clear_load_error(self, tmp_path, value):
        small_index(tmp_path).save()
        manifest = json.loads((tmp_path / MANIFEST).read_text())
        (tmp_path / MANIFEST).write_text(json.dumps({**manifest, "chunking": value}))
        with pytest.raises(IndexLoadError, match="chunking.*rebuild the index"):
            PassageIndex.load(tmp_path)


class TestPerRevision:
    """Values worked out from an index are worked out once per revision and kept per index, not by it."""

    def test_a_value_is_worked_out_once_per_revision(self):
        from components.index import PerRevision

        index, made = PassageIndex("emb", 3), []
        kept: PerRevision[int] = PerRevision()
        assert kept.get(index, "n", lambda: made.append(1) or len(index)) == 0
        assert kept.get(index, "n", lambda: made.append(1) or len(index)) == 0 and len(made) == 1
        assert kept.get(index, "other", lambda: 7) == 7  # another key is another value
        index.add([Passage("d#0", "D", "Some text.", {})], np.array([[1.0, 0.0, 0.0]]))
        assert kept.get(index, "n", lambda: made.append(1) or len(index)) == 1 and len(made) == 2
        assert kept.get(index.copy(), "n", lambda: -1) == -1  # another index, even a copy, has its own

    def test_an_index_no_one_holds_is_freed(self):
        import gc
        import weakref

        from components.index import PerRevision

        index = PassageIndex("emb", 3)
        kept: PerRevision[int] = PerRevision()
        assert kept.get(index, "n", lambda: 1) == 1
        held = weakref.ref(index)
        del index
        gc.collect()
        assert held() is None
