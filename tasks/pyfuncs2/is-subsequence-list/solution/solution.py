def is_subsequence_list(sub, xs):
    i = 0
    for x in xs:
        if i < len(sub) and sub[i] == x:
            i += 1
    return i == len(sub)
