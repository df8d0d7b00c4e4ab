"""The answers a reader gives a highlight in review.

Apart from the scheduler (`schedule.py`), which imports `fsrs`: building the command line
lists these answers in `review --help`, and must not load the scheduler to do so.
"""

from __future__ import annotations

from typing import Literal, get_args

Answer = Literal["again", "hard", "good", "easy", "discard"]
ANSWERS: tuple[Answer, ...] = get_args(Answer)
