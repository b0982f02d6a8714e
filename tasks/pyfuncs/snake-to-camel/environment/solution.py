def snake_to_camel(name):
    """Convert a snake_case name to camelCase: remove the underscores and upper-case the letter
    after each one; the first word stays lower case. Repeated, leading or trailing
    underscores are dropped.
    """
    raise NotImplementedError
