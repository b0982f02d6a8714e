"""The command line: parses flags, calls one core function, renders. No logic lives here."""
