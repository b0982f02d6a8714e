def count_dates_in_year(dates, year):
    """`dates` is a list of dates written `'YYYY-MM-DD'`. Return how many of them fall in
    the year `year` (an integer).
    """
    raise NotImplementedError
