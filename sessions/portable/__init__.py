"""A whole project in one archive and back (``manage.py export_project`` /
``import_project``): its settings, sessions with their messages and attachments (memories),
and the project-level sections other apps register (``sections.py``). See
docs/operations.md, "Backups"."""
