def robot_walk(grid, start, moves):
    step = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
    r, c = start
    for m in moves:
        dr, dc = step[m]
        rr, cc = r + dr, c + dc
        if 0 <= rr < len(grid) and 0 <= cc < len(grid[0]) and grid[rr][cc] != "#":
            r, c = rr, cc
    return [r, c]
