def century_of_year(year):
    return (year + 99) // 100
