"""The half of the peer script that needs torch and a GPU: device facts, the
cold timer's readings, the fp32 reference and the SDPA backends. Imported only
after the command line has been checked.
"""
