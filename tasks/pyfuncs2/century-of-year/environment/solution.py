def century_of_year(year):
    """Return the century that the year `year` (a positive integer) belongs to. Centuries
    start at years ending in 01: the years 1901 through 2000 are the 20th century, so 2000
    gives 20 and 2001 gives 21.
    """
    raise NotImplementedError
