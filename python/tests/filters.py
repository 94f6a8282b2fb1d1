"""Filters that scipy.signal designs, shared by the filter tests: every
family (butter, cheby1, cheby2, ellip, bessel) of orders 1-8, lowpass,
highpass and bandpass, in (b, a) and sos form."""

import itertools

import scipy.signal as ss

FAMILIES = {
    "butter": lambda n, wn, btype, output: ss.butter(n, wn, btype, output=output),
    "cheby1": lambda n, wn, btype, output: ss.cheby1(n, 1, wn, btype, output=output),
    "cheby2": lambda n, wn, btype, output: ss.cheby2(n, 40, wn, btype, output=output),
    "ellip": lambda n, wn, btype, output: ss.ellip(n, 1, 40, wn, btype, output=output),
    "bessel": lambda n, wn, btype, output: ss.bessel(n, wn, btype, output=output),
}
BANDS = {"lowpass": 0.2, "highpass": 0.3, "bandpass": [0.2, 0.4]}
DESIGNS = [
    pytest_param
    for pytest_param in itertools.product(sorted(FAMILIES), range(1, 9), sorted(BANDS))
]


def design(family, order, band, output="ba"):
    return FAMILIES[family](order, BANDS[band], band, output)


def design_id(p):
    return "-".join(str(v) for v in p)
