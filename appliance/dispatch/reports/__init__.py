"""The day accounted (issue 28 item 4): orders, cash and courier work for a date range."""
