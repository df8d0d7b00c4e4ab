"""What of a query is searched: the topic, without the words that only ask for it.

Agents and readers wrap a topic in words about the library itself: "highlights about
stoicism", "what did I save about negotiation?", "quotes on grief", "find my notes on
sourdough". Those words are not in the highlights, so the keyword side (which wants every
content word in one highlight) finds nothing, and they pull the query's embedding away from
the topic: on the tuning half, "what did I save about X" lost a fifth of the answers found
in the top 3 and every tag query. The similarity curves were fitted on topics as such, so
search reads the topic alone:

- a leading frame that asks for the reader's saved items is dropped ("highlights about",
  "what have I highlighted on", "show me my notes on", "anything in my library on",
  "search for"); what follows it is the topic, unless frame and topic read as a title
  ("Notes on Building Software");
- the items named after the topic are dropped ("stoicism quotes"; not "notes" or
  "lines", which end topics: "reading notes", "fault lines");
- trailing question marks and full stops are dropped (they move MiniLM's vector, and no
  highlight's words depend on them);
- capitals that say nothing are dropped (`language.case_normalised`).

Only English frames are known; a query that is nothing but a frame is left whole.
"""

from __future__ import annotations

import re

from screvi_mcp.local.search.language import case_normalised, name_words
from screvi_mcp.local.search.stopwords import STOPWORDS

_ITEMS = (
    r"(?:highlights?|quotes?|quotations?|passages?|notes?|excerpts?|snippets?|clippings?|"
    r"bookmarks?|lines?)"
)
_SAVED = (
    r"(?:saved|save|highlighted|highlight|clipped|noted|note|written|write|wrote|kept|read|"
    r"bookmarked|collected|marked|got)"
)
_ABOUT = (
    r"(?:about|on|regarding|concerning|related to|to do with|mentioning|that mention|"
    r"that talk about|touching on|dealing with|for)"
)
# Words before the frame's core that only address the assistant or the library.
_LEAD = (
    r"(?:please|can you|could you|would you|do i have|did i|have i|i want|i'd like|"
    r"i'm looking for|i am looking for|looking for|remind me(?: of)?|tell me|show me|show|"
    r"find me|find|search(?: my library)?(?: for)?|get me|get|list|give me|fetch|pull up|pull|"
    r"look up|look for|any|all|some|of|my|the|in|from|library|what|which|anything|"
    r"everything|something|things)"
)
# The frame's core: the reader's saved items, or what the reader saved.
_CORE = (
    rf"(?:{_ITEMS}(?: (?:that )?(?:i|i've|i have) (?:ever |already )?{_SAVED})?"
    rf"|(?:(?:did|have|do|had) )?i (?:ever |already )?{_SAVED}(?: anything| something)?"
    rf"(?: down)?"
    rf"|(?:anything|something|everything)(?: (?:in|from) (?:my|the) (?:library|collection))?)"
)
_FRAME = re.compile(rf"^(?:{_LEAD} )*{_CORE} {_ABOUT} ", re.IGNORECASE)
# "search for X", "look up X": a verb that only asks to search, with no item word.
_SEARCH_VERB = re.compile(
    r"^(?:please )?(?:search(?: my library| my highlights)? for|look up|look for) ",
    re.IGNORECASE,
)
# "stoicism quotes", "X highlights": the items named after the topic (not "notes" or
# "lines": "reading notes", "fault lines" are topics).
_ITEMS_AFTER = re.compile(
    r" (?:quotes|quotations|highlights|passages|excerpts|snippets|clippings)$", re.IGNORECASE
)
_ITEM_WORD = re.compile(_ITEMS, re.IGNORECASE)
_TRAILING = re.compile(r"[\s?.!]+$")


def searched_text(text: str) -> str:
    """The part of `text` search ranks by (the module docstring says what is dropped)."""
    topic = case_normalised(_TRAILING.sub("", text).strip())
    if not topic:
        return text
    framed = _FRAME.match(topic) or _SEARCH_VERB.match(topic)
    rest = topic[framed.end() :].strip() if framed else ""
    if rest and not _reads_as_title(topic, rest):
        topic = rest
    trailing = _ITEMS_AFTER.search(topic)
    if trailing and name_words(topic) is None:  # "Stoic Quotes" may be a title
        before = topic[: trailing.start()]
        if any(word.lower() not in STOPWORDS for word in before.split()):
            topic = before
    return topic


def _reads_as_title(topic: str, rest: str) -> bool:
    """ "Notes on Building Software", "Quotes On Courage": a frame that starts with a
    capitalised item word, before a capitalised topic, is a source's title, kept whole for
    the keyword side to find. ("My highlights about Emerson" is a frame before a name.)"""
    first = topic.split()[0]
    return first[:1].isupper() and _ITEM_WORD.fullmatch(first) is not None and rest[:1].isupper()
