def sign_string(n):
    return f"+{n}" if n > 0 else str(n)
