def three_way_partition(xs, pivot):
    return [x for x in xs if x < pivot] + [x for x in xs if x == pivot] + [x for x in xs if x > pivot]
