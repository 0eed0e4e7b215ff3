"""What the sessions app's management commands share: the progress bar, and the
arguments of the commands that move a project's archive."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


def progress_bar(console: Console) -> Progress:
    """A bar with a description, done/total and the time left; gone once finished."""
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def archive_arguments(parser, *, archive: str, team: str, project: str) -> None:
    """The archive file and the TEAM/PROJECT it comes from or goes to."""
    parser.add_argument("archive", type=Path, help=archive)
    parser.add_argument("--team", required=True, help=team)
    parser.add_argument("--project", required=True, help=project)
