"""The peer script's parts. Those that need torch and a GPU (device facts, the
cold timer's readings, the fp32 reference, the SDPA backends) import it only
when called, after the command line has been checked; the stop rule, the tree
stamp, the raw samples and the calls to the tool run without it (and are
tested on CI, tests/peers/).
"""
