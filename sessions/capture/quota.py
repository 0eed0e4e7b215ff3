"""A session's standing against its project's quota: ok, warning (past the warning share),
or compacted (this capture made room first). The project sets the shares and whether a
capture past the compaction share compacts the session or is refused past the quota."""

from __future__ import annotations

from dataclasses import dataclass

from teams.models import Project, QuotaAction

OK, WARNING, COMPACTED = "ok", "warning", "compacted"
HEADER = "X-Quota-Warning"


def share_bytes(project: Project, percent: int) -> int:
    return project.session_quota_bytes * percent // 100


def wants_compaction(project: Project, session_bytes: int) -> bool:
    return project.quota_action == QuotaAction.COMPACT and session_bytes >= share_bytes(
        project, project.quota_compact_percent
    )


def compaction_goal(project: Project, session_bytes: int) -> int:
    """Bytes to free to be back under the warning share."""
    return session_bytes - share_bytes(project, project.quota_warn_percent) + 1


@dataclass(frozen=True)
class QuotaState:
    used_bytes: int
    quota_bytes: int
    warn_percent: int
    bytes_freed: int = 0

    @property
    def percent(self) -> float:
        return round(self.used_bytes * 100 / self.quota_bytes, 1) if self.quota_bytes else 0.0

    @property
    def warning(self) -> bool:
        return self.used_bytes * 100 >= self.quota_bytes * self.warn_percent

    @property
    def state(self) -> str:
        if self.bytes_freed:
            return COMPACTED
        return WARNING if self.warning else OK

    def as_dict(self) -> dict:
        return {
            "used_bytes": self.used_bytes,
            "quota_bytes": self.quota_bytes,
            "percent": self.percent,
            "state": self.state,
            "bytes_freed": self.bytes_freed,
        }

    def header(self) -> str | None:
        """The ``X-Quota-Warning`` value, when the session is past the warning share."""
        if not self.warning:
            return None
        return f"{int(self.percent)}% of {self.quota_bytes:,} bytes"


def quota_state(project: Project, used_bytes: int, *, bytes_freed: int = 0) -> QuotaState:
    return QuotaState(
        used_bytes=used_bytes,
        quota_bytes=project.session_quota_bytes,
        warn_percent=project.quota_warn_percent,
        bytes_freed=bytes_freed,
    )


def worst_header(states: list[QuotaState]) -> str | None:
    """One header for a response about several sessions: the fullest one's."""
    warned = [s for s in states if s.warning]
    return max(warned, key=lambda s: s.percent).header() if warned else None
