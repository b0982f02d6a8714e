def binary_gap(n):
    bits = bin(n)[2:].strip("0")
    return max((len(run) for run in bits.split("1")), default=0)
