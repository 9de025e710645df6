"""``rngcheck nist``'s command line: its options and sts-2.1.2's parameters, without numpy or
scipy, so that building the command line stays light (the work is in nist_sts, which the
command line imports when the command runs)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RngcheckError

DEFAULT_LENGTH = 10 ** 6
DEFAULT_BACKEND_SEQUENCES = 100


@dataclass(frozen=True)
class Parameters:
    """sts-2.1.2's adjustable parameters, with its defaults."""
    block_frequency: int = 128      # M of 2.2
    template: int = 9               # m of 2.7 and 2.8
    approximate_entropy: int = 10   # m of 2.12
    serial: int = 16                # m of 2.11
    linear_complexity: int = 500    # M of 2.10

    def check(self, n: int) -> None:
        if self.block_frequency < 1:
            raise RngcheckError(f"--block-frequency M = {self.block_frequency} must be at least 1")
        if not 2 <= self.template <= 16:
            raise RngcheckError(f"--template m = {self.template} must be between 2 and 16")
        if not 1 <= self.approximate_entropy <= 24:
            raise RngcheckError(f"--approximate-entropy m = {self.approximate_entropy} must be between 1 and 24")
        if not 3 <= self.serial <= 24:
            raise RngcheckError(f"--serial m = {self.serial} must be between 3 and 24")
        if self.linear_complexity < 1:
            raise RngcheckError(f"--linear-complexity M = {self.linear_complexity} must be at least 1")



def add_arguments(parser) -> None:
    parser.add_argument("file", nargs="?", metavar="FILE", help="bit file ('-' for stdin)")
    parser.add_argument("--backend", metavar="NAME", help="draw the sequences from this backend's operator instead")
    parser.add_argument("--seed", type=int, default=None, help="with --backend: the stream's key (default 1)")
    parser.add_argument("--format", choices=["auto", "ascii", "binary"], default="auto",
                        help="ascii: '0'/'1' characters (NIST's data files); binary: bytes, most significant "
                        "bit first; auto (default): ascii if the file starts with (90%%) 0, 1 and whitespace")
    parser.add_argument("--length", type=int, default=DEFAULT_LENGTH, metavar="N",
                        help=f"bits per sequence (default {DEFAULT_LENGTH})")
    parser.add_argument("--sequences", type=int, default=None, metavar="N",
                        help="number of sequences (default: all the file holds; "
                        f"{DEFAULT_BACKEND_SEQUENCES} with --backend)")
    defaults = Parameters()
    parser.add_argument("--block-frequency", type=int, default=defaults.block_frequency, metavar="M",
                        help=f"block length of the block frequency test (default {defaults.block_frequency})")
    parser.add_argument("--template", type=int, default=defaults.template, metavar="m",
                        help=f"template length of the template tests (default {defaults.template})")
    parser.add_argument("--approximate-entropy", type=int, default=defaults.approximate_entropy, metavar="m",
                        help=f"block length of the approximate entropy test (default {defaults.approximate_entropy})")
    parser.add_argument("--serial", type=int, default=defaults.serial, metavar="m",
                        help=f"block length of the serial test (default {defaults.serial})")
    parser.add_argument("--linear-complexity", type=int, default=defaults.linear_complexity, metavar="M",
                        help=f"block length of the linear complexity test (default {defaults.linear_complexity})")
    parser.add_argument("--json", metavar="FILE", help="write the result document here ('-' for stdout)")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes (default: one per core this process may use)")
    parser.add_argument("--quiet", action="store_true", help="print only the verdict line")
