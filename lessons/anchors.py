"""Heading anchors: the ``id`` each lesson heading gets on the page, so a lesson, the
coverage table (``docs/source-coverage.md``) and a share link can point at one section.

A heading's anchor is its text in lower case, every run of characters other than
letters and digits turned into one hyphen: "## The first iteration, and `static_graph`"
is ``#the-first-iteration-and-static-graph``. The page renders ``##`` and ``###``
headings with these ids (:mod:`app.pages.lesson_page`); nothing else makes them.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from .parser import Lesson, Prose

#: The heading levels that get an anchor (a lesson's sections and their parts).
ANCHORED = ("h2", "h3")

_parser = MarkdownIt("commonmark")


def heading_anchor(text: str) -> str:
    """The anchor of a heading whose (inline Markdown) text is ``text``."""
    plain = re.sub(r"[`*]", "", text).lower()
    return re.sub(r"[^0-9a-z]+", "-", plain).strip("-")


def lesson_anchors(lesson: Lesson) -> list[str]:
    """Every anchor on the lesson's page, in order (a repeated one is listed twice)."""
    anchors = []
    for block in lesson.blocks:
        if isinstance(block, Prose):
            tokens = _parser.parse(block.text)
            for i, token in enumerate(tokens):
                if token.type == "heading_open" and token.tag in ANCHORED:
                    anchors.append(heading_anchor(tokens[i + 1].content))
    return anchors
