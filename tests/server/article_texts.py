"""Three small articles on distinct subjects, for search_articles tests."""

from __future__ import annotations

INTERRUPTIONS = [
    "Every developer knows the feeling of being pulled out of deep work by a notification.",
    "Researchers who observed programmers at work found that after an interruption it took "
    "them on average more than twenty minutes to return to the task they had left, and they "
    "often visited two other tasks on the way back. The mental model of the code they were "
    "holding in their head had to be rebuilt from scratch.",
    "The cost of context switching is therefore not the minute spent reading a chat message "
    "but the quarter of an hour lost reconstructing where one was. Teams that batch their "
    "meetings into one afternoon protect long blocks of focus for everyone else.",
    "Some engineers wear headphones as a signal; others set their status to busy. What "
    "matters is that the team agrees on a norm and respects it.",
]
CRDTS = [
    "Collaborative editors such as shared documents must merge edits made at the same time "
    "by people on different continents, often while some of them are offline.",
    "Conflict-free replicated data types, or CRDTs, solve this by designing the data "
    "structure so that concurrent operations commute: every replica can apply the same set "
    "of updates in any order and still converge to the same state, with no central server "
    "deciding who wins.",
    "A grow-only counter is the simplest example: each replica keeps its own tally and the "
    "value is the sum of the tallies. Sequence CRDTs for text are far harder, because "
    "inserting characters between the same two neighbours needs a stable ordering.",
]
SOURDOUGH = [
    "A sourdough starter is a living culture of wild yeast and lactic acid bacteria kept in "
    "a jar of flour and water and fed every day.",
    "The long fermentation gives the bread its sour taste and open crumb. Bakers retard the "
    "shaped loaves overnight in the refrigerator, which deepens the flavour and makes the "
    "schedule easier to fit around a working day.",
    "Bake the loaf in a preheated cast iron pot with the lid on for the first twenty minutes "
    "so that the steam lets the crust expand before it sets.",
]
ARTICLES = {
    "/focus": ("The hidden cost of interruptions", "Ada Focus", INTERRUPTIONS),
    "/crdts": ("How collaborative editors merge edits", "Lin Replica", CRDTS),
    "/bread": ("Sourdough at home", "Pat Baker", SOURDOUGH),
}
