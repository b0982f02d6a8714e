def table_to_records(table):
    """`table` is a list of lists whose first list is the header (strings). Return one dict
    per later row, mapping each header name to the value in the same column; an empty table
    or one with only a header gives an empty list.
    """
    raise NotImplementedError
