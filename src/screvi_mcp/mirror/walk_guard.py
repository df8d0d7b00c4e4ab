"""Bounds on what an upstream may make a sync walk: repeated pages, lists that never end.

A list is walked page by page until the server says `has_more: false`. A server that always
says `true` (or serves the same page again) would keep a run going, and storing, without end:
so each walk believes the size the server gave on its first page, plus slack for items
added while it walks (newest first: each one shifts later items down a place), and every run
has caps of its own. A page the guard refuses is never stored: rows beyond what the server
said it holds are not rows it really listed.

The numbers (stated in docs/reliability.md):
- a walk may go `max(OVERRUN_SLACK_PAGES, 10%)` pages past the first page's `total_pages`,
  and `max(OVERRUN_SLACK_PAGES × per_page, 10%)` items past its `total`;
- at most `MAX_REPEATED_PAGES` pages in a row holding only ids the walk has already seen;
- at most `DEFAULT_MAX_PAGES` pages per list and `DEFAULT_MAX_ROWS` items per run (settings).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from screvi_mcp.client.errors import ScreviError

OVERRUN_SLACK_PAGES = 3
OVERRUN_SLACK_FRACTION = 0.1
MAX_REPEATED_PAGES = 2
DEFAULT_MAX_PAGES = 20_000
DEFAULT_MAX_ROWS = 2_000_000


class UpstreamMisbehaves(ScreviError):
    """The server's lists do not end or repeat: the run stops, keeps only pages within the
    bounds, and moves no cursor."""


@dataclass
class RunBudget:
    """Caps over a whole run, all lists together."""

    max_pages: int = DEFAULT_MAX_PAGES
    max_rows: int = DEFAULT_MAX_ROWS
    rows: int = 0


@dataclass
class WalkGuard:
    """One list's walk: call `admit` with each page before storing it."""

    what: str
    budget: RunBudget
    first_total: int | None = None
    first_pages: int | None = None
    pages: int = 0
    repeated: int = 0
    seen: set[str] = field(default_factory=set)

    def admit(self, page: int, ids: list[str], total: int, total_pages: int, per_page: int) -> None:
        """Raise `UpstreamMisbehaves` when this page is past any bound; else count it.
        `page` is the page's number (a resumed walk starts past 1)."""
        if self.first_total is None:
            self.first_total, self.first_pages = max(total, 0), max(total_pages, 0)
        self.pages += 1
        fresh = [item for item in dict.fromkeys(ids) if item not in self.seen]
        self.repeated = self.repeated + 1 if ids and not fresh else 0
        if self.repeated > MAX_REPEATED_PAGES:
            self._stop(f"served page {page} and the {self.repeated - 1} before it again")
        stated_pages = self._allowed(self.first_pages or 0, OVERRUN_SLACK_PAGES)
        stated_items = self._allowed(self.first_total or 0, OVERRUN_SLACK_PAGES * per_page)
        if page > stated_pages or (page - 1) * per_page + len(ids) > stated_items:
            self._stop(
                f"said it held {self.first_total} in {self.first_pages} pages but still "
                f"answered has_more at page {page}"
            )
        if self.pages > self.budget.max_pages:
            self._stop(f"needs more than {self.budget.max_pages} pages")
        if self.budget.rows + len(fresh) > self.budget.max_rows:
            self._stop(f"needs more than {self.budget.max_rows} items in one run")
        self.seen.update(fresh)
        self.budget.rows += len(fresh)

    @staticmethod
    def _allowed(stated: int, slack: int) -> int:
        return stated + max(slack, int(stated * OVERRUN_SLACK_FRACTION))

    def _stop(self, why: str) -> None:
        raise UpstreamMisbehaves(
            f"the server's {self.what} list {why}; the sync stopped there and kept only "
            "pages within the list's stated size (nothing past it was stored, the next run "
            "starts from the same point). If the account really is that large, report it."
        )
