def count_dates_in_year(dates, year):
    return sum(1 for d in dates if int(d[:4]) == year)
