ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve',
        'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen']
TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety']


def _below_100(n):
    if n < 20:
        return ONES[n]
    tens, ones = divmod(n, 10)
    return TENS[tens] + ('-' + ONES[ones] if ones else '')


def to_words(n):
    hundreds, rest = divmod(n, 100)
    if not hundreds:
        return _below_100(rest)
    words = ONES[hundreds] + ' hundred'
    return words + (' ' + _below_100(rest) if rest else '')
