"""Demšar (2006, JMLR 7, "Statistical comparisons of classifiers over multiple data sets"),
Table 6: the worked example of the rank statistics over many datasets, shared by the tests of
the statistics on arrays (tests/stats) and of their labelled tables (tests/reporting)."""

from __future__ import annotations

import pandas as pd

# Demšar (2006), Table 6: AUC of C4.5 with and without cut-off (cf) and m tuning on 14 data sets.
# On "voting" both cf columns print 0.975, yet the paper ranks C4.5+cf 2nd and C4.5+m+cf 3rd
# (their values differ beyond the three decimals printed): 0.97501 keeps the paper's ranks.
DEMSAR_TABLE6 = pd.DataFrame(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.97501, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ],
    index=[
        "adult (sample)",
        "breast cancer",
        "breast cancer wisconsin",
        "cmc",
        "ionosphere",
        "iris",
        "liver disorders",
        "lung cancer",
        "lymphography",
        "mushroom",
        "primary tumor",
        "rheum",
        "voting",
        "wine",
    ],
    columns=["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"],
)
