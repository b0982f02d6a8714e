def greet(name):
    """Return the greeting `Hello, <name>!` for the string `name`.
    """
    raise NotImplementedError
