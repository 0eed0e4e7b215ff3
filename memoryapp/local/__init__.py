"""The whole product on one machine: the embedded PostgreSQL and Redis (``embedded``) and the
supervisor behind ``make run`` (``serve``). Not used when DATABASE_URL and REDIS_URL point at
servers of their own (docker compose, production)."""
