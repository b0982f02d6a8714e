def join_with_dash(words):
    return "-".join(words)
