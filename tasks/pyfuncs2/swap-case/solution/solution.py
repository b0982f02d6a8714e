def swap_case(s):
    return s.swapcase()
