def password_strength(pw):
    broken = []
    if len(pw) < 8:
        broken.append("length")
    if not any(c.isupper() for c in pw):
        broken.append("upper")
    if not any(c.islower() for c in pw):
        broken.append("lower")
    if not any(c.isdigit() for c in pw):
        broken.append("digit")
    if " " in pw:
        broken.append("space")
    return broken
