def find_sublist(xs, sub):
    for i in range(len(xs) - len(sub) + 1):
        if xs[i:i + len(sub)] == sub:
            return i
    return -1
