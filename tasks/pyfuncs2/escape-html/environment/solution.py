def escape_html(s):
    """Return the string `s` with the HTML special characters replaced: `&` by `&amp;`, `<`
    by `&lt;`, `>` by `&gt;` and `"` by `&quot;`. An `&` already in `s` is always escaped,
    even if it starts an entity (so `'&lt;'` becomes `'&amp;lt;'`).
    """
    raise NotImplementedError
