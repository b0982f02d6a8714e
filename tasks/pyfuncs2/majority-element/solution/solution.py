def majority_element(xs):
    for x in xs:
        if xs.count(x) * 2 > len(xs):
            return x
    return None
