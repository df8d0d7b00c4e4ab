"""Synthetic but varied highlights: sentences built from word lists with a seeded RNG.

Same seed, same library: runs on different days compare like with like. The vocabulary is
big enough that FTS5 terms have realistic spreads (a few very common words, a long tail of
rare ones), and sources, tags, notes and favourites are spread the way a reader's are.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Single words, not phrases: the generator picks them independently, which gives FTS5 a
# realistic spread of common and rare terms.
_SUBJECTS = _words(
    "attention memory habit curiosity discipline patience courage judgement habitually "
    "the reader the writer a scientist an engineer the historian a teacher the market "
    "the city the river the mind every system a good question deep work compound interest "
    "the long game a simple rule the first principle good writing the best teams a craft "
    "the garden an honest mistake the archive the experiment our intuition the evidence "
    "a map the territory a strong opinion the forest the algorithm a small team the library"
)
_VERBS = _words(
    "shapes rewards punishes reveals hides compounds erodes sharpens clarifies outlasts "
    "teaches forgets borrows explains survives multiplies divides protects questions "
    "follows leads mirrors replaces improves simplifies complicates frames anchors"
)
_OBJECTS = _words(
    "what we notice the way we decide every choice the next generation our sense of time "
    "the quality of our work long-term thinking the shape of a career a quiet morning "
    "the cost of delay the value of focus the boundaries of knowledge the story we tell "
    "the habits of experts the limits of planning the pace of learning the path of least "
    "resistance the patience of readers the price of certainty the design of cities "
    "the trust between people the weight of evidence the speed of change"
)
_ADVERBIALS = (
    "over decades",
    "in small steps",
    "without our noticing",
    "more than we admit",
    "when nobody is watching",
    "in times of crisis",
    "at the margins",
    "by default",
    "through repetition",
    "one page at a time",
    "under pressure",
    "in the long run",
    "before breakfast",
    "after the fact",
    "against all odds",
    "in every field",
)
_CONNECTIVES = ("because", "although", "while", "so that", "until", "unless", "and yet")
_RARE = _words(
    "stoicism entropy serendipity kaizen antifragile heuristics epistemology metacognition "
    "zettelkasten ergodicity photosynthesis thermodynamics renaissance cartography "
    "mycelium bioluminescence cryptography typography permaculture monasticism "
    "dialectic symbiosis homeostasis palimpsest marginalia apprenticeship stewardship "
    "wabi-sabi ikigai sisu hygge lagom saudade ubuntu"
)
_FIRST = _words(
    "Ada Marcus Lena Tomas Yuki Priya Omar Greta Felix Nadia Hugo Iris Kenji Amara Leo Sofia"
)
_LAST = _words(
    "Holloway Brandt Okafor Lindqvist Moreau Tanaka Rivera Kowalski Haddad Novak Fischer "
    "Mensah Castillo Nakamura Duval Andersson"
)
_TITLE_HEADS = (
    "The Art of",
    "Notes on",
    "A Short History of",
    "Thinking About",
    "The Science of",
    "On",
    "Letters on",
    "The Quiet Power of",
    "Designing",
    "The Economics of",
)
_TITLE_TAILS = (
    "Attention",
    "Slow Work",
    "Memory",
    "Cities",
    "Rivers",
    "Habits",
    "Craft",
    "Decisions",
    "Learning",
    "Trust",
    "Time",
    "Gardens",
    "Maps",
    "Small Teams",
    "Evidence",
    "Writing",
)
SOURCE_TYPES = ("book", "book", "book", "podcast", "video", "tweet", "self", "custom")
TAG_NAMES = tuple(
    f"{head}-{tail}"
    for head in ("focus", "craft", "science", "history", "mind", "work", "life", "ideas")
    for tail in ("core", "later", "review", "quote", "fact", "idea", "todo", "deep")
)


def sentence(rng: random.Random) -> str:
    parts = [rng.choice(_SUBJECTS), rng.choice(_VERBS), rng.choice(_OBJECTS)]
    if rng.random() < 0.6:
        parts.append(rng.choice(_ADVERBIALS))
    if rng.random() < 0.35:
        parts += [rng.choice(_CONNECTIVES), rng.choice(_SUBJECTS), rng.choice(_VERBS)]
        parts.append(rng.choice(_OBJECTS))
    if rng.random() < 0.15:
        parts.insert(rng.randrange(1, len(parts)), rng.choice(_RARE))
    text = " ".join(parts)
    return text[0].upper() + text[1:] + "."


def passage(rng: random.Random) -> str:
    """One to four sentences: most highlights are short, a few are long."""
    count = rng.choices((1, 2, 3, 4), weights=(40, 35, 17, 8))[0]
    return " ".join(sentence(rng) for _ in range(count))


@dataclass(frozen=True)
class SourceSpec:
    name: str
    type: str
    author: str | None


@dataclass(frozen=True)
class HighlightSpec:
    content: str
    note: str | None
    favorite: bool
    source_index: int | None  # into the sources list; None: a standalone highlight
    tags: list[str]
    location: int | None


def sources(count: int, seed: int = 7) -> list[SourceSpec]:
    rng = random.Random(seed)
    out = []
    for number in range(count):
        kind = rng.choice(SOURCE_TYPES)
        if kind == "self" and any(spec.type == "self" for spec in out):
            kind = "custom"  # a library has one personal-notes source
        title = f"{rng.choice(_TITLE_HEADS)} {rng.choice(_TITLE_TAILS)}"
        if rng.random() < 0.3:
            title += f" {rng.choice(_RARE).title()}"
        author = None if kind == "self" else f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        out.append(SourceSpec(f"{title} ({number + 1})", kind, author))
    return out


def highlights(count: int, source_count: int, seed: int = 11) -> list[HighlightSpec]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        tag_count = rng.choices((0, 1, 2, 3), weights=(45, 35, 15, 5))[0]
        out.append(
            HighlightSpec(
                content=passage(rng),
                note=sentence(rng) if rng.random() < 0.15 else None,
                favorite=rng.random() < 0.1,
                source_index=rng.randrange(source_count) if rng.random() < 0.95 else None,
                tags=rng.sample(TAG_NAMES, tag_count),
                location=rng.randrange(1, 5000) if rng.random() < 0.7 else None,
            )
        )
    return out


def queries(count: int, seed: int = 13) -> list[str]:
    """Distinct search queries: keywords, short phrases and questions, as agents send them."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        style = rng.random()
        if style < 0.35:
            text = f"{rng.choice(_SUBJECTS)} {rng.choice(_OBJECTS)}"
        elif style < 0.6:
            text = f"how does {rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
        elif style < 0.8:
            text = f"{rng.choice(_RARE)} {rng.choice(_SUBJECTS)}"
        else:
            text = f"{rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_ADVERBIALS)}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def article_text(chars: int, seed: int = 17) -> str:
    rng = random.Random(seed)
    paragraphs: list[str] = []
    while sum(len(p) + 2 for p in paragraphs) < chars:
        paragraphs.append(" ".join(sentence(rng) for _ in range(rng.randint(3, 7))))
    return "\n\n".join(paragraphs)[:chars]
