#!/usr/bin/env python3
"""Summarises Google Benchmark JSON output of the SQLite benchmarks: the median of each benchmark
over its repetitions, and the ratios the targets of docs/PERFORMANCE.md are stated in.

  python3 bench/summarize.py results/*.json

Runs made with --benchmark_repetitions=N --benchmark_report_aggregates_only=true give one median
per benchmark and file; with several files (several runs) it prints each run's figure and their
median. It only reads the files: it asserts nothing about speed.
"""
import json
import statistics
import sys
from collections import defaultdict


def load(paths):
    """{run_name: [value per file]} for items/s and for the median_ms counter."""
    items, millis = defaultdict(list), defaultdict(list)
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                continue
            name = b["run_name"]
            if b.get("label"):
                name += " " + b["label"]
            if "items_per_second" in b:
                items[name].append(b["items_per_second"])
            if "median_ms" in b:
                millis[name].append(b["median_ms"])
    return items, millis


def median(values):
    return statistics.median(values) if values else float("nan")


def main(paths):
    items, millis = load(paths)
    print("%-58s %s" % ("benchmark", "median of runs (each run's median)"))
    for name in sorted(items):
        runs = ", ".join("%.0f" % v for v in items[name])
        print("%-58s %12.0f items/s  (%s)" % (name, median(items[name]), runs))
    for name in sorted(millis):
        runs = ", ".join("%.3f" % v for v in millis[name])
        print("%-58s %12.3f ms/call  (%s)" % (name, median(millis[name]), runs))

    def ratio(a, b):
        if a in items and b in items and len(items[a]) == len(items[b]):
            per_run = [x / y for x, y in zip(items[a], items[b])]
            return median(per_run), per_run
        return float("nan"), []

    print()
    checks = [
        ("AppendAll 256 / raw batch 256 (target >= 0.5)",
         ratio("BM_Wow_AppendAll/256/real_time", "BM_Raw_InsertBatch/256/real_time")),
        ("AppendAll 16 / raw batch 16",
         ratio("BM_Wow_AppendAll/16/real_time", "BM_Raw_InsertBatch/16/real_time")),
        ("Append / raw one row per transaction",
         ratio("BM_Wow_Append/real_time", "BM_Raw_InsertBatch/1/real_time")),
        ("8 appenders / one stream per transaction (target >= 5)",
         ratio("BM_Wow_AppendConcurrent/real_time/threads:8", "BM_Wow_Append/real_time")),
        ("8 appenders / raw 8 connections",
         ratio("BM_Wow_AppendConcurrent/real_time/threads:8",
               "BM_Raw_InsertConcurrent/real_time/threads:8")),
        ("reserve+confirm / raw",
         ratio("BM_Wow_ReserveConfirm/real_time", "BM_Raw_ReserveConfirm/real_time")),
        ("catch-up / raw on the store's table",
         ratio("BM_Wow_CatchUp/10000/iterations:2/real_time",
               "BM_Raw_CatchUp/10000/0/iterations:2/real_time store_table")),
        ("catch-up 256 a call / raw on the store's table",
         ratio("BM_Wow_CatchUp/256/iterations:2/real_time",
               "BM_Raw_CatchUp/10000/0/iterations:2/real_time store_table")),
        ("raw on the store's table / raw on a packed copy",
         ratio("BM_Raw_CatchUp/10000/0/iterations:2/real_time store_table",
               "BM_Raw_CatchUp/10000/1/iterations:2/real_time packed")),
        ("8-thread commands / 1-thread commands",
         ratio("BM_Wow_ProcessCreateBrand/real_time/threads:8",
               "BM_Wow_ProcessCreateBrand/real_time/threads:1")),
    ]
    for title, (value, per_run) in checks:
        runs = ", ".join("%.2f" % v for v in per_run)
        print("%-58s %8.2f  (%s)" % (title, value, runs))
    catch_up = items.get("BM_Wow_CatchUp/10000/iterations:2/real_time", [])
    print("%-58s %8.0f  (target >= 500000)" % ("catch-up entries/s", median(catch_up)))
    due = millis.get("BM_Wow_Due/16/manual_time", [])
    print("%-58s %8.3f  (target < 5)" % ("Due() of 100 among 1M, 16 partitions, median ms",
                                          median(due)))


if __name__ == "__main__":
    main(sys.argv[1:])
