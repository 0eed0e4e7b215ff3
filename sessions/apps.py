from django.apps import AppConfig


class AgentSessionsConfig(AppConfig):
    # django.contrib.sessions owns the label "sessions"; ours must differ (ARCHITECTURE.md).
    name = "sessions"
    label = "agent_sessions"
    verbose_name = "Agent sessions"
