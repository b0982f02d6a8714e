def fewest_jumps(jumps):
    moves = 0
    reach = 0
    frontier = 0
    for i in range(len(jumps) - 1):
        reach = max(reach, i + jumps[i])
        if i == frontier:
            moves += 1
            frontier = reach
    return moves
