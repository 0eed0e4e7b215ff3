"""What every app uses and that imports no app: the JSON input and error toolkit, the
error codes, OpenAPI helpers, environment readers and the broker's quick connection."""
