def nondecreasing_runs(xs):
    runs = []
    for x in xs:
        if runs and x >= runs[-1][-1]:
            runs[-1].append(x)
        else:
            runs.append([x])
    return runs
