def url_domain(url):
    rest = url.split("://", 1)[1]
    for i, c in enumerate(rest):
        if c in "/:?":
            return rest[:i]
    return rest
