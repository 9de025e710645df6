"""Every real DirectML release rngcheck can run, each pinned to one PyPI wheel: the one home of the table.

    python3 -m rngcheck.backends.directml.releases list            # the table, sorted by version
    python3 -m rngcheck.backends.directml.releases fetch [VERSION...]  # download, check, unpack (once)
    python3 -m rngcheck.backends.directml.releases specs [--route windows|linux] [--newest N]

Two routes take a release by its version:
  * ``windows``: DirectML.dll from an ``onnxruntime-directml`` win_amd64 wheel, run by dml_exec.exe
    under Wine: ``exec:python3 -m rngcheck.backends.directml.wine --release 1.12.0``;
  * ``linux``: a ``libdirectml.so`` (the WSL build), run by the ``directml`` backend on rngcheck's
    vkd3d bridge: ``directml:lib=1.9.1`` (the tensorflow-directml-plugin's build). The two
    torch-directml builds (``lib=0.2.5``, ``lib=0.2.0``) keep their pins in bridge/chain.py, where
    the Linux set-up reads them; this table lists them from there.

Every wheel comes from PyPI through ``pip download --no-deps --only-binary=:all: --platform ...``
and is checked against its sha256 below; its one member is unpacked once into
``$RNGCHECK_CACHE/directml`` (a ``.sha256`` marker beside it records the wheel's sha256 and the
library's own, bridge/cache.py), and the library is checked against that record before it is loaded
or handed to Wine (a damaged one is unpacked again from its wheel, or named in one line with the
command that fetches it again). A download that fails or a wheel whose hash differs is refused in one
line (SetupError, then BackendUnavailable or exit status 1).

``directml`` is DirectML's own version: the FileVersion of the Windows DLL (VERSIONINFO) and, for
the Linux plugin's build, the version its package pins. ``feature_level`` is the highest
DML_FEATURE_LEVEL each build answered here (DML_FEATURE_FEATURE_LEVELS, measured, for the docs;
the backends query it again on every run). Importing this module loads nothing native.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .bridge.chain import DIRECTML_BUILDS, WHEEL_MEMBER, DirectMLBuild, Layout

WINDOWS, LINUX = "windows", "linux"
ORT = "onnxruntime-directml"


@dataclass(frozen=True)
class Release:
    """One DirectML build inside one PyPI wheel."""

    directml: str           # DirectML's version ('1.15.4'); for a torch-directml build, the package's ('0.2.5')
    route: str              # WINDOWS (DirectML.dll under Wine) or LINUX (libdirectml.so on the vkd3d bridge)
    project: str            # the PyPI project
    project_version: str
    python: str             # the wheel's CPython version ('3.11')
    platform: str           # the wheel's platform tag
    sha256: str             # of the wheel
    member: str             # the library's path in the wheel
    feature_level: str      # the highest DML_FEATURE_LEVEL it answered here (measured)
    known: str = ""         # why its run fails here, when it does (measured; docs/directml.md has the detail)

    @property
    def version(self) -> str:
        return self.directml

    @property
    def wheel(self) -> str:
        """The wheel's file name on PyPI."""
        tag = "cp" + self.python.replace(".", "")
        return f"{self.project.replace('-', '_')}-{self.project_version}-{tag}-{tag}-{self.platform}.whl"

    @property
    def key(self) -> tuple:
        """Sort key: Windows releases by DirectML version, then the Linux builds by version."""
        return (self.route != WINDOWS, self.torch, version_key(self.directml))

    @property
    def torch(self) -> bool:
        return self.project == "torch-directml"

    @property
    def label(self) -> str:
        """'windows-1.12.0', 'linux-1.9.1', 'linux-torch-0.2.5'."""
        return f"{self.route}-{'torch-' if self.torch else ''}{self.directml}"

    @property
    def spec(self) -> str:
        """The backend spec that runs it."""
        if self.route == WINDOWS:
            return f"exec:python3 -m rngcheck.backends.directml.wine --release {self.directml}"
        return f"directml:lib={self.directml}"

    def path(self, layout: Layout) -> Path:
        """Where its library is unpacked under the cache."""
        if self.route == WINDOWS:
            return layout.root / "windows" / "directml" / self.directml / "DirectML.dll"
        if self.torch:
            build = next(b for b in DIRECTML_BUILDS if b.short == self.directml)
            return layout.directml(build)
        return layout.root / "directml" / f"{self.project}-{self.project_version}" / "libdirectml.so"


def version_key(version: str) -> tuple[int, ...]:
    """'1.15.4' -> (1, 15, 4): versions compare as numbers, never as file names ('1.9' < '1.15')."""
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _windows(directml: str, ort: str, python: str, sha256: str, feature_level: str, data: bool = False,
             known: str = "") -> Release:
    member = "onnxruntime/capi/DirectML.dll"
    if data:        # the older wheels keep the package under .data/purelib
        member = f"onnxruntime_directml-{ort}.data/purelib/{member}"
    return Release(directml, WINDOWS, ORT, ort, python, "win_amd64", sha256, member, feature_level, known)


RELEASES: tuple[Release, ...] = tuple(sorted((
    _windows("1.5.1", "1.9.0", "3.9", "1aeac3f41b2f423a5dbfa7fa5aac2c1d6e9489515ce4d9fdfec9f18f8553ac76", "3.1", True,
             "the route's: compiling the operator, DirectML 1.5.1 unpacks an LZMS-compressed resource "
             "with Cabinet.dll's Compression API (CreateDecompressor, ordinal 40), which Wine 8.0 does "
             "not implement: every FL 3.0 execution ends dml_exec.exe (exit code 1)"),
    _windows("1.8.0", "1.11.0", "3.9", "2ce4dd4d99755688b2019400d0157d9443c8ee58c0f4ac979f2c1dbb4855a18e", "5.0",
             True),
    _windows("1.9.0", "1.12.0", "3.9", "87b28653cb8e11d074a3ddc7a8135513e8d450eb23d3c8e682bfb1f902acdb9a", "5.0"),
    _windows("1.9.1", "1.13.1", "3.9", "31678840cd45c49c94d7c7a66f3ecaf5230a859f244e1a55a536ba8c2fa63e95", "5.0"),
    _windows("1.10.1", "1.14.1", "3.9", "837a4333021ba11c9d7605b4f31bbb97456dad4fd7ad2156fa290272233a2618", "5.2"),
    _windows("1.12.0", "1.15.0", "3.11", "685a24ac8a75dd22122ae9ca1f93adc05e6d20b80f2151bc842c594b1e9d2569", "6.1"),
    _windows("1.13.1", "1.17.0", "3.11", "955c3e225afd0385723604b6c84bcdf02cfc7fcf3e21bc094f7fb3f51b6c10cb", "6.2"),
    _windows("1.14.1", "1.18.0", "3.11", "f030e078835947daf64b6c3b2c7eb5687ec77509be5855d59f2b28414fe9e61c", "6.3"),
    _windows("1.15.1", "1.19.0", "3.11", "48892d323bfbf5d15fbbaf0394873ae05f7c91ed6cfc56f9981c55282b8297be", "6.4"),
    _windows("1.15.2", "1.20.0", "3.11", "3639912c3c7584824f210c24e744fc1e206a568692970119265ddad51e0252ab", "6.4"),
    _windows("1.15.4", "1.24.4", "3.12", "f2ecb68b7b7b259d2ef3112ae760149f9b5a1e7c0fbb73d539da6250a648a614", "6.4"),
    Release("1.9.1", LINUX, "tensorflow-directml-plugin", "0.4.0.dev230202", "3.10", "manylinux2010_x86_64",
            "ecaf259ee58d43724f51eba09d498e8c114567aed2684072ee276b5d1c6a321b",
            "tensorflow-plugins/directml/libdirectml.d6f03b303ac3c4f2eeb8ca631688c9757b361310.so", "5.0"),
    *(Release(b.short, LINUX, "torch-directml", b.version, b.python, "manylinux2010_x86_64", b.sha256, WHEEL_MEMBER,
              b.feature_level) for b in DIRECTML_BUILDS),
), key=lambda r: r.key))


NEWEST_WINDOWS = [r for r in RELEASES if r.route == WINDOWS][-1]


def find(version: str, route: str) -> Release | None:
    """The release of ``route`` with DirectML version ``version`` (or its wheel's project version)."""
    version = version.strip()
    for release in RELEASES:
        if release.route == route and version in (release.directml, f"{release.project}=={release.project_version}"):
            return release
    return None


def names(route: str) -> str:
    return ", ".join(r.directml for r in RELEASES if r.route == route)


def ensure(release: Release, layout: Layout | None = None, offline: bool = False) -> Path:
    """Its library, downloaded (pip download, PyPI), checked (sha256) and unpacked once, and checked
    against the sha256 its unpacking recorded each time (once per process); SetupError if not."""
    from .bridge.build import pip_wheel, unpack_member
    layout = layout or Layout.default()
    return unpack_member(release.path(layout), release.sha256, lambda: (
        pip_wheel(layout.downloads, release.project, release.project_version, release.wheel, release.sha256,
                  release.platform, release.python, offline), release.member), repair_command(release))


def checked(release: Release, layout: Layout | None = None) -> Path:
    """Its library as unpacked in the cache, about to be loaded: the file its unpacking recorded (size,
    then sha256, hashed once per process), else unpacked again from its wheel when that is in the cache
    and good. Downloads nothing: SetupError (one line) naming the file, why, and what to run."""
    from .bridge.build import SetupError, unpack_member, verified
    layout = layout or Layout.default()
    target = release.path(layout)

    def wheel() -> tuple[Path, str]:
        path = layout.downloads / release.wheel
        if path.is_file():
            return verified(path, release.sha256, "its wheel"), release.member
        if not target.exists():
            raise SetupError(f"{target} is not there, nor its wheel {path}: run: {repair_command(release)}")
        raise SetupError(f"its wheel {path} is not in the cache")
    return unpack_member(target, release.sha256, wheel, repair_command(release))


def repair_command(release: Release) -> str:
    return f"python3 -m rngcheck.backends.directml.releases fetch {release.label}"


def in_cache(path: Path, layout: Layout | None = None) -> Release | None:
    """The release whose library the cache holds at ``path`` (a copy elsewhere is no release's)."""
    layout = layout or Layout.default()
    try:
        resolved = path.resolve()
        return next((r for r in RELEASES if r.path(layout).resolve() == resolved), None)
    except OSError:
        return None


def of_build(build: DirectMLBuild) -> Release:
    """The table's row of a torch-directml build of bridge/chain.py."""
    return next(r for r in RELEASES if r.torch and r.project_version == build.version)


def selected(route: str | None = None, newest: int | None = None, only: list[str] | None = None) -> list[Release]:
    """Releases in version order: of one route, the newest N of each route, or the versions named."""
    chosen = [r for r in RELEASES if route in (None, r.route)]
    if only:
        unknown = [v for v in only if not any(v in (r.directml, r.label) for r in chosen)]
        if unknown:
            raise SystemExit(f"directml releases: no release {unknown[0]!r} (known: "
                             f"{', '.join(r.label for r in chosen)})")
        chosen = [r for r in chosen if r.directml in only or r.label in only]
    if newest is not None:
        if newest < 1:      # [-0:] would be every release
            raise ValueError(f"newest must be 1 or more, not {newest}")
        chosen = [r for group in (WINDOWS, LINUX) for r in [x for x in chosen if x.route == group][-newest:]]
    return chosen


def at_least_one(text: str) -> int:
    """--newest N: a whole number of 1 or more (0 or -1 would slice every release, or all but one)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number}: N must be 1 or more (the newest N releases of each route)")
    return number


def main(argv=None) -> int:
    from .bridge.build import SetupError
    parser = argparse.ArgumentParser(prog="python3 -m rngcheck.backends.directml.releases",
                                     description="DirectML releases on PyPI that rngcheck runs.")
    parser.add_argument("action", choices=("list", "fetch", "specs"))
    parser.add_argument("versions", nargs="*", help="DirectML versions or labels (default: every release)")
    parser.add_argument("--route", choices=(WINDOWS, LINUX))
    parser.add_argument("--newest", type=at_least_one, metavar="N", help="only the newest N releases of each route")
    parser.add_argument("--offline", action="store_true", help="never download: use the cache's wheels only")
    args = parser.parse_args(argv)
    chosen = selected(args.route, args.newest, args.versions)
    if args.action == "fetch":
        for release in chosen:
            try:
                path = ensure(release, offline=args.offline)
            except SetupError as error:
                print(f"directml releases: {release.label}: {error}", file=sys.stderr)
                return 1
            print(f"{release.label}\t{path}")
        return 0
    for release in chosen:
        if args.action == "specs":      # label, feature level, spec, known failure: one tab-separated line each
            print(f"{release.label}\t{release.feature_level}\t{release.spec}\t{release.known}")
        else:
            print(f"{release.label:22} DirectML {release.directml:7} FL {release.feature_level:4} "
                  f"{release.project}=={release.project_version} ({release.wheel})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
