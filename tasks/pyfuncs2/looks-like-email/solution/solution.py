def looks_like_email(s):
    if s.count("@") != 1:
        return False
    name, domain = s.split("@")
    return len(name) > 0 and len(domain) > 0
