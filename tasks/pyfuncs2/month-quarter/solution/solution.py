def month_quarter(m):
    return (m - 1) // 3 + 1
