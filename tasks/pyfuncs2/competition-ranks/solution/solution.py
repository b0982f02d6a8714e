def competition_ranks(scores):
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out = []
    for i, (name, score) in enumerate(ordered):
        if i > 0 and score == ordered[i - 1][1]:
            rank = out[-1][0]
        else:
            rank = i + 1
        out.append([rank, name])
    return out
