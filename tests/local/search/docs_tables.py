"""docs/search.md's evaluation tables, written by `evaluation.py --write-docs`.

For the default English model (all-mpnet-base-v2): the held-out half and the blind set per
kind, the tuning half's totals, verify's reliability table (held-out and blind) and the negatives'
trade-off curves (cut_curve.py); for the light fallback MiniLM, one shorter table. Every
figure is read on a set nothing was fitted on, except the tuning rows, labelled as such.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cut_curve
from evaluation import (
    METHODS,
    PAGE,
    TO_ENGLISH,
    TO_OTHER,
    LabelledLibrary,
    Report,
    evaluate,
    first_page,
    kept_answers,
    labelled_library,
)
from labelled_set import MAIN
from reliability import judge_columns, reliability_table, verified_hits

from screvi_mcp.local.search.calibration import similarity_of
from screvi_mcp.local.search.mpnet import ENGLISH_MODEL_ENV

DOCS = Path(__file__).resolve().parents[3] / "docs" / "search.md"
DOC_METHODS = tuple(m for m in METHODS if m != "minilm")
# The fallback's table: the kinds where the models differ, and the totals.
SHORT_KINDS = ("paraphrase", "short", TO_OTHER, TO_ENGLISH, "all")
SHORT_METHODS = ("plain", "hybrid", "hybrid+verify")
# The negatives' curves: min_relevance as the chance of relevance its cut keeps (the
# default 0.72 keeps 0.012), and verify's judge thresholds a dropping verify would use.
CURVE_CHANCES = (0.012, 0.02, 0.03, 0.05, 0.1, 0.2)
CURVE_JUDGE = (0.05, 0.1, 0.3)
# ... and the query-level verdict: every judged semantic-only hit dropped when the best is
# under the threshold.
CURVE_JUDGE_BEST = (0.1, 0.2)


@contextmanager
def english_model(name: str) -> Iterator[None]:
    before = os.environ.get(ENGLISH_MODEL_ENV)
    os.environ[ENGLISH_MODEL_ENV] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENGLISH_MODEL_ENV, None)
        else:
            os.environ[ENGLISH_MODEL_ENV] = before


def replace_region(text: str, name: str, body: str) -> str:
    """`text` with the region between `<!-- evaluation:NAME -->` and
    `<!-- /evaluation:NAME -->` replaced by `body`."""
    start, end = f"<!-- evaluation:{name} -->", f"<!-- /evaluation:{name} -->"
    if start not in text or end not in text:
        raise SystemExit(f"{DOCS} has no region {start} ... {end}")
    head, rest = text.split(start, 1)
    return f"{head}{start}\n{body}\n{end}{rest.split(end, 1)[1]}"


def write_docs() -> int:
    """Rewrite every evaluation region of docs/search.md."""
    from fresh_set import FRESH, FRESH_HALF

    regions: dict[str, str] = {}
    curves: dict[str, dict[str, cut_curve.Point]] = {}
    short: dict[str, Report] = {}
    with english_model("mpnet"):
        with _library(MAIN) as labelled:
            regions["heldout"] = _section(labelled, "heldout")
            regions["tuning"] = _totals(labelled, "tuning")
            hits = judge_columns(verified_hits(labelled, "heldout"), "held-out: ")
            for half in ("tuning", "heldout"):
                curves[half] = _curve(labelled, half)
        with _library(FRESH) as labelled:
            regions["blind"] = _section(labelled, FRESH_HALF)
            hits |= judge_columns(verified_hits(labelled, FRESH_HALF), "blind: ")
            regions["reliability"] = reliability_table(hits, markdown=True)
            curves["blind"] = _curve(labelled, FRESH_HALF)
    regions["curve"] = _curve_table(curves)
    with english_model("minilm"):
        with _library(MAIN) as labelled:
            short["held-out"] = evaluate(labelled, "heldout", SHORT_METHODS)
        with _library(FRESH) as labelled:
            short["blind"] = evaluate(labelled, FRESH_HALF, SHORT_METHODS)
    regions["minilm"] = _short_table(short)
    text = DOCS.read_text(encoding="utf-8")
    for name, body in regions.items():
        text = replace_region(text, name, body)
    DOCS.write_text(text, encoding="utf-8")
    print(f"rewrote {', '.join(regions)} in {DOCS}")
    return 0


@contextmanager
def _library(labelled_set: object) -> Iterator[LabelledLibrary]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        labelled_library(Path(tmp), 0, labelled_set) as lib,  # type: ignore[arg-type]
    ):
        yield lib


def _section(labelled: LabelledLibrary, half: str) -> str:
    report = evaluate(labelled, half, DOC_METHODS)
    kept = kept_answers(labelled, half)
    page = first_page(labelled, half)
    return (
        f"{report.markdown()}\n\n"
        f"Answers in the plain ranking's top 3 that the default loses: {kept.lost_share:.3f}"
        f" of {kept.queries} queries ({len(kept.hidden)} hidden, {len(kept.pushed)} pushed"
        f" below place 3). First page of {PAGE}: {page.relevant_found:.2f} of all relevant"
        f" highlights, {page.results:.1f} results per query, {page.unlabelled:.1f} of them"
        " not labelled relevant."
    )


def _totals(labelled: LabelledLibrary, half: str) -> str:
    report = evaluate(labelled, half, ("plain", "hybrid", "hybrid+verify"))
    cells = [
        f"{report.overall(m).top3:.2f} / {report.overall(m).mrr:.2f},"
        f" negatives empty {report.negative_empty[m]['all']:.2f}"
        for m in ("plain", "hybrid", "hybrid+verify")
    ]
    kept = kept_answers(labelled, half)
    return (
        f"Tuning half ({report.overall('hybrid').count} queries), top-3 / MRR: plain {cells[0]};"
        f" **default** {cells[1]}; + verify {cells[2]}; answers of the plain top 3 lost"
        f" {kept.lost_share:.3f}."
    )


def _curve(labelled: LabelledLibrary, half: str) -> dict[str, cut_curve.Point]:
    points = {}
    for chance in CURVE_CHANCES:
        cut = round(similarity_of(chance), 4)
        ranker = cut_curve.min_relevance_ranker(labelled, cut)
        points[f"min_relevance {cut:.4f} (chance {chance})"] = cut_curve.measure(
            labelled, half, ranker
        )
    memo: dict[str, list[object]] = {}
    ranker = cut_curve.judge_ranker(labelled, 0.0, memo)  # type: ignore[arg-type]
    points["verify as shipped (drops nothing)"] = cut_curve.measure(labelled, half, ranker)
    for threshold in CURVE_JUDGE:
        ranker = cut_curve.judge_ranker(labelled, threshold, memo)  # type: ignore[arg-type]
        points[f"verify, drop below {threshold}"] = cut_curve.measure(labelled, half, ranker)
    for threshold in CURVE_JUDGE_BEST:
        ranker = cut_curve.judge_ranker(labelled, threshold, memo, per_query=True)  # type: ignore[arg-type]
        name = f"verify, drop all when the best is below {threshold}"
        points[name] = cut_curve.measure(labelled, half, ranker)
    return points


def _curve_table(curves: dict[str, dict[str, cut_curve.Point]]) -> str:
    names = {"tuning": "tuning", "heldout": "held-out", "blind": "blind"}
    lines = [
        "| setting | "
        + " | ".join(f"{names[s]}: top-3, lost, negatives empty" for s in curves)
        + " |",
        "| --- |" + " --- |" * len(curves),
    ]
    for setting in next(iter(curves.values())):
        cells = [
            f"{p.top3:.2f}, {p.lost:.3f}, {p.negatives_empty:.2f}"
            for p in (curves[s][setting] for s in curves)
        ]
        lines.append(f"| {setting} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _short_table(reports: dict[str, Report]) -> str:
    columns = [(name, m) for name in reports for m in SHORT_METHODS]
    titles = {"plain": "plain", "hybrid": "**default**", "hybrid+verify": "+ verify"}
    lines = [
        "| kind | " + " | ".join(f"{name}: {titles[m]}" for name, m in columns) + " |",
        "| --- |" + " --- |" * len(columns),
    ]
    for kind in SHORT_KINDS:
        scores = [reports[name].positive[m][kind] for name, m in columns]
        cells = [f"{s.top3:.2f} / {s.mrr:.2f}" for s in scores]
        label = "**all**" if kind == "all" else kind
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = [f"{reports[name].negative_empty[m]['all']:.2f}" for name, m in columns]
    lines.append("| negatives empty | " + " | ".join(cells) + " |")
    return "\n".join(lines)
