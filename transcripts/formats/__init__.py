"""One module per transcript format, each ending with its ``FORMAT`` declaration
(``transcripts.format``); ``transcripts.registry`` finds them here."""
