"""The ``-k`` expression of ``rngcheck run``: which cases it names, as pytest's ``-k`` names tests.

The grammar is pytest's (``_pytest/mark/expression.py``):

  expression := expr EOF
  expr       := and_expr ('or' and_expr)*
  and_expr   := not_expr ('and' not_expr)*
  not_expr   := 'not' not_expr | '(' expr ')' | ident
  ident      := one or more of: a letter, digit or _, and : + - . [ ] \\ /

1. An ident holds for a case when it is a substring of one of the case's names (its id or its
   category), case-insensitively, as pytest's ``-k`` matches substrings of a test's keywords.
2. ``and``, ``or`` and ``not`` (lowercase) are the grammar's words, never idents; ``not`` binds
   tightest, then ``and``, then ``or``; parentheses group.
3. A malformed expression (empty, an unexpected character or token, an unclosed parenthesis,
   parentheses nested deeper than MAX_DEPTH) is one line naming its column (from 1) and what was
   expected there (RngcheckError: a usage error).
4. Nothing is evaluated as Python: the expression is parsed into a tree (Name, Not, Both, Either)
   that ``matches`` walks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import RngcheckError

MAX_DEPTH = 100   # rule 3: nesting beyond this is refused, not a RecursionError
_IDENT = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
_WORDS = ("and", "or", "not")


@dataclass(frozen=True)
class Name:
    """An ident, lowercased (rule 1)."""
    text: str


@dataclass(frozen=True)
class Not:
    operand: Tree


@dataclass(frozen=True)
class Both:
    """``left and right``."""
    left: Tree
    right: Tree


@dataclass(frozen=True)
class Either:
    """``left or right``."""
    left: Tree
    right: Tree


Tree = Name | Not | Both | Either


@dataclass(frozen=True)
class _Token:
    kind: str     # "ident", "and", "or", "not", "(", ")" or "end"
    text: str
    column: int   # from 1


def _tokens(text: str) -> list[_Token]:
    found, position = [], 0
    while position < len(text):
        if text[position].isspace():
            position += 1
        elif text[position] in "()":
            found.append(_Token(text[position], text[position], position + 1))
            position += 1
        else:
            match = _IDENT.match(text, position)
            if match is None:
                raise _error(text, position + 1, f"unexpected character {text[position]!r}")
            word = match.group()
            found.append(_Token(word if word in _WORDS else "ident", word, position + 1))
            position = match.end()
    found.append(_Token("end", "", len(text) + 1))
    return found


def _error(text: str, column: int, what: str) -> RngcheckError:
    shown = text if len(text) <= 80 else text[:77] + "..."
    return RngcheckError(f"-k {shown!r}: at column {column}: {what}")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.tokens, self.at, self.depth = text, _tokens(text), 0, 0

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self, kind: str) -> bool:
        if self.peek().kind == kind:
            self.at += 1
            return True
        return False

    def expect(self, kind: str, wanted: str) -> None:
        if not self.take(kind):
            raise self.unexpected(wanted)

    def unexpected(self, wanted: str) -> RngcheckError:
        token = self.peek()
        got = "the end of the expression" if token.kind == "end" else repr(token.text)
        return _error(self.text, token.column, f"expected {wanted}; got {got}")

    def expression(self) -> Tree:
        tree = self.expr()
        self.expect("end", "'and', 'or' or the end of the expression")
        return tree

    def expr(self) -> Tree:
        tree = self.and_expr()
        while self.take("or"):
            tree = Either(tree, self.and_expr())
        return tree

    def and_expr(self) -> Tree:
        tree = self.not_expr()
        while self.take("and"):
            tree = Both(tree, self.not_expr())
        return tree

    def not_expr(self) -> Tree:
        token = self.peek()
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _error(self.text, token.column, f"nested deeper than {MAX_DEPTH}")
            if self.take("not"):
                return Not(self.not_expr())
            if self.take("("):
                tree = self.expr()
                self.expect(")", "')'")
                return tree
            if self.take("ident"):
                return Name(token.text.lower())
            raise self.unexpected("a name, 'not' or '('")
        finally:
            self.depth -= 1


@dataclass(frozen=True)
class Keyword:
    """A compiled ``-k`` expression: ``text`` as given, ``tree`` as parsed (rule 4)."""

    text: str
    tree: Tree

    @classmethod
    def compile(cls, text: str) -> Keyword:
        """``text`` parsed (rule 3: RngcheckError with the column when it is malformed)."""
        return cls(text, _Parser(text).expression())

    def matches(self, names: Iterable[str]) -> bool:
        """Whether the expression holds for a case with these names (rule 1)."""
        folded = [name.lower() for name in names]
        return _holds(self.tree, folded)


def _holds(tree: Tree, names: list[str]) -> bool:
    # (iterative down the left-deep chains 'a or b or ...' builds; other nesting is bounded by MAX_DEPTH)
    while isinstance(tree, (Both, Either)):
        value = _holds(tree.right, names)
        if isinstance(tree, Both) != value:   # false on the right of 'and', true on the right of 'or'
            return value
        tree = tree.left
    if isinstance(tree, Not):
        return not _holds(tree.operand, names)
    return any(tree.text in name for name in names)
