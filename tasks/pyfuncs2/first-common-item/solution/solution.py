def first_common_item(a, b):
    for x in a:
        if x in b:
            return x
    return None
