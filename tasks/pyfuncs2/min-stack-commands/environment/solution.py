def min_stack_commands(commands):
    """Run the list of commands on an empty stack of integers: `'push N'` pushes N, `'pop'`
    removes the top (nothing happens when empty), `'min'` reads the smallest number on the
    stack. Return the list of what each `'min'` read, in order, with `None` for a `'min'` on
    an empty stack.
    """
    raise NotImplementedError
