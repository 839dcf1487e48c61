"""small-talk: answer a greeting, thanks, "ok", a farewell, a question about the assistant, for the date, the
weather or the news, or a sum, without reading.

"hello" or "thanks!" went to retrieval like a question, and the chat answered "The knowledge base
does not seem to hold the answer", with the three passages it had found closest to "hello" (session
60); "Who are you?" got "Midnight's Children" and "Sadness" as its closest passages, and "What can you
do?" the withheld answer "Participate in hobbies" (session 64), and "What is today's date?" abstained,
withholding "22 March" (session 65); "ok" went up two tiers to the model's abstention, and "What is 2+2?" was
answered "5", and "What's the weather like today?" withheld "It's sunny" (session 66). A message that is only a
greeting, thanks, an acknowledgement ("ok", "got it"), a farewell, a question about the assistant itself, one for
today's date or the time, one for the weather or the news, or a sum (:func:`small_talk_kind`; "Hello, who wrote
Hamlet?" is a question) is answered in kind (the date and time from the server's clock, that nothing here is
live, a sum worked out exactly: :mod:`components.arithmetic`), with no retrieval and no model call. Like
:mod:`nodes.ask_who`'s question back, the reply is recorded as no answer decided by the question
(``answerability.by == "question"``, with the ``reply`` kind), and such a turn is not conversation a
follow-up can refer back to (:func:`nodes.condense_question.topical`).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from langgraph.runtime import Runtime

from components.arithmetic import worked_out
from nodes.base import context_of, direct_reply, timed
from pipeline.context import RAGContext
from pipeline.state import State

_END = r"[\s!.,:;)(*~^-]*(?:\s*(?:bot|there|again|everyone|all|so much|a lot|very much)[\s!.,:;)(*~^-]*)*$"
KINDS = (
    ("greeting", re.compile(rf"^\W*(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening)|"
                            rf"how\s+are\s+you(?:\s+doing)?(?:\s+today)?|how['’]s\s+it\s+going)\??{_END}",
                            re.IGNORECASE)),
    ("thanks", re.compile(rf"^\W*(?:(?:ok(?:ay)?|great|perfect|cool|nice)[\s,!.]*)?(?:thanks|thank\s+you|thx|ty|"
                          rf"cheers|many\s+thanks){_END}", re.IGNORECASE)),
    ("acknowledgement", re.compile(rf"^\W*(?:ok(?:ay)?|k|okey|alright|all\s+right|got\s+it|i\s+see|understood|"
                                   rf"cool|great|nice|perfect|awesome|good|fine|sounds\s+good|makes\s+sense){_END}",
                                   re.IGNORECASE)),
    ("farewell", re.compile(rf"^\W*(?:bye|goodbye|bye\s+bye|see\s+you(?:\s+later)?|good\s+night|farewell){_END}",
                            re.IGNORECASE)),
    ("date", re.compile(rf"^\W*(?:what(?:['’]s|\s+is)\s+(?:today['’]s\s+date|the\s+(?:date|time)(?:\s+today|\s+now)?)|"
                        rf"what\s+(?:date|day|time)\s+is\s+it(?:\s+today|\s+now)?|today['’]s\s+date)\??{_END}",
                        re.IGNORECASE)),
    ("live", re.compile(rf"^\W*(?:(?:what(?:['’]s|\s+is)\s+)?the\s+weather(?:\s+like)?|will\s+it\s+(?:rain|snow)|"
                        rf"(?:what(?:['’]s|\s+is)\s+)?(?:the\s+)?(?:latest\s+)?news|what(?:['’]s|\s+is)\s+in\s+the\s+news|"
                        rf"any\s+news)(?:\s+(?:today|tomorrow|now|right\s+now|this\s+week|tonight))?\??{_END}",
                        re.IGNORECASE)),
    ("about", re.compile(rf"^\W*(?:who\s+are\s+you|what\s+are\s+you|what\s+(?:can|do)\s+you\s+do|how\s+do\s+you\s+work|"
                         rf"how\s+can\s+you\s+help(?:\s+me)?|help(?:\s+me)?|tell\s+me\s+about\s+yourself|"
                         rf"what\s+(?:should|can)\s+i\s+ask(?:\s+you)?|what(?:['’]s|\s+is)\s+your\s+name|"
                         rf"who\s+(?:made|created|built|trained)\s+you|"
                         rf"are\s+you\s+(?:an?\s+)?(?:ai|bot|robot|human|person|machine|chatbot|chatgpt|real))\??{_END}",
                         re.IGNORECASE)),
)
"""What a message that is only small talk reads as, by kind."""

REPLIES = {
    "greeting": "Hello! Ask me a question, and I will answer it from the knowledge base and cite the passages I read.",
    "thanks": "You're welcome.",
    "acknowledgement": "Ask me another question whenever you like.",
    "farewell": "Goodbye.",
    "live": ("I cannot look up live information such as the weather or the news: I answer from the knowledge base "
             "and the documents added to it, which hold no \u201ctoday\u201d."),
    "about": ("I answer questions from this knowledge base and the documents added to it, with a small language "
              "model that runs here, and I cite the passages I read. Ask a question of fact (\"Who wrote Hamlet?\"), "
              "follow it up (\"When did he die?\"), ask me to explain a subject (\"How does the heart work?\"), to "
              "compare two (\"Compare cats and dogs\") or to summarize one of your documents (\"Summarize the "
              "kettle manual\"). Where the knowledge base does not hold the answer, I say so."),
}


def clock_reply(now: datetime) -> str:
    """The reply to "What is today's date?" or "What time is it?" at ``now`` (an aware time): the server's clock,
    which is all the assistant knows of the day; the knowledge base holds no "today"."""
    return (f"Today is {now:%A}, {now.day} {now:%B %Y}; the time is {now:%H:%M} "
            f"({now.tzname() or 'local time'}, this server's clock).")


def small_talk_kind(message: str) -> str | None:
    """``greeting``, ``thanks``, ``acknowledgement`` ("ok", "got it"), ``farewell``, ``date`` ("What is today's
    date?", "What time is it?"), ``about`` (the assistant: "Who are you?", "What can you do?", "help") or
    ``live`` ("What's the weather like today?", "What's the latest news?": nothing here holds "today") or
    ``arithmetic`` ("What is 2+2?") for a message that is only that ("hello", "Thank you very much!", "bye"), else
    ``None``."""
    kind = next((kind for kind, pattern in KINDS if pattern.match(message)), None)
    return kind or ("arithmetic" if worked_out(message) is not None else None)


@timed("small_talk")
def small_talk(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    kind = state.get("small_talk") or "greeting"
    if kind == "date":
        text = clock_reply(datetime.now().astimezone())
    elif kind == "arithmetic":
        text = worked_out(state["question"]) or REPLIES["about"]  # start_turn read it as a sum: it is one
    else:
        text = REPLIES[kind]
    return direct_reply(context_of(runtime), state, text, f"a {kind}, not a question for the knowledge base",
                        reply=kind)
