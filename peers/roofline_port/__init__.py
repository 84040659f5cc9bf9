"""Pure-Python ports of the parts of roofline/ and app/ that a peer report needs.

Each module names the C++ file it follows. They import nothing beyond the standard
library, so they run (and are unit-tested, tests/peers/) on machines without torch
or a GPU. A formula changed in the C++ must change here too: the unit tests compare
these figures with the built tool's `model` output and run `audit` on a report
assembled here, so a drift fails CI.
"""
