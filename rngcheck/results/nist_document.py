"""The ``rngcheck nist`` document (schema "rngcheck-nist"), as reports read it.

``rngcheck.stats.nist_sts`` writes it (sts-2.1.2's final analysis report: one row per test
and p-value stream, with the uniformity p-value and the proportion passing); reports show it
as a statistics section, through ``as_stats_document``.
"""

from __future__ import annotations

from typing import Any

from .verdicts import NOT_APPLICABLE, STATS_FAIL, STATS_INCOMPLETE, STATS_PASS, STATS_SUSPECT

SCHEMA, SCHEMA_VERSION = "rngcheck-nist", 1




def as_stats_document(doc: dict[str, Any]) -> dict[str, Any]:
    """The document in the shape of the battery's ("rngcheck-stats") for the HTML report: one
    result per p-value stream, its p-value the uniformity p-value, its verdict the row's
    (rows that do not apply go to "not_run")."""
    results, not_run = [], []
    for row in doc.get("rows", []):
        name = f"nist.sts.{row.get('test')}" + (f" {row['label']}" if row.get("label") else "")
        if row.get("verdict") == NOT_APPLICABLE:
            not_run.append({"test": name, "stream": "main", "reason": "; ".join(row.get("reasons") or [])})
            continue
        u = row.get("uniformity_p")
        results.append({
            "test": name, "stream": "main", "level": "proportion and uniformity",
            "statistic": row["passed"] / row["sample_size"], "p_value": u, "q_value": None,
            "p_display": "---- (fewer than 10 p-values)" if u is None else f"{u:.6f}",
            "verdict": row.get("verdict"), "first_verdict": row.get("verdict"), "retest": None,
            "source": f"NIST SP 800-22 rev1a, section {row.get('section')}; "
                      f"{row['passed']}/{row['sample_size']} passed "
                      f"(range {row['proportion_min']}..{row['proportion_max']})"
                      + ("; " + "; ".join(row["reasons"]) if row.get("reasons") else ""),
        })
    bits = int(doc.get("length", 0)) * int(doc.get("sequences", 0))
    counts = doc.get("counts", {})
    verdict = doc.get("verdict")
    return {
        "schema": "rngcheck-stats", "schema_version": 1,
        "tier": f"nist: {doc.get('sequences')} x {doc.get('length')} bits (sts-2.1.2)",
        "seed": (doc.get("source") or {}).get("seed"), "source": doc.get("source") or {},
        "reproduce": doc.get("reproduce", ""), "bytes_requested": bits // 8, "bytes_tested": bits // 8,
        "complete": True, "message": "", "thresholds": {"fail": None, "suspect": None, "tests": len(results)},
        "verdict": verdict if verdict in (STATS_PASS, STATS_FAIL) else STATS_INCOMPLETE,
        "counts": {STATS_PASS: counts.get(STATS_PASS, 0), STATS_SUSPECT: 0, STATS_FAIL: counts.get(STATS_FAIL, 0)},
        "elapsed_seconds": doc.get("elapsed_seconds"), "results": results, "not_run": not_run,
    }
