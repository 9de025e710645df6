"""Must-pass lists: what a conformance claim requires, frozen with rngcheck's version.

A list is a text file, ``rngcheck/vectors/mustpass/<version>/<name>.txt`` (Khronos' Vulkan CTS keeps its
``mustpass/<version>/vk-default.txt`` the same way):

1. Header lines ``# key: value``: ``list`` (its name), ``version`` (rngcheck's version that published it),
   ``title``, ``profiles`` (the profiles whose runs give every case it lists: each of them runs each
   case), ``counts`` (rule 3 in words). Other ``#`` lines are comments.
2. One case id a line, optionally followed by one mark: ``implementation-defined`` or ``optional``.
3. What counts for a claim (the one rule, :meth:`MustPassList.counts`): a case's result on the backend
   counts when it is ``passed``; ``info`` counts only on a line marked implementation-defined (what the
   output holds is the implementation's choice: DirectML's aliasing outputs); ``n/a`` only on a line
   marked optional. Nothing else counts, and a case with no result never does.
4. Which lists there are (:func:`names_for`): ``directml`` (DirectML's operator, its axis's cases),
   ``stablehlo`` (rng_bit_generator's), ``numbers-<convention>`` (one a numbers convention: TensorFlow's,
   JAX's, ...), ``generator-<name>`` (one a generator's known answers: philox4x32, threefry2x64, ...).
   A list's cases are those of its axis and part (rngcheck.conformance.case.Case.part) that every
   profile of :func:`profiles_of` runs: quick, full and strict (a run of any profile can make a claim;
   what full adds, large shapes and random descriptions, is evidence beyond the list), except the numbers
   conventions', whose cases come in a quick size and a full size: their lists take the full size (a
   claim of a numbers convention is made from a full or strict run). Optional (n/a counts,
   :func:`optional`): a generator's known answers at a round count other than its standard one (an
   implementation offers its standard rounds; Random123 publishes the others too), and a numbers
   convention's carry cases (a counter two blocks below 2^64: a library whose API cannot be given that
   state says n/a, cuRAND's 64-bit offset and ONNX's float seed among them). The header says which.
5. Frozen: ``rngcheck/vectors/mustpass/published.json`` records each published file's sha256. A
   published list never changes; a new list or a changed one is published under a new rngcheck
   version (``python3 scripts/mustpass.py publish``, which refuses to overwrite a published version).
   tests/test_mustpass.py fails when a file differs from its recorded digest, and when the current
   version's lists name a case the suite no longer has.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..errors import RngcheckError
from ..results import statuses

ROOT = Path(__file__).resolve().parent.parent / "vectors" / "mustpass"
PUBLISHED = ROOT / "published.json"
PROFILES = ("quick", "full", "strict")   # a list's cases: those each of these runs (rule 4) ...
FULL_SIZE = ("full", "strict")           # ... or, for a numbers convention, each of these
IMPLEMENTATION_DEFINED, OPTIONAL = "implementation-defined", "optional"
MARKS = (IMPLEMENTATION_DEFINED, OPTIONAL)
COUNTS = ("a case counts when its result is passed; info counts only where the line says implementation-defined; "
          "n/a only where it says optional; nothing else counts, and a missing result never does")


@dataclass(frozen=True)
class MustPassList:
    name: str
    version: str
    title: str
    profiles: str
    cases: tuple[str, ...]
    marks: dict[str, str] = field(default_factory=dict)   # case -> a mark of MARKS
    optional_why: str = "none"                             # which cases are optional, in words (the header)

    @property
    def key(self) -> str:
        return f"{self.name} {self.version}"

    def counts(self, case: str, status: str | None) -> bool:
        """Whether ``status`` (a result's status, None: no result) of ``case`` counts for a claim (rule 3)."""
        if status == statuses.PASSED:
            return True
        mark = self.marks.get(case)
        return (status == statuses.INFO and mark == IMPLEMENTATION_DEFINED) or \
               (status == statuses.NOT_APPLICABLE and mark == OPTIONAL)

    def text(self) -> str:
        lines = ["# rngcheck must-pass list", f"# list: {self.name}", f"# version: {self.version}",
                 f"# title: {self.title}", f"# profiles: {self.profiles}", f"# counts: {COUNTS}",
                 f"# optional: {self.optional_why}",
                 f"# cases: {len(self.cases)}"]
        lines += [f"{case}  {self.marks[case]}" if case in self.marks else case for case in self.cases]
        return "\n".join(lines) + "\n"


def parse(text: str, where: str) -> MustPassList:
    """A list from its text (rules 1-2); RngcheckError naming ``where`` and the line otherwise."""
    header: dict[str, str] = {}
    cases: list[str] = []
    marks: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            key, colon, value = stripped[1:].partition(":")
            if colon and key.strip() in ("list", "version", "title", "profiles", "counts", "optional", "cases"):
                header[key.strip()] = value.strip()
            continue
        words = stripped.split()
        if len(words) > 2 or (len(words) == 2 and words[1] not in MARKS):
            raise RngcheckError(f"{where}:{number}: a case id and at most one mark ({', '.join(MARKS)}), "
                                f"got {stripped[:80]!r}")
        if words[0] in marks or words[0] in cases:
            raise RngcheckError(f"{where}:{number}: {words[0]} is listed twice")
        cases.append(words[0])
        if len(words) == 2:
            marks[words[0]] = words[1]
    for key in ("list", "version", "profiles"):
        if key not in header:
            raise RngcheckError(f"{where}: no '# {key}:' line (a must-pass list's header)")
    if "cases" in header and header["cases"] != str(len(cases)):
        raise RngcheckError(f"{where}: its header says {header['cases']} cases, it lists {len(cases)}")
    return MustPassList(header["list"], header["version"], header.get("title", ""), header["profiles"],
                        tuple(cases), marks, header.get("optional", "none"))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def published() -> dict[str, str]:
    """``"<version>/<name>.txt"`` -> sha256 of every published list (rule 5)."""
    try:
        recorded = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RngcheckError(f"{PUBLISHED}: the must-pass lists' digests cannot be read ({error})") from None
    return {str(k): str(v) for k, v in recorded.get("lists", {}).items()}


def versions() -> list[str]:
    return sorted({key.split("/")[0] for key in published()})


def load(name: str, version: str | None = None) -> MustPassList:
    """A published list (``version``: rngcheck's version that published it; default: the newest one
    that has ``name``), checked against its recorded digest."""
    recorded = published()
    if version is None:
        have = [key.split("/")[0] for key in recorded if key.split("/", 1)[1] == f"{name}.txt"]
        if not have:
            raise RngcheckError(f"no must-pass list {name!r} (published: {', '.join(sorted(names()))})")
        version = max(have, key=_version_key)
    key = f"{version}/{name}.txt"
    if key not in recorded:
        raise RngcheckError(f"no must-pass list {name!r} of version {version} (published versions: "
                            f"{', '.join(versions())})")
    path = ROOT / key
    if not path.is_file() or digest(path) != recorded[key]:
        raise RngcheckError(f"{path}: the published must-pass list is missing or changed (its sha256 is "
                            f"recorded in {PUBLISHED.name}): reinstall rngcheck")
    return parse(path.read_text(encoding="utf-8"), str(path))


def names(version: str | None = None) -> list[str]:
    """The names of the lists published in ``version`` (default: every version)."""
    return sorted({key.split("/", 1)[1][:-4] for key in published() if version in (None, key.split("/")[0])})


def newest() -> list[MustPassList]:
    """The newest published version of every list."""
    return [load(name) for name in names()]


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in version.replace("-", ".").split("."))


# -- generating (rule 4): scripts/mustpass.py publishes what these give --------------------------------------

def names_for(case) -> list[str]:
    """The lists a case (rngcheck.conformance.case.Case) belongs to (rule 4)."""
    part = case.part()
    if case.axis == "directml":
        return ["directml"]
    if case.axis == "stablehlo":
        return ["stablehlo"]
    if case.axis == "numbers" and part:
        return [f"numbers-{part.split()[0]}"]
    if case.axis == "known-answers" and part:
        return [f"generator-{part}"]
    return []


TITLES = {"directml": "DirectML's DML_OPERATOR_RANDOM_GENERATOR (Philox 4x32-10): rngcheck's operator axis",
          "stablehlo": "StableHLO's rng_bit_generator (Philox, ThreeFry, default)"}


OPTIONAL_WHY = {"generator": "known answers at a round count other than the generator's standard one",
                "numbers": "the carry cases (a counter two blocks below 2^64: not every library's API can be given "
                           "that state)"}


def optional(case) -> bool:
    """Whether n/a counts for ``case`` in its list (rule 4)."""
    if case.axis == "known-answers":
        from ..generators import get

        answer = case.known_answer
        return bool(answer.rounds != get(answer.generator).default_rounds)
    return bool(case.axis == "numbers" and case.id.endswith("-carry"))


def profiles_of(case) -> tuple[str, ...]:
    """The profiles whose runs give every case of the lists ``case`` belongs to (rule 4)."""
    return FULL_SIZE if case.axis == "numbers" else PROFILES


def title_of(name: str) -> str:
    if name in TITLES:
        return TITLES[name]
    kind, _, what = name.partition("-")
    return f"the {what} numbers convention" if kind == "numbers" else f"the {what} generator's known answers"


def generate(implementation_defined: set[str], version: str = __version__) -> list[MustPassList]:
    """Every list of the suite as it is now, for ``version``: the cases of each list's axis and part in
    every profile, in the suite's order; ``implementation_defined``: the case ids whose result on the
    reference is info (what they check is the implementation's choice), marked so."""
    from ..conformance import axes

    grouped: dict[str, list[str]] = {}
    marks: dict[str, str] = {}
    profiles: dict[str, tuple[str, ...]] = {}
    for case in axes.all_cases():
        if not set(profiles_of(case)) <= set(case.profiles):
            continue
        for name in names_for(case):
            grouped.setdefault(name, []).append(case.id)
            profiles[name] = profiles_of(case)
        if case.id in implementation_defined:
            marks[case.id] = IMPLEMENTATION_DEFINED
        elif optional(case):
            marks[case.id] = OPTIONAL
    return [MustPassList(name, version, title_of(name), ", ".join(profiles[name]), tuple(cases),
                         {c: marks[c] for c in cases if c in marks},
                         OPTIONAL_WHY.get(name.split("-")[0], "none") if any(marks.get(c) == OPTIONAL for c in cases)
                         else "none")
            for name, cases in sorted(grouped.items())]
