def markdown_heading_level(line):
    """Return the level of the Markdown heading on the line `line`: the number of `'#'`
    characters it starts with, which must be 1 to 6 and be followed by a space (`'## Title'`
    gives 2). Return 0 if the line is not a heading (no `#`, seven or more, or no space
    after them).
    """
    raise NotImplementedError
