"""Is this text English? A small detector for routing search between two embedding models.

MiniLM (the English model) ranks English text well and everything else poorly; the
multilingual model ranks across languages but worse than MiniLM on English paraphrases
(docs/search.md). Search therefore only needs one bit per text: English or not.

The decision counts function words: English stopwords against the commonest function words
of French, German, Spanish, Italian, Portuguese and Dutch, plus letters English never uses
(é, ß, ñ...). A text mostly in a non-Latin script (Cyrillic, Greek, CJK, Arabic...) is not
English whatever its words. With no foreign function word (a one-word query, a
name, a code identifier) the text counts as English: that keeps today's English behaviour, which was
tuned for exactly such queries. No model or dependency: it runs on every highlight and on
every query, in microseconds.
"""

from __future__ import annotations

import re
import unicodedata

from screvi_mcp.local.search.stopwords import STOPWORDS

# Function words that are common in these languages and rare or absent in English prose.
# Words that are also English words ("a", "die", "come", "son", "man", "also", "see") are
# left out: each word here must point away from English.
_FOREIGN_WORDS = """
    un une des du au aux et est sont dans pas qui que quoi avec sur ce cette ces
    mais ou où donc ni je tu il elle nous vous ils elles leur leurs mon ses sa notre votre
    être avoir fait comme très tout tous toute bien sans chez aussi comment pourquoi quand
    lorsque c'est qu'il qu'on l'on n'est d'un d'une j'ai
    der das dem des ein eine einen einem einer und ist sind nicht mit auf für von zu zum
    zur bei aus nach wie wer wenn oder aber auch noch nur schon sich ich du sie wir ihr
    mich dich uns euch mein dein sein kein keine haben wird werden wurde gegen über unter
    durch ohne vom dass weil
    una unos unas en por para está están pero como más muy qué cómo cuándo dónde
    porque sobre entre hasta desde tú él ella nosotros ellos ellas su sus mi mis tus
    se nos ser estar tiene
    gli della delle dello degli nel nella nei che di da più sono anche perché quando
    questo questa quello quella ogni molto
    uma não pelo pela nas ao à às é são mais muito também onde isso este esta esse essa
    het een niet voor aan bij uit naar wie als maar ook nog alleen zich ik jij hij zij wij
    jullie mijn zijn haar heeft hebben wordt worden
"""
_FOREIGN = frozenset(_FOREIGN_WORDS.split())
# Short function words of French, Spanish, Italian and Portuguese that English meets only
# in names and abbreviations ("El Greco", "EU", "Los Angeles", "La Rochefoucauld"): they
# count as foreign only in running text, in lower case (or capitalised as a text's first
# word before a lower-case one), never inside a capitalised name or in capitals. Without
# them "el tiempo es oro" or "cada dia um passo" had no foreign word at all. Italian
# "quale", "quali", "cosa" are the same ("Cosa Nostra"). "de" is left out even in running
# text: English borrows it in whole phrases ("pastel de nata", "tour de force", "de facto"),
# so "recetas de pan sin gluten" still reads as English.
_NAME_PRONE_WORDS = frozenset(
    {"el", "la", "le", "les", "los", "las", "es", "lo", "eu", "um", "uns", "umas", "cada"}
    | {"sem", "senza", "tengo", "hay", "fue", "ya", "quale", "quali", "cosa"}
)
# A French or Italian article or preposition elided before a vowel: "l'art", "d'eau",
# "dell'impero", "nell'acqua". English elides otherwise ("it's", "o'clock", "rock'n'roll";
# so no "s'", "c'", "m'", "t'": "s'mores", "c'mon"), and an apostrophe in a capitalised
# word is a name ("O'Brien", "D'Angelo").
_ELISION = re.compile(r"(?:d|l|j|n|qu|dell|dall|nell|sull|all|coll|un|quell|quest)'[^\W\d_]")
# Words that are as much English as foreign ("son", "car", "hat", "per", "van", "del", "os")
# are left out above, so that an English query made of them is never sent elsewhere.
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
# Letters with marks that English spells without (naïve and café aside: one such word in an
# English sentence does not outweigh its English function words).
_FOREIGN_LETTERS = frozenset("àâäçéèêëîïôöùûüÿñßœæãõáíóúì¿¡")


def is_english(text: str) -> bool:
    """Whether `text` reads as English (True also when nothing says otherwise)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return True
    if _non_latin_share(letters) > 0.3:
        return False
    tokens = _WORD.findall(text)
    words = [word.lower() for word in tokens]
    foreign_words = sum(1 for word in words if word in _FOREIGN and word not in STOPWORDS)
    foreign_words += _name_prone_in_running_text(tokens)
    foreign_words += sum(
        1 for token in tokens if token.islower() and token not in _FOREIGN and _ELISION.match(token)
    )
    if foreign_words == 0:
        # Marked letters alone are a name ("Lübeck merchants", "Schrödinger") or a loan
        # word: not enough to take the query away from the English model.
        return True
    english = sum(1 for word in words if word in STOPWORDS)
    marked = sum(1 for word in words if any(ch in _FOREIGN_LETTERS for ch in word))
    # Foreign evidence weighs double: a short foreign text ("pourquoi le ciel est bleu")
    # has few function words, and shares "a", "am", "me", "so" with English by accident.
    return english >= 2 * (foreign_words + marked)


def _name_prone_in_running_text(tokens: list[str]) -> int:
    count = 0
    for position, token in enumerate(tokens):
        if token.lower() not in _NAME_PRONE_WORDS:
            continue
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if token.islower():
            count += not following[:1].isupper()  # "de el Greco" is still a name
        elif position == 0 and token.istitle() and following.islower():
            count += 1  # "El tiempo es oro": a sentence's first word
    return count


def _non_latin_share(letters: list[str]) -> float:
    other = 0
    for ch in letters:
        if ch.isascii():
            continue
        name = unicodedata.name(ch, "")
        if not name.startswith("LATIN"):
            other += 1
    return other / len(letters)


# A name is short: "Vassbotten", "Tarrow Bay", "Marcus Aurelius". A longer all-capitalised
# query is a Title Case sentence ("Crop Rotation For Tomatoes"), a topic.
NAME_MAX_WORDS = 3


def name_words(text: str) -> list[str] | None:
    """The words of a query that is only a name ("Vassbotten", "Tarrow Bay"): at most
    NAME_MAX_WORDS words, each capitalised, none a function word. None otherwise: a word
    in lower case or a stopword makes it a topic, typed in Title Case or not."""
    words = [word for word in text.split() if word[:1].isalpha()]
    if not words or len(words) > NAME_MAX_WORDS:
        return None
    if not all(word[0].isupper() and word.lower() not in STOPWORDS for word in words):
        return None
    return words


def case_normalised(text: str) -> str:
    """`text` in lower case when its capitals say nothing, else `text` unchanged.

    Capitals carry meaning in running text: they mark names (named_sources.py), keep "La"
    in "La Rochefoucauld" from reading as French, and tell the cased multilingual model
    what a word is. A query typed In Title Case or IN CAPITALS capitalises every word,
    names and topic words alike, so those rules misread it: a capitalised title word reads
    as a named source, and the multilingual model embeds "Comment Éviter Les Blessures"
    unlike the lower-case highlights it should find. Such a query is searched in lower
    case. A query that is only a name ("Tarrow Bay", "NASA": `name_words`) keeps its
    capitals; they are what says it is a name.
    """
    words = _WORD.findall(text)
    if len(words) < 2 or not all(word[0].isupper() for word in words):
        return text
    if name_words(text) is not None:
        return text
    return text.lower()
