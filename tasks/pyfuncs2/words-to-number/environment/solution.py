def words_to_number(text):
    """Parse the English number words in `text` (lower case, words separated by spaces or
    hyphens) into an int from 0 to 999999999: `zero` ... `nineteen`, the tens `twenty` ...
    `ninety`, and the multipliers `hundred`, `thousand`, `million`; the word `and` is
    ignored (`'two hundred and forty-five'` gives 245, `'one million two thousand'` gives
    1002000). Return `None` if any other word appears or there is no number word.
    """
    raise NotImplementedError
