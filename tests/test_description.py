"""Each description rule is refused by the reference, with a typed error naming the rule."""

import numpy as np
import pytest

from rngcheck import Rejected, reference
from rngcheck.description import RULES

S6 = np.zeros(6, dtype=np.uint32)
S4D = np.zeros((1, 1, 1, 6), dtype=np.uint32)


def call(state=S6, sizes=(2, 4), strides=None, buffer=None, output_state=True, feature_level=(4, 0)):
    buffer = np.zeros(64, dtype=np.uint32) if buffer is None else buffer
    return reference.random_generator(state, sizes, strides, buffer, output_state=output_state,
                                      feature_level=feature_level)


RULE_CASES = [
    ("feature-level", dict(feature_level=(2, 0), state=S4D, sizes=(1, 1, 2, 4))),
    ("data-type", dict(state=S6.astype(np.int32))),
    ("data-type", dict(buffer=np.zeros(64, dtype=np.float32))),
    ("rank", dict(feature_level=(3, 0), state=S4D)),
    ("rank", dict(feature_level=(3, 0), sizes=(1, 1, 2, 4))),
    ("rank", dict(sizes=(1,) * 9)),
    ("rank", dict(sizes=())),
    ("state-sizes", dict(state=np.zeros((6, 1), dtype=np.uint32))),
    ("state-sizes", dict(state=np.zeros((2, 3), dtype=np.uint32))),
    ("state-sizes", dict(feature_level=(3, 0), state=np.zeros((1, 1, 6, 1), dtype=np.uint32), sizes=(1, 1, 2, 4))),
    ("state-match", dict(output_state=(1, 6))),
    ("size-zero", dict(sizes=(2, 0))),
    ("element-count", dict(sizes=(1 << 16, 1 << 16))),
    ("stride-count", dict(strides=(4,))),
    ("stride-negative", dict(strides=(-4, 1))),
    ("buffer-size", dict(sizes=(2, 3), strides=(5, 1), buffer=np.zeros(7, dtype=np.uint32))),
]


@pytest.mark.parametrize("rule, kwargs", RULE_CASES)
def test_rule_is_refused_and_named(rule, kwargs):
    with pytest.raises(Rejected) as raised:
        call(**kwargs)
    assert raised.value.rule == rule
    assert rule in str(raised.value)


@pytest.mark.parametrize("kwargs", [
    dict(feature_level=(3, 0), state=S4D, sizes=(1, 1, 2, 4)),
    dict(feature_level=(4, 0), state=np.zeros((1, 1, 1, 1, 1, 1, 1, 6), dtype=np.uint32), sizes=(1,) * 7 + (3,)),
    dict(feature_level=(5, 1), state=np.zeros((1, 6), dtype=np.uint32), sizes=(5,)),
    dict(sizes=(2, 3), strides=(5, 1), buffer=np.zeros(8, dtype=np.uint32)),
    dict(output_state=False),
])
def test_valid_descriptions_are_accepted(kwargs):
    call(**kwargs)


def test_every_rule_has_a_case_above():
    assert {rule for rule, _ in RULE_CASES} == set(RULES)
