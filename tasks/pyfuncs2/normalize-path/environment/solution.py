def normalize_path(path):
    """Normalize the Unix path `path`: collapse repeated slashes, drop `.` parts, and let
    `..` remove the part before it. An absolute path (starting with `/`) stays absolute and
    `..` at its root is dropped; a relative path keeps `..` parts it cannot cancel. No
    trailing slash; an empty result is `'/'` for an absolute path and `'.'` for a relative
    one.
    """
    raise NotImplementedError
