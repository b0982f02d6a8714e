def min_stack_commands(commands):
    stack = []
    out = []
    for cmd in commands:
        if cmd.startswith("push "):
            stack.append(int(cmd[5:]))
        elif cmd == "pop":
            if stack:
                stack.pop()
        elif cmd == "min":
            out.append(min(stack) if stack else None)
    return out
