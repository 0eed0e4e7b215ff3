"""What the redaction-path tests send: a GitHub token and an e-mail address, and what a
project that redacts both stores instead."""

from __future__ import annotations

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
EMAIL = "ana.lima@example.com"
SAID = f"Deploy with {TOKEN}, ask {EMAIL}"
REDACTED = "Deploy with [REDACTED:github_token], ask [REDACTED:email]"
