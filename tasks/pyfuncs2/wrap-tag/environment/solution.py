def wrap_tag(s, tag):
    """Return the text `s` wrapped in the HTML tag named `tag`: `'<' + tag + '>'`, then `s`,
    then `'</' + tag + '>'` (so `'hi'`, `'b'` gives `'<b>hi</b>'`).
    """
    raise NotImplementedError
