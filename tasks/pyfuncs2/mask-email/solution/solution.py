def mask_email(email):
    local, domain = email.split("@")
    if len(local) > 2:
        local = local[0] + "*" * (len(local) - 2) + local[-1]
    return local + "@" + domain
