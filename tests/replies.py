"""Replies of a given form on the real generator, for the tests that need an answer SmolLM2 would not write."""


def replace_replies(monkeypatch, pieces) -> None:
    """The real generator answers, and each reply's text is replaced by ``pieces``, streamed (the figures of the
    reply, its probabilities and token counts, stay the real answer's): an answer of a given form on real
    components, which SmolLM2 would not write."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    from components.generator import LlamaCppChatModel

    real_stream = LlamaCppChatModel._stream

    def replaced(self, messages, stop=None, run_manager=None, **kwargs):
        *_, last = real_stream(self, messages, stop, None, **kwargs)  # the real figures of a real answer
        for piece in pieces:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        yield last

    monkeypatch.setattr(LlamaCppChatModel, "_stream", replaced)
