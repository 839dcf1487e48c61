"""A message that is only a sum ("What is 2+2?", "calculate 17 * 23", "10 divided by 4"), worked out exactly.

The 1.5B model answered "What is 2+2?" with "5", and the check gave it (34% likely right, session 66).
Numbers are read as exact fractions, so 0.1 + 0.2 is 0.3; the result is shown whole where it is whole, else
to six decimals, marked "≈" where that rounds. Nothing is evaluated by Python's ``eval``: the message is
read token by token into a small grammar (+, −, ×, ÷, ^ and brackets) and reduced here.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

_ASKED = re.compile(r"^\s*(?:(?:what(?:['’]s|\s+is)|how\s+much\s+is|calculate|compute|evaluate|work\s+out|solve)\s+)?"
                    r"(?P<sum>.+?)\s*=?\s*[?.!]*\s*$", re.IGNORECASE)
_WORDS = ((r"\bmultiplied\s+by\b", "*"), (r"\bdivided\s+by\b", "/"), (r"\btimes\b", "*"), (r"\bplus\b", "+"),
          (r"\bminus\b", "-"), (r"\bto\s+the\s+power\s+of\b", "^"), ("×", "*"), ("÷", "/"), ("−", "-"), (r"\*\*", "^"))
_TOKEN = re.compile(r"\s*(?:(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)|(?P<op>[-+*/^()]))")
SHOWN = {"+": "+", "-": "−", "*": "×", "/": "÷", "^": "^"}
MOST_BITS = 4096
"""The largest result worked out, in bits of its numerator or denominator (about 1,200 digits)."""


class Token(NamedTuple):
    kind: str  # "number", "op" (a binary operator), "neg" (a unary minus), "(" or ")"
    text: str


class TooLarge(ArithmeticError):
    """The result would be too large to work out here."""


def tokens(message: str) -> list[Token] | None:
    """The tokens of ``message`` when it is only a sum with at least one operator between two numbers
    ("What is 2+2?", "7 times 8"), else ``None`` ("What is 2?", "2-1 win?", "Catch-22"; and two whole numbers
    joined by "/" or "-" with no space, which name a date, a score or a span: "9/11", "24/7", "1939-1945")."""
    if re.search(r"(?<![\d.,])\d+[/-]\d+(?![\d.,])", message) and not re.search(r"[-+*/^×÷()]|\d\s+\d",
                                                                               re.sub(r"\d+[/-]\d+", "", message)):
        return None
    asked = _ASKED.match(message)
    if asked is None:
        return None
    text = asked["sum"]
    for pattern, op in _WORDS:
        text = re.sub(pattern, op, text, flags=re.IGNORECASE)
    found: list[Token] = []
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            return None if text[at:].strip() else found if _binary(found) else None
        at = match.end()
        if match["number"]:
            found.append(Token("number", match["number"]))
        elif match["op"] in "()":
            found.append(Token(match["op"], match["op"]))
        elif match["op"] == "-" and (not found or found[-1].kind in ("op", "neg", "(")):
            found.append(Token("neg", "-"))
        else:
            found.append(Token("op", match["op"]))
    return found if _binary(found) else None


def _binary(found: list[Token]) -> bool:
    return any(t.kind == "op" for t in found) and sum(t.kind == "number" for t in found) >= 2


class _Reader:
    """Reduces tokens by precedence: ^ (right to left) over a unary minus over × and ÷ over + and −."""

    def __init__(self, found: list[Token]) -> None:
        self.found, self.at = found, 0

    def peek(self) -> Token | None:
        return self.found[self.at] if self.at < len(self.found) else None

    def take(self) -> Token:
        token = self.found[self.at]
        self.at += 1
        return token

    def whole(self) -> Fraction:
        value = self.sum()
        if self.peek() is not None:
            raise SyntaxError("tokens left over")
        return value

    def sum(self) -> Fraction:
        value = self.product()
        while (token := self.peek()) is not None and token.kind == "op" and token.text in "+-":
            self.take()
            value = value + self.product() if token.text == "+" else value - self.product()
        return value

    def product(self) -> Fraction:
        value = self.signed()
        while (token := self.peek()) is not None and token.kind == "op" and token.text in "*/":
            self.take()
            right = self.signed()
            value = value * right if token.text == "*" else value / right  # ZeroDivisionError
            _bounded(value)
        return value

    def signed(self) -> Fraction:
        if (token := self.peek()) is not None and token.kind == "neg":
            self.take()
            return -self.signed()
        return self.power()

    def power(self) -> Fraction:
        base = self.atom()
        if (token := self.peek()) is not None and token.kind == "op" and token.text == "^":
            self.take()
            exponent = self.signed()
            if exponent.denominator != 1:
                raise ValueError("a power that is not whole")
            if max(abs(base.numerator), base.denominator, 2).bit_length() * abs(exponent.numerator) > MOST_BITS:
                raise TooLarge
            return base ** int(exponent)
        return base

    def atom(self) -> Fraction:
        token = self.take()
        if token.kind == "number":
            return Fraction(token.text.replace(",", ""))
        if token.kind == "(":
            value = self.sum()
            if self.take().kind != ")":
                raise SyntaxError("a bracket left open")
            return value
        raise SyntaxError(f"unexpected {token.text!r}")


def _bounded(value: Fraction) -> None:
    if max(abs(value.numerator), value.denominator).bit_length() > MOST_BITS:
        raise TooLarge


def shown(found: list[Token]) -> str:
    """The sum as the reply writes it: "(3 + 4) ÷ 2", "−3 × −3", "2^10", "1,250 − 30.5"."""
    out = ""
    for token in found:
        if token.kind == "op" and token.text != "^":
            out += f" {SHOWN[token.text]} "
        elif token.kind in ("op", "neg"):
            out += SHOWN[token.text]
        elif token.kind == "number":
            whole, _, decimals = token.text.replace(",", "").partition(".")
            out += f"{int(whole or '0'):,}" + (f".{decimals}" if decimals else "")
        else:
            out += token.text
    return out


def number(value: Fraction) -> str:
    """``value`` whole where it is ("1,024"), else to six decimals without trailing zeros ("3.5", "0.333333")."""
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return f"{float(value):,.6f}".rstrip("0").rstrip(".")


def worked_out(message: str) -> str | None:
    """The reply to ``message`` when it is only a sum (:func:`tokens`): "2 + 2 = 4", "1 ÷ 3 ≈ 0.333333",
    "10 ÷ 0 has no value: division by zero."; ``None`` for any other message, or a sum that does not read
    (an unclosed bracket)."""
    found = tokens(message)
    if found is None:
        return None
    try:
        value = _Reader(found).whole()
    except ZeroDivisionError:
        return f"{shown(found)} has no value: division by zero."
    except TooLarge:
        return f"{shown(found)} is too large to work out here."
    except (SyntaxError, ValueError, IndexError):
        return None
    written = number(value)
    exact = value.denominator == 1 or Fraction(written.replace(",", "")) == value
    return f"{shown(found)} {'=' if exact else '≈'} {written}"
