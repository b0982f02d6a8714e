def luhn_valid(number):
    """Return True if the string of digits `number` (spaces allowed between digits and
    ignored) passes the Luhn check: from the rightmost digit, double every second digit,
    subtract 9 from any doubled value above 9, and the sum of all digits must be divisible
    by 10. A string with fewer than two digits or any character other than digits and spaces
    gives False.
    """
    raise NotImplementedError
