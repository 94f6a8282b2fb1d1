"""The examples in the package's docstrings run and print what they say."""

import doctest

import pytest

import recur
import recur._linrec
import recur.dpcm
import recur.linalg
import recur.signal


@pytest.mark.parametrize("module", [recur._linrec, recur.signal, recur.linalg, recur.dpcm], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
