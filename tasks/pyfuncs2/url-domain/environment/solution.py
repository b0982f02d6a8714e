def url_domain(url):
    """The string `url` starts with `http://` or `https://`. Return the host name after it:
    everything up to the next `/`, `:` or `?`, or the end.
    """
    raise NotImplementedError
