def spreadsheet_column(n):
    """Return the spreadsheet column name of the positive column number `n`: 1 is `A`, 26 is
    `Z`, 27 is `AA`, 28 is `AB`, 702 is `ZZ`, 703 is `AAA`.
    """
    raise NotImplementedError
