from collections import deque


def shortest_path_grid(grid):
    rows, cols = len(grid), len(grid[0])
    if grid[0][0] == "#" or grid[-1][-1] == "#":
        return -1
    seen = {(0, 0)}
    queue = deque([(0, 0, 0)])
    while queue:
        i, j, d = queue.popleft()
        if (i, j) == (rows - 1, cols - 1):
            return d
        for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
            if 0 <= a < rows and 0 <= b < cols and grid[a][b] == "." and (a, b) not in seen:
                seen.add((a, b))
                queue.append((a, b, d + 1))
    return -1
