def email_domain(email):
    if "@" not in email:
        return ""
    return email.rsplit("@", 1)[1].lower()
