"""Publish the must-pass lists of this rngcheck version (rngcheck.submission.mustpass, rule 5).

    python3 scripts/mustpass.py publish     # writes rngcheck/vectors/mustpass/<version>/ and records digests
    python3 scripts/mustpass.py diff        # what the suite's lists would be now against the published ones

``publish`` refuses when this version is already published: a published list never changes, a change
is a new rngcheck version (pyproject.toml's and rngcheck/__init__.py's). Which cases are
implementation-defined is what the reference says: it runs ``rngcheck run --backend numpy`` (the
full profile holds every case of every list) and marks the cases whose result there is info.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rngcheck import __version__
from rngcheck.submission import mustpass


def implementation_defined() -> set[str]:
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "reference.json"
        done = subprocess.run([sys.executable, "-m", "rngcheck", "run", "--backend", "numpy", "--profile",
                               mustpass.FULL_SIZE[0], "--quiet", "--json", str(out)], check=False)
        if done.returncode != 0:
            sys.exit(f"mustpass: the reference did not pass its own profile (exit {done.returncode})")
        results = json.loads(out.read_text())["results"]
    return {r["case"] for r in results if r["status"] == "info"}


def main(argv: list[str]) -> int:
    if argv[:1] not in (["publish"], ["diff"]):
        print(__doc__)
        return 2
    lists = mustpass.generate(implementation_defined())
    if argv[0] == "diff":
        changed = 0
        for made in lists:
            try:
                old = mustpass.load(made.name)
            except Exception as error:   # a new list: not published yet
                print(f"{made.name}: new ({error})")
                changed += 1
                continue
            gone, new = set(old.cases) - set(made.cases), set(made.cases) - set(old.cases)
            if gone or new or old.marks != made.marks:
                print(f"{made.name} {old.version}: {len(new)} new cases, {len(gone)} gone, marks "
                      f"{'changed' if old.marks != made.marks else 'the same'}")
                changed += 1
        return 1 if changed else 0
    folder = mustpass.ROOT / __version__
    recorded = mustpass.published() if mustpass.PUBLISHED.is_file() else {}
    if any(key.startswith(f"{__version__}/") for key in recorded) or folder.exists():
        sys.exit(f"mustpass: version {__version__} is published already (a published list never changes): "
                 f"raise rngcheck's version first")
    folder.mkdir(parents=True)
    for made in lists:
        path = folder / f"{made.name}.txt"
        path.write_text(made.text(), encoding="utf-8")
        recorded[f"{__version__}/{made.name}.txt"] = mustpass.digest(path)
        print(f"published {path.relative_to(mustpass.ROOT)}: {len(made.cases)} cases")
    mustpass.PUBLISHED.write_text(json.dumps({
        "about": "the sha256 of every published must-pass list: a published list never changes "
                 "(rngcheck/submission/mustpass.py, rule 5)",
        "lists": dict(sorted(recorded.items()))}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
