def swap_pair(pair):
    return [pair[1], pair[0]]
