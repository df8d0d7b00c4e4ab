"""A small sample library, so that search can be tried on a fresh install.

Passages are from public-domain books (texts published before 1929) or written for this
project. Loaded through the API like any other client's data, so embeddings and the keyword
index are built the normal way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from screvi_mcp.embedded import embedded_client


@dataclass(frozen=True)
class SampleSource:
    name: str
    author: str
    type: str
    highlights: tuple[tuple[str, tuple[str, ...]], ...]  # (content, tags)


SAMPLE: tuple[SampleSource, ...] = (
    SampleSource(
        "Walden",
        "Henry David Thoreau",
        "book",
        (
            (
                "I went to the woods because I wished to live deliberately, to front only the "
                "essential facts of life, and see if I could not learn what it had to teach, and "
                "not, when I came to die, discover that I had not lived.",
                ("simplicity",),
            ),
            (
                "Our life is frittered away by detail. An honest man has hardly need to count more "
                "than his ten fingers, or in extreme cases he may add his ten toes, and lump the "
                "rest. Simplicity, simplicity, simplicity!",
                ("simplicity",),
            ),
            ("The mass of men lead lives of quiet desperation.", ()),
            (
                "Time is but the stream I go a-fishing in. I drink at it; but while I drink I see "
                "the sandy bottom and detect how shallow it is.",
                ("time",),
            ),
            ("Heaven is under our feet as well as over our heads.", ("nature",)),
        ),
    ),
    SampleSource(
        "Meditations",
        "Marcus Aurelius (tr. George Long)",
        "book",
        (
            (
                "Begin the morning by saying to thyself, I shall meet with the busy-body, the "
                "ungrateful, arrogant, deceitful, envious, unsocial.",
                ("stoicism",),
            ),
            ("The universe is transformation: life is opinion.", ("stoicism",)),
            ("Remember that all is opinion.", ("stoicism",)),
            (
                "Look within. Within is the fountain of good, and it will ever bubble up, if thou "
                "wilt ever dig.",
                ("stoicism",),
            ),
        ),
    ),
    SampleSource(
        "Self-Reliance",
        "Ralph Waldo Emerson",
        "book",
        (
            (
                "A foolish consistency is the hobgoblin of little minds, adored by little "
                "statesmen and philosophers and divines.",
                (),
            ),
            ("Trust thyself: every heart vibrates to that iron string.", ("courage",)),
            ("To be great is to be misunderstood.", ("courage",)),
        ),
    ),
    SampleSource(
        "On the Origin of Species",
        "Charles Darwin",
        "book",
        (
            (
                "There is grandeur in this view of life, with its several powers, having been "
                "originally breathed into a few forms or into one; and that, whilst this planet "
                "has gone cycling on according to the fixed law of gravity, from so simple a "
                "beginning "
                "endless forms most beautiful and most wonderful have been, and are being, "
                "evolved.",
                ("nature", "science"),
            ),
            (
                "It is interesting to contemplate an entangled bank, clothed with many plants of "
                "many kinds, with birds singing on the bushes, with various insects flitting "
                "about, and with worms crawling through the damp earth.",
                ("nature",),
            ),
        ),
    ),
    SampleSource(
        "Pride and Prejudice",
        "Jane Austen",
        "book",
        (
            (
                "It is a truth universally acknowledged, that a single man in possession of a good "
                "fortune, must be in want of a wife.",
                ("fiction",),
            ),
            ("I could easily forgive his pride, if he had not mortified mine.", ("fiction",)),
        ),
    ),
    SampleSource(
        "Notes on building software",
        "screvi-mcp sample",
        "custom",
        (
            (
                "Measure before optimising: the slow part is rarely where you guessed, and a "
                "benchmark that prints a ratio against a baseline survives a noisy machine.",
                ("engineering",),
            ),
            (
                "Small modules with one concern each are easier to test, to read and to replace "
                "than one clever framework that does everything.",
                ("engineering",),
            ),
            (
                "An error message should say what went wrong and what to do next; the reader is "
                "often a program that cannot ask a follow-up question.",
                ("engineering",),
            ),
            (
                "Write the test that fails first. A test that cannot fail proves nothing.",
                ("engineering", "testing"),
            ),
        ),
    ),
)


async def load_sample(library_path: Path) -> tuple[int, int]:
    """Load the sample into the library; returns (sources added, highlights added).

    Sources already present by name are left alone, so loading twice adds nothing.
    """
    added_sources = added_highlights = 0
    async with await embedded_client(library_path) as client:
        existing = {
            source.name
            async for source in client.iterate(
                client.list_sources, include_empty=True, max_items=None
            )
        }
        for sample in SAMPLE:
            if sample.name in existing:
                continue
            source = await client.create_source(sample.name, sample.type, author=sample.author)  # type: ignore[arg-type]
            await client.create_highlights_bulk(
                [
                    {"content": content, "source_id": source.id, "tags": list(tags)}
                    for content, tags in sample.highlights
                ]
            )
            added_sources += 1
            added_highlights += len(sample.highlights)
    return added_sources, added_highlights
