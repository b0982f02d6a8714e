def match_records(records, query):
    """Return, in order, the records (dicts) of `records` that agree with every entry of the
    dict `query`: for each key of `query` the record has that key with an equal value. An
    empty query matches every record.
    """
    raise NotImplementedError
