"""Conformance submissions (issue 42): what turns a run into a claim anyone can check.

- ``mustpass``: the frozen, versioned must-pass lists and the one rule of what counts;
- ``waivers``: a vendor's waivers (id, case pattern, reason, approver, expiry) and their rules;
- ``claims``: a backend's claim against a list, decided once from the results (create and verify both call it);
- ``statement``: the conformance statement, filled from the documents, the person adding the rest;
- ``signing``: Ed25519 signatures of a package's manifest;
- ``package``: ``rngcheck submission create`` and ``verify``: the fixed layout, the manifest, the checks;
- ``scoreboard``: one static page from many packages.

It sits above the reports (it writes their JUnit, terminal summary and page into a package) and below
the command line.
"""
