"""What keeps search fast on big teams without changing its results: big teams' own indexes
(``team_indexes``), warming PostgreSQL's buffers after a restart (``warm``), and running the
keyword side beside the vector side on a second connection (``parallel``)."""
