# ruff: noqa: E501  (prose: one passage per line reads and diffs best)
"""A labelled set for judging search quality, written for this project (original text).

The first part (here) is the original set: 69 highlights over ~25 subjects with invented
sources and people (so that rare names are really rare) and 33 queries. `labelled_extra.py`
adds 238 highlights (public-domain quotations and our own prose, including French, German
and Spanish text, very short and very long highlights, notes and tags) and 96 queries;
`labelled_languages.py` adds 27 highlights in six other languages, 35 queries across and
within languages and 38 negatives (other languages, near-topic, cross-language near-topic).

Query kinds (`KINDS`): paraphrase (no content word shared with the answer), exact (terms and
code identifiers), name (a rare name alone), source (an author or title plus a topic), mixed,
note (the answer is only in the reader's note), tag (the answer carries the tag, its text
does not name it), crosslang (query and highlight in different languages), non_english
(query and answer in the same language, not English), short (the answer
has six words or fewer), long (the answer is late in a highlight of 256+ tokens), hard (the
answer sits among highlights on the same subject). Negative queries have no answer:
off_topic ones are far from every subject, near_topic ones sit next to a covered subject,
near_crosslang ones sit next to a covered subject across languages (or are not English).

THE SPLIT, made once and never changed: within each kind, in the order listed (original
queries first, then the extra ones), the 1st, 3rd, 5th... query is in the tuning half and
the 2nd, 4th, 6th... in the held-out half; negatives likewise within each negative kind.
Later parts are appended after earlier ones, so growing the set never moves an item.
Every parameter of ranking and verification is fitted on the tuning half only; figures
reported in docs/search.md are held-out figures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from labelled_extra import NEGATIVES_EXTRA, PASSAGES_EXTRA, QUERIES_EXTRA, SOURCES_EXTRA
from labelled_languages import (
    NEGATIVES_LANGUAGES,
    PASSAGES_LANGUAGES,
    QUERIES_LANGUAGES,
    SOURCES_LANGUAGES,
)


@dataclass(frozen=True)
class Source:
    key: str
    name: str
    type: str
    author: str | None


@dataclass(frozen=True)
class Passage:
    key: str
    source: str | None
    content: str
    note: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelledQuery:
    q: str
    kind: str  # one of KINDS
    relevant: tuple[str, ...]  # graded: the first is the best answer (grade 2), others grade 1


ORIGINAL_SOURCES = [
    Source("garden", "The Patient Plot", "book", "Ingrid Vassbotten"),
    Source("sky", "Lights Over Tarrow Bay", "book", "Osei Mensah-Clarke"),
    Source("money", "Quiet Money", "book", "Delphine Okonkwo"),
    Source("kitchen", "Flour, Water, Time", "podcast", "Ruben Aldecoa"),
    Source("mind", "The Restless Animal", "book", "Tomasz Wielgosz"),
    Source("code", "Notes on Building Software", "article", "Priya Raghunathan"),
    Source("sea", "Logbook of the Marisol", "book", "Captain Aurelio Fenn"),
    Source("body", "Run Slow, Live Long", "video", "Kiri Te Awhina"),
    Source("past", "Ledgers of the Hanseatic Towns", "book", "Margarethe Holzapfel"),
    Source("self", "My notes", "self", None),
]

ORIGINAL_PASSAGES = [
    # gardening
    Passage(
        "tomato_blight",
        "garden",
        "Water tomatoes at the base in the morning; wet leaves overnight invite blight, and once the brown spots appear the plant rarely recovers.",
    ),
    Passage(
        "compost_ratio",
        "garden",
        "A compost heap wants roughly three parts dry brown matter, like straw and fallen leaves, to one part green kitchen scraps. Too much green and it turns slimy and smells.",
    ),
    Passage(
        "patience_soil",
        "garden",
        "Soil is built over decades, not seasons. The gardener who turns the earth every spring destroys the fungal threads that took years to spread.",
    ),
    Passage(
        "companion_planting",
        "garden",
        "Marigolds planted between rows of beans seem to keep some pests away, though the evidence is thinner than garden folklore suggests.",
    ),
    Passage(
        "pruning_roses",
        "garden",
        "Cut roses back hard in late winter, just above an outward-facing bud, so the new growth opens the centre of the bush to light and air.",
    ),
    # astronomy
    Passage(
        "dark_adaptation",
        "sky",
        "Your eyes need about twenty minutes in full darkness before faint galaxies appear; one glance at a phone screen resets the clock.",
    ),
    Passage(
        "light_pollution",
        "sky",
        "From the harbour at Tarrow Bay the Milky Way was once bright enough to cast shadows. Now the glow of the new port terminal washes out everything but the brightest stars.",
    ),
    Passage(
        "andromeda_distance",
        "sky",
        "The Andromeda galaxy is about two and a half million light years away, so the photons hitting your eye left it before our species existed.",
    ),
    Passage(
        "meteor_shower",
        "sky",
        "The Perseids peak in mid August; lie flat, look away from the radiant, and expect a meteor every minute or two under a dark sky.",
    ),
    Passage(
        "telescope_aperture",
        "sky",
        "Aperture, not magnification, decides what a telescope can show you. A wide mirror gathers more light; cheap scopes advertising 600x are selling blur.",
    ),
    # personal finance
    Passage(
        "compound_interest",
        "money",
        "Compound interest rewards the early and punishes the impatient: ten years of saving in your twenties can outgrow thirty years of saving started at forty.",
    ),
    Passage(
        "emergency_fund",
        "money",
        "Before investing a single pound, keep three to six months of living costs in cash. It is not there to earn anything; it is there so you never have to sell shares in a crash.",
    ),
    Passage(
        "index_funds",
        "money",
        "Most professional fund managers fail to beat a low-cost index fund over twenty years once their fees are counted.",
    ),
    Passage(
        "lifestyle_creep",
        "money",
        "Every pay rise quietly becomes a bigger flat, a nicer car, a more expensive habit. Okonkwo calls it the escalator you never asked to ride.",
    ),
    Passage(
        "debt_avalanche",
        "money",
        "Pay the minimum on every loan and throw every spare coin at the one with the highest interest rate; it is dull but mathematically the cheapest way out of debt.",
    ),
    # cooking / baking
    Passage(
        "sourdough_starter",
        "kitchen",
        "A sourdough starter is just flour and water colonised by wild yeast and bacteria. Feed it daily at room temperature and it will double within a few hours of each feeding.",
    ),
    Passage(
        "salt_timing",
        "kitchen",
        "Salt a steak at least forty minutes before cooking, or right before it hits the pan; anything in between leaves a puddle of brine on the surface and a grey crust.",
    ),
    Passage(
        "maillard",
        "kitchen",
        "Browning is flavour. The Maillard reaction between sugars and amino acids only gets going above about 140 degrees, which is why boiled meat tastes flat.",
    ),
    Passage(
        "knife_sharpening",
        "kitchen",
        "A dull knife is more dangerous than a sharp one, because you press harder and it slips. Hone the edge every time you cook and sharpen it properly twice a year.",
    ),
    Passage(
        "resting_dough",
        "kitchen",
        "Leave the dough alone for twenty minutes after mixing flour and water, before adding the salt. Aldecoa swears this autolyse does half the kneading for you.",
    ),
    # psychology / habits / sleep
    Passage(
        "habit_cue",
        "mind",
        "A habit is easier to start when it is stacked onto something you already do every day: after I pour my coffee, I write one sentence.",
    ),
    Passage(
        "sleep_schedule",
        "mind",
        "Going to bed and getting up at the same hour every day, weekends included, does more for rest than any supplement or gadget.",
    ),
    Passage(
        "screens_bed",
        "mind",
        "Bright screens late in the evening delay the body's release of melatonin, so people who scroll in bed take longer to drift off.",
    ),
    Passage(
        "loss_aversion",
        "mind",
        "People feel the pain of losing fifty dollars about twice as strongly as the pleasure of finding fifty dollars, and that asymmetry bends countless decisions.",
    ),
    Passage(
        "boredom",
        "mind",
        "Boredom is not a failure of the world to entertain us. Wielgosz argues it is a signal that our attention wants a harder problem.",
    ),
    Passage(
        "willpower_environment",
        "mind",
        "People who seem disciplined mostly arrange their surroundings so temptation never shows up; the biscuits are simply not in the house.",
    ),
    Passage(
        "gratitude_journal",
        "mind",
        "Writing down three small things that went well each evening measurably lifted mood in the study, though the effect faded when people stopped.",
    ),
    # software
    Passage(
        "premature_optimisation",
        "code",
        "Measure before you optimise. Nine times out of ten the slow part of the program is not where the team was sure it would be.",
    ),
    Passage(
        "code_review",
        "code",
        "A code review is a conversation about the change, not a verdict on the author. Ask questions before you make demands.",
    ),
    Passage(
        "naming",
        "code",
        "If you cannot find a good name for a function, it probably does two things. Split it, and the names usually appear on their own.",
    ),
    Passage(
        "tests_refactor",
        "code",
        "Without tests, refactoring is just changing code and hoping. A suite you trust is what lets you clean up a messy module without fear.",
    ),
    Passage(
        "kalman",
        "code",
        "A Kalman filter blends a noisy measurement with a prediction, weighting each by how much you trust it; Raghunathan used one to smooth the GPS track from a delivery van.",
    ),
    Passage(
        "incident_blameless",
        "code",
        "After an outage, write the review without blame. People hide mistakes when they are punished for them, and hidden mistakes repeat.",
    ),
    # sailing
    Passage(
        "reefing",
        "sea",
        "Reef early. By the time you wonder whether it is time to shorten sail, the wind has already made the job twice as hard.",
    ),
    Passage(
        "tides_marisol",
        "sea",
        "We anchored off Skerryvore Point on the falling tide and woke at three in the morning with the keel bumping the sand.",
    ),
    Passage(
        "dead_reckoning",
        "sea",
        "With the GPS dead, Fenn worked out our position by dead reckoning from speed, heading and time alone, and we raised the lighthouse within a mile of his pencil mark.",
    ),
    Passage(
        "seasickness",
        "sea",
        "Seasickness eases if you stay on deck, watch the horizon and keep something plain in your stomach; going below to lie down makes it worse.",
    ),
    # running / health
    Passage(
        "easy_running",
        "body",
        "Most of your runs should be slow enough that you could chat the whole way. The aerobic base is built at an easy pace, not in heroic efforts.",
    ),
    Passage(
        "injury_load",
        "body",
        "Runners get hurt when weekly distance jumps too quickly; add no more than about ten percent a week and let tendons catch up with the lungs.",
    ),
    Passage(
        "strength_older",
        "body",
        "After fifty, lifting weights twice a week slows the loss of muscle and bone more than any amount of walking.",
    ),
    Passage(
        "hydration",
        "body",
        "On a long run in the heat, drink to thirst and take salt; forcing down litres of plain water can dilute your blood sodium dangerously.",
    ),
    # history
    Passage(
        "hanse_trade",
        "past",
        "The Hanseatic merchants of Lübeck traded Baltic grain, furs and herring for Flemish cloth, and their guild houses stood in London, Bergen and Novgorod.",
    ),
    Passage(
        "hanse_decline",
        "past",
        "The league faded not in one defeat but as Dutch shipping, new Atlantic routes and strong territorial princes slowly made its privileges worthless.",
    ),
    Passage(
        "printing_press",
        "past",
        "Within fifty years of Gutenberg's press, millions of books circulated in Europe, and arguments that once took a generation to spread took a season.",
    ),
    Passage(
        "plague_wages",
        "past",
        "After the Black Death killed a third of the workers, the survivors could demand higher wages, and lords passed laws trying to hold pay at the old rates.",
    ),
    Passage(
        "holzapfel_archives",
        "past",
        "Holzapfel spent eleven winters in the Reval town archive copying customs ledgers by candlelight.",
    ),
    # self notes and varied subjects
    Passage(
        "language_immersion",
        "self",
        "I learned more Portuguese in three weeks of ordering food and getting lost in Porto than in a year of the app.",
    ),
    Passage(
        "birdsong_dawn",
        "self",
        "The dawn chorus starts with the robin and the blackbird, often before first light; the finches join later when it is brighter.",
    ),
    Passage(
        "photo_golden_hour",
        "self",
        "The hour after sunrise and before sunset gives soft, warm light with long shadows; midday sun flattens every face.",
        note="photography",
    ),
    Passage(
        "chess_endgame",
        "self",
        "In king and pawn endings the king is a fighting piece: march it to the centre the moment the queens come off.",
    ),
    Passage(
        "volcano_soil",
        "self",
        "Farms on the slopes of Etna are absurdly fertile because volcanic ash weathers into soil rich in potassium and phosphorus.",
    ),
    Passage(
        "parenting_praise",
        "self",
        "Praise the effort and the strategy, not the child's cleverness; kids praised for being smart start avoiding hard puzzles.",
    ),
    Passage(
        "meeting_agenda",
        "self",
        "No agenda, no meeting. If nobody can write down what the meeting should decide, it should be an email.",
    ),
    Passage(
        "architecture_light",
        "self",
        "Old houses in hot countries have small windows and thick walls; the shade and the thermal mass keep rooms cool through the afternoon.",
    ),
    Passage(
        "climate_trees",
        "self",
        "Planting trees helps, but protecting old forests stores far more carbon per hectare than new plantations will for decades.",
    ),
    Passage(
        "writing_drafts",
        "self",
        "The first draft is for finding out what you think. Only the second draft is for the reader.",
        note="Useful for the newsletter",
    ),
    Passage(
        "music_practice",
        "self",
        "Practise the hard bar slowly until you cannot get it wrong, rather than playing the whole piece fast and stumbling in the same place every time.",
    ),
    Passage(
        "coffee_water",
        "self",
        "Coffee is almost all water, so a bag of great beans brewed with hard, chlorinated tap water still tastes of the tap.",
    ),
    Passage(
        "walking_ideas",
        "self",
        "My best ideas for the essay came on long walks without headphones, never at the desk.",
    ),
    Passage(
        "procrastination_start",
        "self",
        "Promise yourself only five minutes of work. Starting is the hard part; once started, you usually keep going.",
    ),
    Passage(
        "bees_dance",
        "self",
        "A honeybee returning from rich flowers dances a figure of eight; the angle of the waggle run tells the hive the direction relative to the sun.",
    ),
    Passage(
        "octopus",
        "self",
        "An octopus has most of its neurons in its arms, which can taste and react to things almost on their own.",
    ),
    Passage(
        "sleep_caffeine",
        "self",
        "Caffeine has a half-life of about five hours, so an afternoon espresso is still in your system at bedtime.",
    ),
    Passage(
        "rain_garden",
        "garden",
        "A shallow planted hollow at the bottom of a slope catches storm water from the roof and lets it soak in instead of flooding the street.",
    ),
    Passage(
        "star_navigation",
        "sea",
        "Polaris sits almost exactly above the north pole, so its height above the horizon gives your latitude on any clear night.",
    ),
    Passage(
        "fermentation_kimchi",
        "kitchen",
        "Kimchi keeps for months because lactic acid bacteria sour the cabbage faster than rot can set in.",
    ),
    Passage(
        "inflation_cash",
        "money",
        "Cash under the mattress loses value every year that prices rise; at four percent inflation it halves in real terms in about eighteen years.",
    ),
    Passage(
        "memory_spacing",
        "mind",
        "Reviewing material at growing intervals, a day, then three days, then a week, fixes it in memory far better than cramming the night before.",
    ),
    Passage(
        "technical_debt",
        "code",
        "Technical debt is not bad code; it is a loan you took on purpose to ship sooner, and the interest is paid every time someone has to work around it.",
    ),
]

ORIGINAL_QUERIES = [
    # exact terms
    LabelledQuery("sourdough starter", "exact", ("sourdough_starter",)),
    LabelledQuery("Maillard reaction", "exact", ("maillard",)),
    LabelledQuery("Kalman filter", "exact", ("kalman",)),
    LabelledQuery("Perseids", "exact", ("meteor_shower",)),
    LabelledQuery("dead reckoning", "exact", ("dead_reckoning",)),
    LabelledQuery("compound interest", "exact", ("compound_interest",)),
    LabelledQuery("technical debt", "exact", ("technical_debt",)),
    LabelledQuery("autolyse", "exact", ("resting_dough",)),
    # rare names
    LabelledQuery(
        "Vassbotten",
        "name",
        (
            "patience_soil",
            "tomato_blight",
            "compost_ratio",
            "companion_planting",
            "pruning_roses",
            "rain_garden",
        ),
    ),
    LabelledQuery("Skerryvore", "name", ("tides_marisol",)),
    LabelledQuery("Holzapfel", "name", ("holzapfel_archives", "hanse_trade", "hanse_decline")),
    LabelledQuery("Wielgosz on boredom", "name", ("boredom",)),
    LabelledQuery(
        "Tarrow Bay",
        "name",
        (
            "light_pollution",
            "dark_adaptation",
            "andromeda_distance",
            "meteor_shower",
            "telescope_aperture",
        ),
    ),
    LabelledQuery("Lübeck merchants", "name", ("hanse_trade",)),
    # paraphrases
    LabelledQuery(
        "how can I fall asleep more easily",
        "paraphrase",
        ("sleep_schedule", "screens_bed", "sleep_caffeine"),
    ),
    LabelledQuery(
        "why do people hate losing money more than they enjoy gaining it",
        "paraphrase",
        ("loss_aversion",),
    ),
    LabelledQuery(
        "keeping food from spoiling without a fridge", "paraphrase", ("fermentation_kimchi",)
    ),
    LabelledQuery(
        "avoid getting injured when increasing training mileage",
        "paraphrase",
        ("injury_load", "easy_running"),
    ),
    LabelledQuery(
        "studying technique to remember things for exams", "paraphrase", ("memory_spacing",)
    ),
    LabelledQuery("feeling nauseous on a boat", "paraphrase", ("seasickness",)),
    LabelledQuery("how to stop putting things off", "paraphrase", ("procrastination_start",)),
    LabelledQuery("city glow hides the stars", "paraphrase", ("light_pollution",)),
    LabelledQuery(
        "self-control is mostly about designing your surroundings",
        "paraphrase",
        ("willpower_environment",),
    ),
    LabelledQuery("insects communicating where food is", "paraphrase", ("bees_dance",)),
    LabelledQuery(
        "keeping a house cool without air conditioning", "paraphrase", ("architecture_light",)
    ),
    LabelledQuery("saving money for unexpected expenses", "paraphrase", ("emergency_fund",)),
    LabelledQuery(
        "finding your position at sea without electronics",
        "paraphrase",
        ("dead_reckoning", "star_navigation"),
    ),
    # mixed
    LabelledQuery("Okonkwo on spending more as income grows", "mixed", ("lifestyle_creep",)),
    LabelledQuery("blameless postmortem after an outage", "mixed", ("incident_blameless",)),
    LabelledQuery("tomato leaves disease watering", "mixed", ("tomato_blight",)),
    LabelledQuery("why the Hanseatic League declined", "mixed", ("hanse_decline",)),
    LabelledQuery("Fenn navigating when the GPS failed", "mixed", ("dead_reckoning",)),
    LabelledQuery("best light for portrait photography", "mixed", ("photo_golden_hour",)),
]

# Queries about nothing in the set: with default parameters they should return no semantic
# matches at all (only noise could match them).
ORIGINAL_OFF_TOPIC = [
    "quantum chromodynamics lattice simulations",
    "tax rules for cryptocurrency staking in Singapore",
    "how to replace a bicycle brake cable",
    "best strategies for the board game Catan",
    "symptoms of vitamin B12 deficiency",
    "history of the Byzantine emperors",
]


KINDS = (
    "paraphrase",
    "exact",
    "name",
    "source",
    "mixed",
    "note",
    "tag",
    "crosslang",
    "non_english",
    "short",
    "long",
    "hard",
)
NEGATIVE_KINDS = ("off_topic", "near_topic", "near_crosslang")
HALVES = ("tuning", "heldout")

SOURCES = ORIGINAL_SOURCES + [Source(*row) for row in SOURCES_EXTRA + SOURCES_LANGUAGES]
PASSAGES = ORIGINAL_PASSAGES + [
    Passage(key, source, content, note, tags)
    for key, source, content, note, tags in PASSAGES_EXTRA + PASSAGES_LANGUAGES
]
QUERIES = ORIGINAL_QUERIES + [
    LabelledQuery(q, kind, relevant) for q, kind, relevant in QUERIES_EXTRA + QUERIES_LANGUAGES
]
NEGATIVES: list[tuple[str, str]] = (
    [(q, "off_topic") for q in ORIGINAL_OFF_TOPIC] + NEGATIVES_EXTRA + NEGATIVES_LANGUAGES
)
# Kept for older tests: the far-off negatives.
OFF_TOPIC_QUERIES = [q for q, kind in NEGATIVES if kind == "off_topic"]


T = TypeVar("T")


def _split(items: list[T], kind_of: Callable[[T], str]) -> dict[str, list[T]]:
    """The fixed rule in the module docstring: alternate within each kind, in file order."""
    seen: dict[str, int] = {}
    halves: dict[str, list[T]] = {half: [] for half in HALVES}
    for item in items:
        kind = kind_of(item)
        position = seen.get(kind, 0)
        seen[kind] = position + 1
        halves[HALVES[position % 2]].append(item)
    return halves


QUERIES_BY_HALF = _split(QUERIES, lambda query: query.kind)
NEGATIVES_BY_HALF = _split(NEGATIVES, lambda negative: negative[1])


@dataclass(frozen=True)
class LabelledSet:
    """A library's worth of labelled data, by half: what evaluation.py scores. `MAIN` is
    this module's set (tuning and held-out halves); `fresh_set.FRESH` is a blind one with a
    single half that nothing is ever fitted on."""

    name: str
    sources: list[Source]
    passages: list[Passage]
    queries_by_half: dict[str, list[LabelledQuery]]
    negatives_by_half: dict[str, list[tuple[str, str]]]


MAIN = LabelledSet("labelled set", SOURCES, PASSAGES, QUERIES_BY_HALF, NEGATIVES_BY_HALF)
