def camel_to_snake(name):
    """Convert a camelCase or PascalCase name to snake_case in lower case. A run of capitals is
    one word, so 'parseHTTPResponse' becomes 'parse_http_response' and 'HTMLParser' becomes
    'html_parser'.
    """
    raise NotImplementedError
