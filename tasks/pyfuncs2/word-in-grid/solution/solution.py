def word_in_grid(grid, word):
    rows = len(grid)
    cols = len(grid[0]) if rows else 0

    def walk(r, c, i, used):
        if grid[r][c] != word[i]:
            return False
        if i == len(word) - 1:
            return True
        used.add((r, c))
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < rows and 0 <= cc < cols and (rr, cc) not in used and walk(rr, cc, i + 1, used):
                return True
        used.discard((r, c))
        return False

    return any(walk(r, c, 0, set()) for r in range(rows) for c in range(cols))
