def parse_percent(text):
    """The string `text` is a number followed by a `'%'` sign, possibly with spaces around
    it or between the number and the sign (`' 45 %'`). Return the number divided by 100 as a
    float (`'45%'` gives 0.45, `'-2.5%'` gives -0.025). Return `None` if there is no
    trailing `'%'` or the part before it is not a number.
    """
    raise NotImplementedError
