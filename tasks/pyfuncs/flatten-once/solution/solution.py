def flatten(lists):
    return [x for sub in lists for x in sub]
