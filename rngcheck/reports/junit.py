"""JUnit XML from a result document: one testsuite per backend, one testcase per case.

A suite's properties are its backend's ``describe()``, its verdict and its failure groups
(rngcheck.results.groups: ``rngcheck.group.N`` = "count: diagnosis (pattern)", with the smallest
case's reproduce line); a test case that did not pass carries its result's properties
(rngcheck.results.text.properties: status, diagnosis, first mismatch, reproduce command), as
``pytest --junitxml`` does for the rngcheck pytest plugin's tests. A case that is n/a or skipped is
``<skipped>`` with its reason ("not applicable: ...", "skipped: ...").
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ..jsonfile import atomic_write
from ..results import text
from ..results.groups import failure_groups
from ..results.statuses import CRASHED, ERROR, FAILED, NOT_APPLICABLE, NOT_RUN, SKIPPED, TIMEOUT, effective

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean(value) -> str:
    """Text that came from a backend, made safe for XML 1.0 (ElementTree escapes the rest): its controls
    and invisible format characters shown as escapes (rngcheck.results.text.visible, as on the HTML
    page), then anything XML cannot hold replaced."""
    return _NOT_XML.sub("\ufffd", text.visible(str(value)))


def to_junit(document: dict) -> ET.ElementTree[ET.Element]:
    root = ET.Element("testsuites", name="rngcheck", tests="0", failures="0", errors="0", skipped="0")
    cases = {c["id"]: c for c in document["cases"]}
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    groups = failure_groups(document)
    for backend in document["backends"]:
        results = [r for r in document["results"] if r["backend"] == backend["name"]]
        suite = ET.SubElement(root, "testsuite", name=clean(f"rngcheck.{backend['name']}"))
        counts = {"tests": len(results), "failures": 0, "errors": 0, "skipped": 0}
        properties = ET.SubElement(suite, "properties")
        for key, value in backend["describe"].items():
            ET.SubElement(properties, "property", name=clean(key), value=clean(value))
        ET.SubElement(properties, "property", name="rngcheck.verdict", value=clean(backend.get("verdict", "")))
        for number, group in enumerate(groups.get(backend["name"], []), 1):
            ET.SubElement(properties, "property", name=f"rngcheck.group.{number}", value=clean(group.label()))
            ET.SubElement(properties, "property", name=f"rngcheck.group.{number}.reproduce",
                          value=clean(group.reproduce))
        for result in results:
            case = cases.get(result["case"], {})
            element = ET.SubElement(suite, "testcase", name=result["case"],
                                    classname=clean(f"rngcheck.{backend['name']}.{case.get('category', 'case')}"),
                                    time=f"{result['seconds']:.6f}")
            body = "\n".join(text.failure_lines(result, case))
            said = text.properties(result)
            if said:
                testcase_properties = ET.SubElement(element, "properties")
                for key, value in said:
                    ET.SubElement(testcase_properties, "property", name=key, value=clean(value))
            status = effective(result["status"], result["required"])
            if status in (CRASHED, TIMEOUT, NOT_RUN):
                status = ERROR
            if status == FAILED:
                counts["failures"] += 1
                ET.SubElement(element, "failure", message=clean(result["message"][:500])).text = clean(body)
            elif status == ERROR:
                counts["errors"] += 1
                ET.SubElement(element, "error", message=clean(result["message"][:500])).text = clean(
                    body + "\n" + result["detail"])
            elif status in (NOT_APPLICABLE, SKIPPED):
                counts["skipped"] += 1
                ET.SubElement(element, "skipped", message=clean(result["message"][:500]))
            elif result["message"] or result["observations"]:
                ET.SubElement(element, "system-out").text = clean(
                    "\n".join([result["message"], *result["observations"]]))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    if not document.get("complete", True):
        # An interrupted run is visible to CI: a test case in error, and a property on every suite.
        suite = ET.SubElement(root, "testsuite", name="rngcheck.run", tests="1", failures="0", errors="1",
                              skipped="0")
        for backend_suite in root.iter("testsuite"):
            suite_properties = backend_suite.find("properties")
            if suite_properties is None:
                suite_properties = ET.SubElement(backend_suite, "properties")
            ET.SubElement(suite_properties, "property", name="rngcheck.complete", value="false")
        element = ET.SubElement(suite, "testcase", name="run-complete", classname="rngcheck.run", time="0")
        ET.SubElement(element, "error", message="the run did not finish (interrupted or past its --deadline): "
                      f"{len(document['results'])} of {len(document['cases']) * len(document['backends'])} "
                      "results recorded")
        totals["tests"] += 1
        totals["errors"] += 1
    for key, value in totals.items():
        root.set(key, str(value))
    return ET.ElementTree(root)


def write(document: dict, path) -> None:
    tree = to_junit(document)
    ET.indent(tree)
    atomic_write(Path(path), ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True))
